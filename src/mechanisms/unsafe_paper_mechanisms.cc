#include "dpem/mechanisms/unsafe_paper_mechanisms.h"

#include <cmath>
#include <string>

#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/random/samplers.h"
#include "internal/numeric.h"

namespace dpem {
namespace {

// An unsafe mechanism: its name, for messages, and the part of its output
// whose support depends on the data.
struct UnsafeMechanism {
  std::string_view name;
  std::string_view defect;
};

constexpr UnsafeMechanism kGammaVariance{"park2016 Gamma variance mechanism",
                                         "the output's lower end (the true variance)"};
constexpr UnsafeMechanism kWishartCovariance{"park2016 Wishart covariance mechanism",
                                             "the output's support {S : S - Sigma > 0}"};

Status Refusal(const UnsafeMechanism& mechanism) {
  return FailedPreconditionError(
      std::string(mechanism.name) +
      " is not differentially private: its noise is one-sided, so " +
      std::string(mechanism.defect) +
      " depends on the data and neighbouring data sets have different output "
      "supports (unbounded privacy loss; see privacy-notes). It is available "
      "only for reproducing park2016, with allow_unsafe = true");
}

Status ValidateBudget(std::string_view mechanism, double sensitivity,
                      double epsilon) {
  const std::string name(mechanism);
  DPEM_RETURN_IF_ERROR(internal::CheckFinitePositive(sensitivity, name + ": sensitivity"));
  return internal::CheckFinitePositive(epsilon, name + ": epsilon");
}

// Refusal(mechanism) unless allow_unsafe; then ValidateBudget.
Status CheckUnsafeCall(const UnsafeMechanism& mechanism, bool allow_unsafe, double sensitivity,
                       double epsilon) {
  if (!allow_unsafe) return Refusal(mechanism);
  return ValidateBudget(mechanism.name, sensitivity, epsilon);
}

// The paper's claim, recorded as an epsilon-DP Laplace release and labelled.
Release ClaimedRelease(double sensitivity, double epsilon,
                       const std::string& label) {
  return Release{MechanismKind::kLaplace, sensitivity, sensitivity / epsilon,
                 std::string(kUnsafeReleaseLabelPrefix) + label};
}

}  // namespace

bool IsUnsafeRelease(const Release& release) {
  return std::string_view(release.label).starts_with(kUnsafeReleaseLabelPrefix);
}

bool LedgerHasUnsafeRelease(const PrivacyLedger& ledger) {
  for (const Release& r : ledger.releases()) {
    if (IsUnsafeRelease(r)) return true;
  }
  return false;
}

Status ReleaseVarianceGammaUnsafe(double& variance, double sensitivity,
                                  double epsilon, Generator& gen,
                                  PrivacyLedger& ledger, bool allow_unsafe,
                                  const std::string& label) {
  DPEM_RETURN_IF_ERROR(CheckUnsafeCall(kGammaVariance, allow_unsafe, sensitivity, epsilon));
  if (!std::isfinite(variance)) {
    return InvalidArgumentError(std::string(kGammaVariance.name) + ": variance not finite");
  }
  // park2016 eq. (16): Y ~ Gam(1, beta), rate beta = epsilon / sensitivity.
  DPEM_ASSIGN_OR_RETURN(const double noise,
                        SampleGamma(gen, 1.0, sensitivity / epsilon));
  DPEM_RETURN_IF_ERROR(
      ledger.Record(ClaimedRelease(sensitivity, epsilon, label)));
  variance += noise;
  return OkStatus();
}

Status ReleaseCovarianceWishartUnsafe(Eigen::MatrixXd& cov, double sensitivity,
                                      double epsilon, Generator& gen,
                                      PrivacyLedger& ledger, bool allow_unsafe,
                                      const std::string& label) {
  DPEM_RETURN_IF_ERROR(CheckUnsafeCall(kWishartCovariance, allow_unsafe, sensitivity, epsilon));
  DPEM_RETURN_IF_ERROR(ValidateSymmetricMatrix(cov, kWishartCovariance.name));
  const Eigen::Index d = cov.rows();
  // park2016 eq. (17)-(18), (27): Z Z^T ~ W_d(d + 1, lambda I),
  // lambda = sensitivity / (2 epsilon).
  const double lambda = sensitivity / (2.0 * epsilon);
  DPEM_ASSIGN_OR_RETURN(
      Eigen::MatrixXd noise,
      SampleWishart(gen, static_cast<double>(d + 1),
                    lambda * Eigen::MatrixXd::Identity(d, d)));
  const Eigen::MatrixXd sym = 0.5 * (cov + cov.transpose());
  DPEM_RETURN_IF_ERROR(
      ledger.Record(ClaimedRelease(sensitivity, epsilon, label)));
  cov = sym + noise;
  return OkStatus();
}

}  // namespace dpem
