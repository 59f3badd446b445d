// park2016's one-sided noise mechanisms for variances and covariances. They
// are NOT differentially private and are kept only to reproduce the paper.
//
// Why they are unsound (../shared/privacy-notes.md, "Mechanisms whose output
// support depends on the data"): both add noise with one-sided support.
//  - Gamma: sigma~^2 = sigma^2 + Y with Y >= 0, so the output is never below
//    the true value. For neighbours with sigma^2(D) < sigma^2(D'), an output
//    in [sigma^2(D), sigma^2(D')) has positive density under D and zero under
//    D': the privacy loss is infinite there, for every epsilon.
//  - Wishart: Sigma~ = Sigma + Z Z^T is supported on {S : S - Sigma positive
//    definite}, which differs between neighbours in the same way.
// park2016's derivations bound the density ratio only where both densities
// are positive. Sound replacements: Laplace/Gaussian noise then a floor
// (additive_noise.h), and Analyze Gauss then ProjectToEigenvalueFloor
// (analyze_gauss.h).
//
// Ledger accounting of these releases is the PAPER'S CLAIM, NOT A GUARANTEE:
// each is recorded as a Laplace release with the paper's epsilon (sensitivity
// Delta, noise_scale Delta / epsilon, so NoiseMultiplier() = 1/epsilon) and a
// label starting with kUnsafeReleaseLabelPrefix. Any accountant output over a
// ledger for which LedgerHasUnsafeRelease() is true is void; callers (the GMM
// fit) must mark the whole guarantee as not holding.
//
// Both refuse with FailedPrecondition unless `allow_unsafe` is true.
#ifndef DPEM_MECHANISMS_UNSAFE_PAPER_MECHANISMS_H_
#define DPEM_MECHANISMS_UNSAFE_PAPER_MECHANISMS_H_

#include <Eigen/Core>
#include <string>
#include <string_view>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Every ledger label written by this file starts with this prefix.
inline constexpr std::string_view kUnsafeReleaseLabelPrefix =
    "UNSAFE park2016, not DP: ";

// True if `release` was recorded by an unsafe paper mechanism (its label
// starts with kUnsafeReleaseLabelPrefix).
bool IsUnsafeRelease(const Release& release);
// True if any release in `ledger` IsUnsafeRelease: its accounting is void.
bool LedgerHasUnsafeRelease(const PrivacyLedger& ledger);

// park2016 Sec. 4.2, eq. (16): sigma~^2 = sigma^2 + Y, Y ~ Gam(1, beta), an
// exponential with RATE beta (the paper's ratio exp(beta (sigma^2(D) -
// sigma^2(D'))) fixes the density as beta exp(-beta y)), beta = epsilon /
// sensitivity; the paper's beta = eps' d N~_k is this with sensitivity
// 1/(d N~_k), the sensitivity of the perturbed term (1/(d N~_k)) sum_i
// gamma_ik x_i^T x_i for ||x_i|| <= 1. Drawn as SampleGamma(shape 1, scale
// sensitivity / epsilon). Requires finite `variance`, finite sensitivity > 0
// and epsilon > 0. Records Laplace{sensitivity, sensitivity / epsilon,
// prefix + label}. NOT DP (see above): refused unless allow_unsafe.
Status ReleaseVarianceGammaUnsafe(double& variance, double sensitivity,
                                  double epsilon, Generator& gen,
                                  PrivacyLedger& ledger, bool allow_unsafe,
                                  const std::string& label = "variance");

// park2016 Sec. 4.2, eq. (17)-(18) and App. B.1, eq. (25)-(27): Sigma~ =
// Sigma + Z Z^T with Z = [z_1..z_{d+1}], z_i ~ N(0, lambda I_d), i.e. Z Z^T ~
// Wishart_d(d + 1, lambda I_d) (drawn with SampleWishart), lambda =
// sensitivity / (2 epsilon), where `sensitivity` bounds |tr(Sigma(D) -
// Sigma(D'))| (park2016 eq. 27: 1/N~_k for the MLE, giving lambda =
// 1/(2 eps' N~_k); eq. 29-30: 1/(N~_k + nu_0 + d + 2) for the MAP). Requires
// `cov` symmetric (ValidateSymmetricMatrix), finite sensitivity and epsilon
// > 0. Output exactly symmetric. Records Laplace{sensitivity,
// sensitivity / epsilon, prefix + label}. NOT DP: refused unless allow_unsafe.
Status ReleaseCovarianceWishartUnsafe(Eigen::MatrixXd& cov, double sensitivity,
                                      double epsilon, Generator& gen,
                                      PrivacyLedger& ledger, bool allow_unsafe,
                                      const std::string& label = "covariance");

}  // namespace dpem

#endif  // DPEM_MECHANISMS_UNSAFE_PAPER_MECHANISMS_H_
