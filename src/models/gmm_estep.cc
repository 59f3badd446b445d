// The E-step of the Gaussian mixture: log densities on blocks of rows by
// triangular solves with Cholesky factors, responsibilities by log-sum-exp,
// and sufficient statistics accumulated by matrix products.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <utility>

#include "dpem/models/gmm.h"

namespace dpem {
namespace {

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)

// Zero statistics of the shapes of `params`.
GmmStatistics ZeroStatistics(const GmmParameters& params) {
  const Eigen::Index k = params.components();
  const Eigen::Index d = params.dimension();
  GmmStatistics stats;
  stats.type = params.type;
  stats.counts = Eigen::VectorXd::Zero(k);
  stats.sums = Eigen::MatrixXd::Zero(k, d);
  switch (params.type) {
    case CovarianceType::kFull:
      stats.second_full.assign(k, Eigen::MatrixXd::Zero(d, d));
      break;
    case CovarianceType::kDiagonal:
      stats.second_diag = Eigen::MatrixXd::Zero(k, d);
      break;
    case CovarianceType::kSpherical:
      stats.second_trace = Eigen::VectorXd::Zero(k);
      break;
  }
  return stats;
}

// Adds the second moments of one block, weighted by its responsibilities.
// For kFull only the lower triangle is accumulated (rank updates with
// sqrt(gamma)-weighted rows); ComputeStatistics mirrors it at the end.
void AccumulateSecondMoments(const Eigen::Ref<const DataMatrix>& block,
                             const Eigen::MatrixXd& gamma,
                             GmmStatistics* stats) {
  switch (stats->type) {
    case CovarianceType::kFull: {
      DataMatrix weighted(block.rows(), block.cols());
      for (Eigen::Index k = 0; k < gamma.cols(); ++k) {
        weighted = block.array().colwise() * gamma.col(k).array().sqrt();
        stats->second_full[k].selfadjointView<Eigen::Lower>().rankUpdate(
            weighted.transpose());
      }
      break;
    }
    case CovarianceType::kDiagonal:
      stats->second_diag.noalias() +=
          gamma.transpose() * block.array().square().matrix();
      break;
    case CovarianceType::kSpherical:
      stats->second_trace.noalias() +=
          gamma.transpose() * block.rowwise().squaredNorm();
      break;
  }
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
  if (params.type != CovarianceType::kFull) {
    evaluator.inverse_stddev_.resize(k_count, d);
  }
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const Eigen::MatrixXd& cov = params.covariances[k];
    double log_det = 0;
    if (params.type == CovarianceType::kFull) {
      Eigen::LLT<Eigen::MatrixXd> llt(cov);
      if (llt.info() != Eigen::Success) {
        return NumericalError("Cholesky factorisation of covariance " +
                              std::to_string(k) + " failed");
      }
      evaluator.cholesky_.push_back(llt.matrixL());
      log_det = 2 * evaluator.cholesky_.back().diagonal().array().log().sum();
    } else {
      const Eigen::ArrayXd variances = cov.diagonal().array();
      evaluator.inverse_stddev_.row(k) = variances.rsqrt().transpose();
      log_det = variances.log().sum();
    }
    evaluator.log_normalizer_(k) = -0.5 * (static_cast<double>(d) * kLog2Pi +
                                           log_det);
  }
  return evaluator;
}

void GmmDensityEvaluator::LogJoint(const Eigen::Ref<const DataMatrix>& block,
                                   Eigen::MatrixXd* out) const {
  out->resize(block.rows(), components());
  // diff is rows x d; for kFull the solve L z = diff^T gives z (d x rows) and
  // the Mahalanobis distance ||z||^2 per column.
  Eigen::MatrixXd diff(block.rows(), block.cols());
  for (Eigen::Index k = 0; k < components(); ++k) {
    diff = block.rowwise() - means_.row(k);
    Eigen::VectorXd mahalanobis;
    if (type_ == CovarianceType::kFull) {
      const Eigen::MatrixXd z =
          cholesky_[k].triangularView<Eigen::Lower>().solve(diff.transpose());
      mahalanobis = z.colwise().squaredNorm().transpose();
    } else {
      mahalanobis = (diff.array().rowwise() * inverse_stddev_.row(k).array())
                        .square()
                        .rowwise()
                        .sum();
    }
    out->col(k) = (log_weights_(k) + log_normalizer_(k)) -
                  0.5 * mahalanobis.array();
  }
}

Eigen::VectorXd GmmDensityEvaluator::Responsibilities(
    const Eigen::Ref<const DataMatrix>& block,
    Eigen::MatrixXd* responsibilities) const {
  LogJoint(block, responsibilities);
  // Log-sum-exp per row. The maximum is finite: some weight is positive and
  // the log densities of finite rows are finite.
  const Eigen::VectorXd row_max = responsibilities->rowwise().maxCoeff();
  *responsibilities = (responsibilities->colwise() - row_max).array().exp();
  const Eigen::VectorXd row_sum = responsibilities->rowwise().sum();
  *responsibilities = responsibilities->array().colwise() / row_sum.array();
  return row_max.array() + row_sum.array().log();
}

Status ValidateData(const GmmParameters& params, const DataMatrix& x) {
  if (x.cols() != params.dimension()) {
    return InvalidArgumentError(
        "data have " + std::to_string(x.cols()) + " columns, the model " +
        std::to_string(params.dimension()) + " dimensions");
  }
  if (!x.allFinite()) {
    return InvalidArgumentError("data contain a non-finite entry");
  }
  return OkStatus();
}

StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params,
                                          const DataMatrix& x) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  DPEM_RETURN_IF_ERROR(ValidateData(params, x));
  GmmStatistics stats = ZeroStatistics(params);
  Eigen::MatrixXd gamma;
  for (Eigen::Index start = 0; start < x.rows(); start += kEStepChunkRows) {
    const Eigen::Index rows = std::min(kEStepChunkRows, x.rows() - start);
    const auto block = x.middleRows(start, rows);
    stats.log_likelihood += evaluator.Responsibilities(block, &gamma).sum();
    stats.counts += gamma.colwise().sum().transpose();
    stats.sums.noalias() += gamma.transpose() * block;
    AccumulateSecondMoments(block, gamma, &stats);
  }
  for (Eigen::MatrixXd& second : stats.second_full) {
    Eigen::MatrixXd mirrored = second.selfadjointView<Eigen::Lower>();
    second = std::move(mirrored);
  }
  stats.n = x.rows();
  return stats;
}

}  // namespace dpem
