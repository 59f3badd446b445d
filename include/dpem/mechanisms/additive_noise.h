// Additive noise mechanisms: Laplace and Gaussian noise on vectors and
// matrices of statistics, recorded in a PrivacyLedger in the same call.
//
// Principle of the whole mechanisms layer: a mechanism calibrates, draws its
// noise from the injected Generator, adds it AND records the release; there is
// no way to obtain noise that is not in the ledger. A call that fails records
// nothing and leaves its input unchanged.
//
// Calibration (park2016 Sec. 4.2, eq. 13 and 15; park2017 Sec. 4.2, eq. 13-15):
//   Laplace:  Y_i ~ i.i.d. Lap(b),        b = Delta_1 * noise_multiplier
//             (noise_multiplier = 1/epsilon gives the epsilon-DP Laplace
//              mechanism, Dwork and Roth 2014, Thm. 3.6);
//   Gaussian: Y_i ~ i.i.d. N(0, sigma^2), sigma = Delta_2 * noise_multiplier
//             (park2017 sets sigma^2 >= 2 log(1.25/delta) Delta_2^2 / eps^2,
//              i.e. noise_multiplier = sqrt(2 log(1.25/delta)) / eps; dpem's
//              accountants derive (eps, delta) from the multiplier instead).
// Sensitivities are for the replace-one neighbour relation (ledger.h).
//
// Discrete noise (NoiseSampling::kDiscrete, the default). Textbook
// floating-point noise leaks its input through the low-order bits of the
// output (Mironov 2012, "On significance of the least significant bits for
// differential privacy"). By default the mechanisms therefore release
//   x_i <- g (round(x_i / g) + N_i),  N_i i.i.d. on the integers,
// with N_i discrete Laplace (scale t) or discrete Gaussian (sigma = t), drawn
// exactly from the Generator's integers (random/discrete_samplers.h; Canonne,
// Kamath, Steinke 2020, Alg. 1-3). The output is an exact function of the
// integer round(x_i / g) + N_i, so its floating-point representation carries
// nothing else.
//   Granularity rule: g = 2^floor(log2(NoiseScale())) / 2^kDiscreteGridBits
//   (the largest power of two <= NoiseScale() / 2^kDiscreteGridBits): it
//   depends on the public sensitivity and multiplier only, never on the
//   values. x_i / g is clamped to +-2^kDiscreteValueBits before rounding (a
//   contraction: it cannot raise the sensitivity), so every
//   round(x_i / g) + N_i is an exactly representable integer.
//   What is computed (docs/privacy.md, "What is computed"). The values a
//   release reads are exact sums of per-block partials (engine/exact_sum.h):
//   replacing one record changes one block of at most kMaxBlockRowsOption
//   rows, whose floating-point partial is within gamma_{B+2} B C of the
//   exact one (C <= Delta, the largest contribution of one record), and
//   whose rounding to the sums' quantum q = kExactSumQuantum moves each
//   coordinate by at most q/2. Converting the exact sum to a double and (for
//   block-normalised releases) dividing it by a weight are two roundings: at
//   most g/16 per coordinate below the clamp at 2^kDiscreteValueBits g.
//   Rounding to the grid moves each coordinate by at most g/2 (x_i / g is
//   exact, g being a power of two). On both neighbours, by the triangle
//   inequality, the rounded statistic's sensitivity is at most
//     L2: Delta' = Delta (1 + kComputedSumMargin) + (q' + kRoundingChargeFactor g) sqrt(m),
//     L1: Delta' = Delta (1 + kComputedSumMargin) + (q' + kRoundingChargeFactor g) m,
//   with q' the quantum in the release's coordinates and
//   kRoundingChargeFactor = 2 (1/2 + 1/8) = 5/4 (g/2 of rounding and g/16
//   of conversion per side, with slack).
//   The noise scale in grid units is t = ceil(noise_multiplier Delta' / g),
//   so the recorded Release{mechanism, Delta', t g} has a noise multiplier
//   >= the requested one: every accountant's result is unchanged, and the
//   noise grows by the factor (1 + charge/Delta) <= 1 + 2^-19 + 1.25 z
//   sqrt(m) / 2^20 (L2; m for L1), e.g. 4e-4 for z = 10 and the 1275
//   coordinates of a 50 x 50 covariance.
//   Accounting (docs/accounting.md, "Discrete noise"): every Release records
//   its sampling, and the accountants read it. A discrete Gaussian with
//   sigma = z Delta' on an integer statistic of L2 sensitivity Delta' has
//   the continuous Gaussian's Renyi / zCDP curve alpha / (2 z^2) (CKS 2020,
//   Thm. 14) and mCDP (its privacy loss is sub-Gaussian, CKS Cor. 9), so the
//   RDP (default), zCDP, moments and mCDP accountants take it as they take
//   the continuous one; the (eps, delta)-composition accountants (linear,
//   advanced, kov) and one-shot calibrations take each discrete Gaussian
//   release at the eps of its Renyi curve (SingleGaussianEpsilon), never at
//   the continuous Gaussian's exact profile, which is not proven for it. The
//   discrete Laplace with t = z Delta'_1 is pure (1/z)-DP; its Renyi
//   divergence exceeds the continuous Laplace's, so the RDP and moments
//   accountants take it at the bound of any pure-DP mechanism (PureDpRdp).
// NoiseSampling::kContinuous keeps the fast floating-point samplers of
// samplers.h (e.g. to reproduce earlier results exactly).
//
// Thread safety: as safe as the Generator and ledger passed in.
#ifndef DPEM_MECHANISMS_ADDITIVE_NOISE_H_
#define DPEM_MECHANISMS_ADDITIVE_NOISE_H_

