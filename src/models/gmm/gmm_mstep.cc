// The M-step of the Gaussian mixture, from (possibly noisy) sufficient
// statistics: the MLE and the MAP estimate of Park et al. (2017, supplement
// Sec. 1).
//
// Notation, per component k: N = counts(k), s = sums.row(k)^T, S = the second
// moment (sum_i gamma_ik x_i x_i^T), d = dimension, floor = covariance_floor.
//
// MLE (paper Eq. 11):
//   pi_k = N / sum_k N,  mu = s / N,
//   Sigma = (1/N) sum_i gamma_ik (x_i - mu)(x_i - mu)^T = S / N - mu mu^T,
//   since sum_i gamma_ik (x_i - mu)(x_i - mu)^T = S - s mu^T - mu s^T + N mu mu^T
//   = S - N mu mu^T. Diagonal: the diagonal of that; spherical: its trace / d
//   (as scikit-learn: the mean of the diagonal variances).
//
// MAP, Dirichlet(alpha) x NIW(0, kappa0, nu0, S0) (supplement Sec. 1):
//   pi_k  = (N pi_k^MLE + alpha_k - 1) / (N_total + sum alpha - K)
//   mu    = N mu^MLE / (N + kappa0) = s / (N + kappa0)
//   Sigma = (S0 + N Sigma^MLE + kappa0 N / (kappa0 + N) mu^MLE mu^MLE^T)
//           / (nu0 + N + d + 2).
// With N Sigma^MLE = S - s s^T / N and mu^MLE = s / N the numerator is
//   S0 + S - s s^T / N + kappa0 / (N (kappa0 + N)) s s^T
//   = S0 + S - s s^T [1/N - kappa0 / (N (kappa0 + N))]
//   = S0 + S - s s^T / (N + kappa0),
// which is what is computed: no division by N, so it stays finite for a
// noisy N near 0 (still subject to the mass-loss rule below).
//
// Diagonal MAP: the diagonal of the full formula,
//   Sigma_jj = (S0_jj + S_jj - s_j^2 / (N + kappa0)) / (nu0 + N + d + 2).
// It is the exact joint posterior mode under independent per-coordinate
// normal-inverse-gamma priors mu_j | v_j ~ N(0, v_j / kappa0),
// v_j ~ InvGamma(a, b) with b = S0_jj / 2 and a = (nu0 + d - 1) / 2: the log
// posterior in (mu_j, v_j) is
//   -(a + 1 + 1/2 + N/2) log v_j - [b + (sum_i gamma_ik (x_ij - mu_j)^2
//                                        + kappa0 mu_j^2) / 2] / v_j,
// maximised by mu_j = s_j / (N + kappa0) and, there, the bracket equals
// b + (S_jj - s_j^2 / (N + kappa0)) / 2, so
//   v_j = (2b + S_jj - s_j^2 / (N + kappa0)) / (2a + 3 + N),
// and 2a + 3 + N = nu0 + N + d + 2 with the a above.
// Spherical MAP: the trace of the full formula divided by d,
//   v = (tr S0 + tr S - ||s||^2 / (N + kappa0)) / (d (nu0 + N + d + 2)),
// the exact joint mode under mu | v ~ N(0, (v / kappa0) I),
// v ~ InvGamma(a, b) with b = tr(S0) / 2 and a = (d (nu0 + d + 1) - 2) / 2:
// the exponent of v is -(a + 1 + d/2 + N d/2) and 2a + 2 + d + N d =
// d (nu0 + N + d + 2). Both a > 0 whenever nu0 > d - 1 (validated).
//
// Then floor is added to every diagonal (scikit-learn's reg_covar), and any
// eigenvalue still below floor (noisy statistics need not be PSD) is raised to
// floor. Noisy counts: weights are clamped at 0 and renormalised; a component
// with N < min_count, or whose update is not finite (overflowing noisy
// statistics), keeps its previous mean and covariance.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dpem/models/gmm/gmm.h"
#include "internal/linear_algebra.h"

