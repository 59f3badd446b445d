// The joint release of a Gaussian mixture's sufficient statistics: all K
// counts, sums and second moments of one EM iteration as ONE Gaussian
// mechanism with a noise scale per block (../shared/privacy-notes.md, "Joint
// sensitivity"; the proof is in docs/privacy.md).
//
// A record x in the unit ball with responsibilities g (g_k >= 0, sum 1)
// contributes c(x) = (g_k, g_k x, g_k T(x))_k, where T(x) is x x^T (full
// covariances; released as its upper triangle), x (.) x (diagonal) or ||x||^2
// (spherical). With Gaussian noise of standard deviation s_n, s_1, s_2 on the
// count, sum and second-moment coordinates, dividing each block by its scale
// turns the release into a Gaussian mechanism with unit noise whose L2
// sensitivity under replacement of one record is JointSensitivity(type, s).
//
// Thread safety: pure functions.
#ifndef DPEM_MECHANISMS_JOINT_RELEASE_H_
#define DPEM_MECHANISMS_JOINT_RELEASE_H_

#include <Eigen/Core>

#include <string>

#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Noise standard deviations of the three blocks (or their relative sizes).
struct JointNoiseScales {
  double counts = 1.0;
  double sums = 1.0;
  double second = 1.0;
};

// The L2 sensitivity of the block-normalised joint statistics (docs/privacy.md,
// Theorem 1). With a = s_1^2, b = s_2^2:
//   full, diagonal: max( 2/s_n^2 + 2/a + 2/b,  h ),
//     h = 2/a + 2/b + b/(2 a^2) if b <= 2a, else 4/a;
//   spherical: max( 2/s_n^2 + 2/a + 2/b,  4/a ), exactly.
// (For d = 1 all three types reduce to the spherical case, where h may
// overstate the exact value by up to about 6%; still a valid bound.)
// Requires all scales finite and > 0.
double JointSensitivity(CovarianceType type, const JointNoiseScales& s);

// The default split of the noise between the blocks, for d dimensions and K
// components (docs/gmm.md): the relative scales minimising the expected
// squared error of the M-step's parameters,
//   (1 + 1/K) s_n^2 + d s_1^2 + m s_2^2   (m = d^2 full, d diagonal, 1/d spherical),
// subject to JointSensitivity = 1, by a grid search over the two ratios.
// Depends only on public quantities.
JointNoiseScales DefaultJointNoiseSplit(CovarianceType type, Eigen::Index dimension,
                                        Eigen::Index components);

// The joint Gaussian mechanism: adds noise to every count, sum and second
// moment of `stats` and records ONE Gaussian release in `ledger`.
//
// With sampling == kDiscrete (the default; floating-point safe, see
// mechanisms/additive_noise.h, "Discrete noise", and docs/audits.md): the m
// statistics are divided by their block scales (split_n, split_1, split_2,
// and split_2 / sqrt(2) for the off-diagonal entries of a full second moment,
// released as the sqrt(2)-scaled upper triangle), which gives a vector of L2
// sensitivity Delta = JointSensitivity(stats.type, split); ONE grid is planned
// for it with the public Delta, noise_multiplier and m, the vector is rounded
// to the grid (clamped to 2^kDiscreteValueBits grid units) plus discrete
// Gaussian noise, and multiplied back. The ledger records the charged
// sensitivity Delta' = Delta + (9/8) g sqrt(m) and the grid's noise scale, a
// multiplier >= noise_multiplier; the noise is that of kContinuous times
// (1 + (9/8) g sqrt(m) / Delta) <= 1 + 1.125 noise_multiplier sqrt(m) / 2^20.
// Every count, sum and (normalised) second moment must stay below 2^27 times
// the noise scale to escape the clamp (e.g. N < 1.3e8 s_n sigma). Full second
// moments come back exactly symmetric. InvalidArgument if the grid cannot be
// formed (use kContinuous then).
//
// With kContinuous: sensitivity Delta and noise scale sigma =
// noise_multiplier * Delta rounded up (so the ledger's multiplier is never
// below the calibrated one). Block b's coordinates get N(0, (split_b
// sigma)^2); for full covariances the off-diagonal entries of each second
// moment get N(0, (split_2 sigma)^2 / 2), mirrored (the sqrt(2)-scaled upper
// triangle, whose norm is the Frobenius norm).
//
// Requires finite statistics, finite positive split and multiplier and a
// known sampling; on error nothing is recorded and `stats` is unchanged. The
// exact log-likelihood is set to NaN.
// What ReleaseJointStatistics would refuse for the statistics of
// `components` components in `dimension` dimensions of covariance `type`,
// checked on these public values alone, drawing nothing: the split, the
// multiplier and, for discrete noise, the grid. A fit calls it before it
// reads the data.
Status CheckJointRelease(CovarianceType type, const JointNoiseScales& split,
                         double noise_multiplier, Eigen::Index components,
                         Eigen::Index dimension, NoiseSampling sampling = NoiseSampling::kDiscrete);

Status ReleaseJointStatistics(GmmStatistics& stats, const JointNoiseScales& split,
                              double noise_multiplier, const std::string& label,
                              Generator& gen, PrivacyLedger& ledger,
                              NoiseSampling sampling = NoiseSampling::kDiscrete);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_JOINT_RELEASE_H_