#include <Eigen/Core>
#include <string>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// How the noise of a release is sampled (see "Discrete noise" above):
// NoiseSampling, declared in dpem/accounting/ledger.h.

// The grid is 2^-kDiscreteGridBits of the noise scale (rounded down to a power
// of two): noise scales in grid units lie in [2^20, 2^21].
inline constexpr int kDiscreteGridBits = 20;
// Values are clamped to at most 2^kDiscreteValueBits grid units in magnitude.
inline constexpr int kDiscreteValueBits = 48;
// Sensitivity charge per coordinate (L1) or per sqrt(coordinate) (L2), in
// units of the granularity g: 2 (1/2 + 1/8) (see "What is computed").
inline constexpr double kRoundingChargeFactor = 1.25;
// Relative sensitivity charge for the floating-point error of the one block
// partial that differs between neighbours: 2^-19 >= 2 (gamma_{B+2} B +
// gamma_{d+K+8}) for blocks of B <= 2^16 rows and d + K <= 2^19, gamma_n =
// n 2^-53 / (1 - n 2^-53) (Higham 2002, Lemma 3.1 and Sec. 3.5: any order
// of summation of B products, any blocking or FMA).
inline constexpr double kComputedSumMargin = 1.0 / 524288.0;  // 2^-19

// What to release and how much noise to add.
struct NoiseSpec {
  MechanismKind mechanism = MechanismKind::kGaussian;
  // Sensitivity of the WHOLE released quantity under replace-one, in the
  // mechanism's norm: L1 for Laplace, L2 (Frobenius for matrices) for
  // Gaussian.
  double sensitivity = 0.0;
  // Noise scale per unit of sensitivity (1/epsilon for epsilon-DP Laplace).
  double noise_multiplier = 0.0;
  // What is released, e.g. "iteration 3 / means"; copied into the ledger.
  std::string label;
  // Discrete (default) or continuous noise. With kDiscrete the ledger
  // records the charged sensitivity Delta' and noise scale t g, not
  // `sensitivity` and NoiseScale() (see "Discrete noise" above).
  NoiseSampling sampling = NoiseSampling::kDiscrete;

  // Laplace scale b or Gaussian standard deviation sigma of every coordinate's
  // noise: sensitivity * noise_multiplier (park2016 eq. 13/15).
  double NoiseScale() const { return sensitivity * noise_multiplier; }
};

// Checks `spec`: a known mechanism and sampling, finite sensitivity > 0, finite
// noise_multiplier > 0, and a finite NoiseScale() > 0 (the product can
// overflow or underflow). InvalidArgument otherwise.
Status ValidateNoiseSpec(const NoiseSpec& spec);

// What ReleaseVector, ReleaseMatrix or ReleaseSymmetric would refuse for a
// release of `coordinates` values by `spec`, checked on these public values
// alone and drawing nothing: ValidateNoiseSpec, and for discrete noise that
// its grid can be formed. A fit calls it before it reads the data, so that
// such a release fails there rather than after a pass. Requires
// coordinates >= 1.
Status CheckRelease(const NoiseSpec& spec, Eigen::Index coordinates);

// Adds i.i.d. Laplace(0, b) (spec.mechanism == kLaplace) or N(0, sigma^2)
// (kGaussian) noise, scale spec.NoiseScale(), to every coordinate of `value`
// in place, and records ONE Release{mechanism, sensitivity, NoiseScale(),
// label} in `ledger` (park2016 eq. 13, 15; park2017 eq. 13-15); with
// spec.sampling == kDiscrete (the default), their discrete counterparts on the
// grid described above, recording the charged sensitivity and the actual
// noise scale (InvalidArgument if the grid cannot be formed). `value` must
// be non-empty and finite. On error nothing is recorded and `value` is
// unchanged; a validation error also draws nothing from `gen`.
Status ReleaseVector(Eigen::Ref<Eigen::VectorXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger);

// As ReleaseVector, for every entry of a matrix released as ONE mechanism
// (e.g. the K x d block of weighted sums of all components): spec.sensitivity
// must bound the change of the whole block (L1 over all entries for Laplace,
// Frobenius for Gaussian). Same calibration, recording and error behaviour.
Status ReleaseMatrix(Eigen::Ref<Eigen::MatrixXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_ADDITIVE_NOISE_H_
