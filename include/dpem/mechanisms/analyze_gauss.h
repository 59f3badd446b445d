// The Analyze Gauss mechanism for symmetric matrices (Dwork, Talwar, Thakurta,
// Zhang, STOC 2014, Alg. 1) and its positive-definiteness post-processing, as
// park2017 Sec. 4.2 uses them for covariances (eq. 16-18).
//
// park2017 eq. 16: z ~ N(0, beta I_{d(d+1)/2}); z fills the upper triangle of
// Z (diagonal included) and is mirrored below; eq. 18: Sigma~ = Sigma + Z.
// dpem writes beta = sigma^2 with sigma = Delta * noise_multiplier (park2017
// sets sigma = sqrt(2 log(1.25/delta)) Delta / eps; the accountants derive
// (eps, delta) from the multiplier). Delta is the Frobenius sensitivity of the
// symmetric statistic (park2017 eq. 17: 2/N~_k for a covariance MLE).
//
// Why a Frobenius sensitivity is valid: the mechanism is the Gaussian mechanism
// on u(A) = vec_upper(A) in R^{d(d+1)/2} (the full matrix is a deterministic
// function of it), and ||u(A) - u(A')||_2 <= ||A - A'||_F, since the
// Frobenius norm counts each off-diagonal difference twice. So a Frobenius
// bound is an upper bound on the L2 sensitivity the mechanism needs; it is
// recorded as such.
//
// The noisy matrix may be indefinite; ProjectToEigenvalueFloor restores a
// positive definite covariance as post-processing (park2017, after eq. 18),
// which costs no privacy.
//
// Thread safety: as safe as the Generator and ledger passed in.
#ifndef DPEM_MECHANISMS_ANALYZE_GAUSS_H_
#define DPEM_MECHANISMS_ANALYZE_GAUSS_H_

#include <Eigen/Core>
#include <string_view>

#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Largest accepted |A(i,j) - A(j,i)|, relative to max |A(i,j)|, for a matrix
// to count as symmetric.
inline constexpr double kSymmetryRelativeTolerance = 1e-12;

// Checks that `matrix` is non-empty, square, finite and symmetric to within
// kSymmetryRelativeTolerance; `what` names it in the InvalidArgument message.
Status ValidateSymmetricMatrix(const Eigen::Ref<const Eigen::MatrixXd>& matrix,
                               std::string_view what);

// Analyze Gauss (DTTZ 2014; park2017 eq. 16-18): replaces the symmetric
// `value` by sym(value) + Z, Z = SampleSymmetricGaussianMatrix(d, sigma),
// sigma = spec.NoiseScale(), where sym(A) = (A + A^T)/2 removes the (at most
// kSymmetryRelativeTolerance) asymmetry so that the output is exactly
// symmetric. Requires spec.mechanism == kGaussian and spec.sensitivity an L2
// bound on the change of vec_upper(value), e.g. its Frobenius sensitivity (see
// above). Records ONE Gaussian release. With spec.sampling == kDiscrete (the
// default) the upper triangle's d(d+1)/2 coordinates are released on the
// grid of additive_noise.h ("Discrete noise") with discrete Gaussian noise
// and mirrored; the ledger records the charged sensitivity and actual noise
// scale. On error nothing is recorded and `value` is unchanged.
//
// The discrete noise is drawn in place, in fixed chunks of the upper
// triangle's coordinates (column order), each from its own stream split
// from a fork of `gen` made for this release (internal/discrete_noise.h,
// ForEachNoiseChunk), on up to `threads` threads (>= 1): the output depends
// on gen's state, never on `threads`, and each call advances gen (four
// words), so no two releases share a stream.
Status ReleaseSymmetric(Eigen::Ref<Eigen::MatrixXd> value,
                        const NoiseSpec& spec, Generator& gen,
                        PrivacyLedger& ledger, int threads = 1);

// Post-processing (park2017, after eq. 18): the Frobenius-nearest matrix whose
// eigenvalues are all >= `floor`: with sym = V diag(l) V^T
// (Eigen::SelfAdjointEigenSolver), returns V diag(max(l, floor)) V^T, made
// exactly symmetric. A matrix whose eigenvalues are all >= floor already is
// returned as (sym + sym^T)/2, i.e. unchanged when exactly symmetric. Requires
// `sym` valid for ValidateSymmetricMatrix and `floor` finite and > 0;
// NumericalError if the eigensolver fails.
StatusOr<Eigen::MatrixXd> ProjectToEigenvalueFloor(const Eigen::MatrixXd& sym,
                                                   double floor);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_ANALYZE_GAUSS_H_
