// The density evaluator of a Gaussian mixture (GmmDensityEvaluator,
// dpem/models/gmm/gmm.h): log joint densities log pi_k + log N(x | mu_k,
// Sigma_k) of a block of rows, and responsibilities by a log-sum-exp per row.
// The E-steps (gmm_estep.cc, gmm_framed_estep.cc) and the scores of gmm.cc
// use it.
//
// Full covariances. Every quantity of a row x in R^d that the E-step needs is
// linear in its quadratic features
//   f(x) = (x_i x_j for i <= j,  x_1 .. x_d,  1)   (F = d(d+1)/2 + d + 1),
// so a block of B rows becomes one B x F feature matrix, shared by all K
// components, and the log joint densities are one matrix product:
//   log pi_k + log N(x | mu_k, Sigma_k) = f(x)^T w_k, with P_k = Sigma_k^{-1}:
//     -(1/2) P_ii on x_i^2, -P_ij on x_i x_j (i < j), (P_k mu_k)_i on x_i, and
//     log pi_k - (d log 2 pi + log|Sigma_k| + mu_k^T P_k mu_k) / 2 on 1,
//   so the log joint densities are  Features (B x F) * W (F x K).
// The E-step reuses the features to accumulate the statistics (gmm_estep.cc).
// P_k comes from the Cholesky factorisation (LLT solve against I). The
// expansion of the quadratic form trades cancellation for speed: its
// absolute error is about F * 2^-53 * max(||x||^2, ||mu||^2) /
// lambda_min(Sigma_k); the private fit works in the unit ball with
// eigenvalues floored (1e-6 by default), so it is below 1e-8, far below
// anything that changes a responsibility.
//
// Diagonal and spherical covariances use the elementwise form
// sum_j ((x_j - mu_kj) / sigma_kj)^2. Responsibilities come from a
// log-sum-exp per row.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "models/gmm/gmm_kernels.h"

namespace dpem {
namespace {

using internal::FeatureCount;
using internal::kLogSmallestNormal;

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)

// The quadratic features of each row of `block` into `features` (B x F,
// column-major): products x_i x_j (i <= j, column by column of the lower
// triangle: (0,0), (1,0), ..., (d-1,0), (1,1), ...), then x, then 1.
// The linear columns are written first: they are the block transposed to
// column-major order, from which the products read contiguous columns (the
// block's own columns are strided; reading them 55 times at d = 10 took as
// long as the log-density product).
void QuadraticFeatures(const Eigen::Ref<const DataMatrix>& block, Eigen::MatrixXd* features) {
  const Eigen::Index d = block.cols();
  const Eigen::Index linear = d * (d + 1) / 2;
  features->resize(block.rows(), FeatureCount(d));
  features->middleCols(linear, d) = block;
  features->col(linear + d).setOnes();
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) {
      features->col(f++) = features->col(linear + i).cwiseProduct(features->col(linear + j));
    }
  }
}

// Column k of the full-covariance weights W (F x K, the file comment) into
// `w`: with P = Sigma_k^{-1} (a Cholesky solve against `identity`, I of
// d x d), -(1/2) P_ii on x_i^2, -P_ij on x_i x_j (i < j), P mu_k on x, and
// log pi_k - (d log 2 pi + log|Sigma_k| + mu_k^T P mu_k) / 2 on 1, with
// log pi_k = `log_weight`. Returns log|Sigma_k|; NumericalError if Sigma_k
// has no Cholesky factorisation.
StatusOr<double> FullCovarianceWeights(const GmmParameters& params, Eigen::Index k,
                                       const Eigen::MatrixXd& identity, double log_weight,
                                       Eigen::Ref<Eigen::VectorXd> w) {
  const Eigen::Index d = params.dimension();
  Eigen::LLT<Eigen::MatrixXd> llt(params.covariances[k]);
  if (llt.info() != Eigen::Success) {
    return NumericalError("Cholesky factorisation of covariance " +
                          std::to_string(k) + " failed");
  }
  const double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
  const Eigen::MatrixXd precision = llt.solve(identity);
  const Eigen::VectorXd mu = params.means.row(k).transpose();
  const Eigen::VectorXd p_mu = precision * mu;
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) {
      w(f++) = i == j ? -0.5 * precision(i, i) : -0.5 * (precision(i, j) + precision(j, i));
    }
  }
  w.segment(f, d) = p_mu;
  w(f + d) = log_weight - 0.5 * mu.dot(p_mu) -
             0.5 * (static_cast<double>(d) * kLog2Pi + log_det);
  return log_det;
}

}  // namespace