namespace dpem {
namespace {

// Shapes of the statistics against K, d and the type of `previous`.
Status CheckStatisticsShapes(const GmmStatistics& stats,
                             const GmmParameters& previous) {
  const Eigen::Index k = previous.components();
  const Eigen::Index d = previous.dimension();
  bool ok = stats.type == previous.type && stats.counts.size() == k &&
            stats.sums.rows() == k && stats.sums.cols() == d;
  ok = ok && stats.counts.allFinite() && stats.sums.allFinite();
  switch (stats.type) {
    case CovarianceType::kFull:
      ok = ok && static_cast<Eigen::Index>(stats.second_full.size()) == k;
      for (size_t j = 0; ok && j < stats.second_full.size(); ++j) {
        const Eigen::MatrixXd& s = stats.second_full[j];
        ok = s.rows() == d && s.cols() == d && s.allFinite();
      }
      break;
    case CovarianceType::kDiagonal:
      ok = ok && stats.second_diag.rows() == k &&
           stats.second_diag.cols() == d && stats.second_diag.allFinite();
      break;
    case CovarianceType::kSpherical:
      ok = ok && stats.second_trace.size() == k &&
           stats.second_trace.allFinite();
      break;
  }
  if (!ok) {
    return InvalidArgumentError(
        "statistics do not match the previous parameters in type or shape, "
        "or contain a non-finite entry");
  }
  return OkStatus();
}

Status CheckInputs(const GmmStatistics& stats, const GmmParameters& previous,
                   double n_total, const MStepOptions& options) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  DPEM_RETURN_IF_ERROR(ValidateParameters(previous));
  DPEM_RETURN_IF_ERROR(CheckStatisticsShapes(stats, previous));
  if (!(n_total > 0) || !std::isfinite(n_total)) {
    return InvalidArgumentError("n_total must be positive and finite");
  }
  if (options.estimator == Estimator::kMap &&
      (options.prior.alpha.size() != previous.components() ||
       options.prior.s0.rows() != previous.dimension())) {
    return InvalidArgumentError("prior does not match K and d of the model");
  }
  return OkStatus();
}

// Clamped, renormalised weights; the previous ones if all clamp to 0. The
// common denominator (n_total for the MLE, n_total + sum alpha - K for the
// MAP) cancels in the renormalisation.
Eigen::VectorXd Weights(const GmmStatistics& stats,
                        const GmmParameters& previous,
                        const MStepOptions& options) {
  Eigen::VectorXd numerators = stats.counts;
  if (options.estimator == Estimator::kMap) {
    numerators.array() += options.prior.alpha.array() - 1.0;
  }
  numerators = numerators.cwiseMax(0.0);
  const double total = numerators.sum();
  if (!(total > 0)) return previous.weights;
  return numerators / total;
}

// Raises the eigenvalues of symmetric `cov` below `floor` to `floor`.
Status ProjectEigenvaluesUp(double floor, Eigen::MatrixXd* cov) {
  DPEM_ASSIGN_OR_RETURN(*cov, internal::ClampEigenvalues(
                                  *cov, floor, std::numeric_limits<double>::infinity()));
  return OkStatus();
}

// The second moment of component k as a d x d matrix (the symmetric part of
// a full one; diag(S) or (tr S / d) I otherwise).
Eigen::MatrixXd SecondMoment(const GmmStatistics& stats, Eigen::Index k) {
  const Eigen::Index d = stats.sums.cols();
  switch (stats.type) {
    case CovarianceType::kFull:
      return 0.5 * (stats.second_full[k] + stats.second_full[k].transpose());
    case CovarianceType::kDiagonal:
      return stats.second_diag.row(k).asDiagonal();
    case CovarianceType::kSpherical:
      break;
  }
  return Eigen::MatrixXd::Identity(d, d) *
         (stats.second_trace(k) / static_cast<double>(d));
}

// Keeps the part of `m` that the covariance structure `type` allows.
Eigen::MatrixXd ImposeStructure(const Eigen::MatrixXd& m, CovarianceType type) {
  const Eigen::Index d = m.rows();
  switch (type) {
    case CovarianceType::kFull:
      return m;
    case CovarianceType::kDiagonal:
      return m.diagonal().asDiagonal();
    case CovarianceType::kSpherical:
      break;
  }
  return Eigen::MatrixXd::Identity(d, d) * (m.trace() / static_cast<double>(d));
}

// The mean (row vector) and the covariance of component k; see the comment
// at the top for the formulas. Both MLE and MAP covariances are
//   (prior scale + S - s s^T / mean_denominator) / cov_denominator,
// with prior scale 0, mean_denominator = cov_denominator = N for the MLE and
// S0, N + kappa0, nu0 + N + d + 2 for the MAP. False if the result is not
// finite or (full) not numerically positive definite: the caller then keeps
// the previous component.
bool ComponentUpdate(const GmmStatistics& stats, Eigen::Index k,
                       const MStepOptions& options, Eigen::RowVectorXd* mean,
                       Eigen::MatrixXd* cov) {
  const bool map = options.estimator == Estimator::kMap;
  const double n = stats.counts(k);
  const double d = static_cast<double>(stats.sums.cols());
  const Eigen::RowVectorXd s = stats.sums.row(k);
  const double mean_denominator = map ? n + options.prior.kappa0 : n;
  const double cov_denominator = map ? options.prior.nu0 + n + d + 2 : n;
  *mean = s / mean_denominator;
  Eigen::MatrixXd scatter =
      SecondMoment(stats, k) - s.transpose() * s / mean_denominator;
  if (map) scatter += options.prior.s0;
  *cov = ImposeStructure(scatter, stats.type) / cov_denominator;
  cov->diagonal().array() += options.covariance_floor;
  if (!mean->allFinite() || !cov->allFinite()) return false;
  if (stats.type == CovarianceType::kFull) {
    return ProjectEigenvaluesUp(options.covariance_floor, cov).ok() &&
           Eigen::LLT<Eigen::MatrixXd>(*cov).info() == Eigen::Success;
  }
  cov->diagonal() = cov->diagonal().cwiseMax(options.covariance_floor);
  return true;
}

}  // namespace