StatusOr<GmmDensityEvaluator> GmmDensityEvaluator::Create(
    const GmmParameters& params) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  const Eigen::Index k_count = params.components();
  const Eigen::Index d = params.dimension();
  GmmDensityEvaluator evaluator;
  evaluator.type_ = params.type;
  evaluator.log_weights_ = params.weights.array().log();
  evaluator.means_ = params.means;
  evaluator.log_normalizer_.resize(k_count);
  if (params.type == CovarianceType::kFull) {
    evaluator.quadratic_weights_.resize(FeatureCount(d), k_count);
  } else {
    evaluator.inverse_stddev_.resize(k_count, d);
  }
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(d, d);
  for (Eigen::Index k = 0; k < k_count; ++k) {
    double log_det = 0;
    if (params.type == CovarianceType::kFull) {
      DPEM_ASSIGN_OR_RETURN(log_det, FullCovarianceWeights(params, k, identity,
                                                           evaluator.log_weights_(k),
                                                           evaluator.quadratic_weights_.col(k)));
    } else {
      const Eigen::ArrayXd variances = params.covariances[k].diagonal().array();
      evaluator.inverse_stddev_.row(k) = variances.rsqrt().transpose();
      log_det = variances.log().sum();
    }
    evaluator.log_normalizer_(k) = -0.5 * (static_cast<double>(d) * kLog2Pi +
                                           log_det);
  }
  return evaluator;
}

void GmmDensityEvaluator::LogJoint(const Eigen::Ref<const DataMatrix>& block,
                                   Eigen::MatrixXd* out,
                                   Eigen::MatrixXd* scratch) const {
  const Eigen::Index rows = block.rows();
  const Eigen::Index d = block.cols();
  if (type_ == CovarianceType::kFull) {
    Eigen::MatrixXd local;
    Eigen::MatrixXd& features = scratch != nullptr ? *scratch : local;
    QuadraticFeatures(block, &features);
    out->noalias() = features * quadratic_weights_;
    return;
  }
  out->setZero(rows, components());
  // Column-major copy: the K d passes below then read contiguous columns.
  const Eigen::MatrixXd columns = block;
  for (Eigen::Index k = 0; k < components(); ++k) {
    for (Eigen::Index j = 0; j < d; ++j) {
      out->col(k).array() +=
          ((columns.col(j).array() - means_(k, j)) * inverse_stddev_(k, j)).square();
    }
  }
  // out holds Mahalanobis distances; turn them into log joint densities.
  for (Eigen::Index k = 0; k < components(); ++k) {
    out->col(k) = (log_weights_(k) + log_normalizer_(k)) - 0.5 * out->col(k).array();
  }
}

Eigen::VectorXd GmmDensityEvaluator::Responsibilities(
    const Eigen::Ref<const DataMatrix>& block, Eigen::MatrixXd* responsibilities,
    Eigen::MatrixXd* scratch) const {
  LogJoint(block, responsibilities, scratch);
  // The maximum is finite for valid parameters with eigenvalues of at least
  // kMinCovarianceFloor (some weight is positive and the log densities of
  // unit-ball rows are finite); NormalizeLogJoint repairs any other row.
  return internal::NormalizeLogJoint(*responsibilities);
}

namespace internal {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Makes every row of log joint densities normalisable: in a row holding a
// NaN or without a finite maximum (overflow: -infinity in every component,
// or +infinity somewhere), NaN entries become -infinity; then if some entry
// is +infinity, those entries become 0 and the others -infinity (all the
// mass on them), and if every entry is -infinity, all become 0 (uniform).
// Unreachable for parameters a fit produces (kMinCovarianceFloor keeps
// log-densities finite); it guarantees that every record's responsibilities
// are a point of the simplex whatever the parameters, so the statistics stay
// finite (any point of the simplex keeps the release's sensitivity). Updates
// row_max and returns the repaired rows.
std::vector<Eigen::Index> RepairLogJoint(Eigen::MatrixXd& r, Eigen::ArrayXd& row_max) {
  std::vector<Eigen::Index> repaired;
  for (Eigen::Index i = 0; i < r.rows(); ++i) {
    if (std::isfinite(row_max(i)) && !r.row(i).hasNaN()) continue;
    repaired.push_back(i);
    double top = -kInfinity;
    for (Eigen::Index k = 0; k < r.cols(); ++k) {
      if (std::isnan(r(i, k))) r(i, k) = -kInfinity;
      top = std::max(top, r(i, k));
    }
    if (!std::isfinite(top)) {
      for (Eigen::Index k = 0; k < r.cols(); ++k) {
        r(i, k) = top == -kInfinity || r(i, k) == kInfinity ? 0.0 : -kInfinity;
      }
      top = 0.0;
    }
    row_max(i) = top;
  }
  return repaired;
}

// Turns log joint densities (rows x K) into responsibilities in place, by a
// log-sum-exp per row, and returns log p(x_i) per row. Results below the
// smallest normal double are flushed to exactly 0 (a component of weight 0,
// log joint -infinity, gets no responsibility at all). A row that cannot be
// normalised is repaired by RepairLogJoint first, and its log p(x_i) is NaN.
// Column by column, so that max, exp and the sums run on contiguous packets.
// Vectorised exp clamps its argument (exp(-inf) would give ~1e-308, not 0),
// hence the explicit flush.
}  // namespace

Eigen::VectorXd NormalizeLogJoint(Eigen::MatrixXd& r) {
  Eigen::ArrayXd row_max = r.col(0).array();
  for (Eigen::Index k = 1; k < r.cols(); ++k) row_max = row_max.max(r.col(k).array());
  std::vector<Eigen::Index> repaired;
  if (!row_max.isFinite().all() || r.hasNaN()) repaired = RepairLogJoint(r, row_max);
  Eigen::ArrayXd sum = Eigen::ArrayXd::Zero(r.rows());
  Eigen::ArrayXd e(r.rows());
  for (Eigen::Index k = 0; k < r.cols(); ++k) {
    auto c = r.col(k).array();
    c -= row_max;
    e = c.exp();
    c = (c < kLogSmallestNormal).select(0.0, e);
    sum += c;
  }
  sum = sum.inverse();
  for (Eigen::Index k = 0; k < r.cols(); ++k) r.col(k).array() *= sum;
  Eigen::VectorXd log_density = (row_max - sum.log()).matrix();
  for (Eigen::Index i : repaired) log_density(i) = std::numeric_limits<double>::quiet_NaN();
  return log_density;
}

Status CheckDataColumns(const GmmParameters& params, Eigen::Index columns) {
  if (columns == params.dimension()) return OkStatus();
  return InvalidArgumentError("data have " + std::to_string(columns) + " columns, the model " +
                              std::to_string(params.dimension()) + " dimensions");
}

}  // namespace internal

Status ValidateData(const GmmParameters& params, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(internal::CheckDataColumns(params, x.cols()));
  if (!x.allFinite()) {
    return InvalidArgumentError("data contain a non-finite entry");
  }
  return OkStatus();
}

}  // namespace dpem