GmmPrior DefaultPrior(Eigen::Index components, Eigen::Index dimension) {
  GmmPrior prior;
  prior.alpha = Eigen::VectorXd::Constant(components, 2.0);
  prior.kappa0 = 1.0;
  prior.nu0 = static_cast<double>(dimension) + 2.0;
  prior.s0 = 0.1 * Eigen::MatrixXd::Identity(dimension, dimension);
  return prior;
}

Status MStepOptions::Validate() const {
  if (!(covariance_floor > 0) || !std::isfinite(covariance_floor)) {
    return InvalidArgumentError("covariance_floor must be positive and finite");
  }
  if (!(min_count > 0) || !std::isfinite(min_count)) {
    return InvalidArgumentError("min_count must be positive and finite");
  }
  if (estimator != Estimator::kMap) return OkStatus();
  if (prior.alpha.size() < 1 || !prior.alpha.allFinite() ||
      prior.alpha.minCoeff() <= 0) {
    return InvalidArgumentError("MAP prior: alpha must be non-empty, > 0");
  }
  if (!(prior.kappa0 > 0) || !std::isfinite(prior.kappa0)) {
    return InvalidArgumentError("MAP prior: kappa0 must be positive, finite");
  }
  const Eigen::Index d = prior.s0.rows();
  if (d < 1 || prior.s0.cols() != d || !prior.s0.allFinite() ||
      !prior.s0.isApprox(prior.s0.transpose()) ||
      Eigen::LLT<Eigen::MatrixXd>(prior.s0).info() != Eigen::Success) {
    return InvalidArgumentError(
        "MAP prior: s0 must be square, symmetric, positive definite");
  }
  if (!(prior.nu0 > static_cast<double>(d) - 1) || !std::isfinite(prior.nu0)) {
    return InvalidArgumentError("MAP prior: nu0 must exceed d - 1");
  }
  return OkStatus();
}

StatusOr<GmmParameters> MStep(const GmmStatistics& stats,
                              const GmmParameters& previous, double n_total,
                              const MStepOptions& options) {
  DPEM_RETURN_IF_ERROR(CheckInputs(stats, previous, n_total, options));
  GmmParameters next = previous;
  next.weights = Weights(stats, previous, options);
  for (Eigen::Index k = 0; k < previous.components(); ++k) {
    if (!(stats.counts(k) >= options.min_count)) continue;  // Mass loss.
    Eigen::RowVectorXd mean;
    Eigen::MatrixXd cov;
    // Overflowing (noisy) statistics: keep the previous component, as for
    // mass loss (a repair of released values, never an error).
    if (!ComponentUpdate(stats, k, options, &mean, &cov)) continue;
    next.means.row(k) = mean;
    next.covariances[k] = std::move(cov);
  }
  return next;
}

}  // namespace dpem
