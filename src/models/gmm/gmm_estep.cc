// The E-step of the Gaussian mixture, fused with the accumulation of the
// sufficient statistics, block by block on the engine's threads.
//
// Full covariances. Every quantity of a row x in R^d that the E-step needs is
// linear in its quadratic features
//   f(x) = (x_i x_j for i <= j,  x_1 .. x_d,  1)   (F = d(d+1)/2 + d + 1),
// so a block of B rows becomes one B x F feature matrix, shared by all K
// components, and the pass is two matrix products:
//   log pi_k + log N(x | mu_k, Sigma_k) = f(x)^T w_k, with P_k = Sigma_k^{-1}:
//     -(1/2) P_ii on x_i^2, -P_ij on x_i x_j (i < j), (P_k mu_k)_i on x_i, and
//     log pi_k - (d log 2 pi + log|Sigma_k| + mu_k^T P_k mu_k) / 2 on 1,
//   so the log joint densities are  Features (B x F) * W (F x K);
//   sum_i gamma_ik f(x_i) holds N_k (on 1), the sums (on x) and the packed
//   second moments (on x_i x_j):  Gamma^T (K x B) * Features (B x F).
// That is 4 K F ~ 2 K d^2 flops per row in BLAS-3 shape, half of whitening
// with Cholesky factors and a rank update per component (what scikit-learn
// does), since symmetry is used twice. P_k comes from the Cholesky
// factorisation (LLT solve against I). The expansion of the quadratic form
// trades cancellation for speed: its absolute error is about
// F * 2^-53 * max(||x||^2, ||mu||^2) / lambda_min(Sigma_k); the private fit
// works in the unit ball with eigenvalues floored (1e-6 by default), so it
// is below 1e-8, far below anything that changes a responsibility.
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
#include <utility>
#include <vector>

#include "dpem/engine/engine.h"
#include "dpem/models/gmm/gmm.h"
#include "engine/exact_sum.h"
#include "models/gmm/gmm_kernels.h"

namespace dpem::internal {

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

std::vector<StatisticArray> StatisticArrays(GmmStatistics& s) {
  std::vector<StatisticArray> a{{s.counts.data(), s.counts.size()}, {s.sums.data(), s.sums.size()}};
  for (Eigen::MatrixXd& m : s.second_full) a.push_back({m.data(), m.size()});
  if (s.type == CovarianceType::kDiagonal) a.push_back({s.second_diag.data(), s.second_diag.size()});
  if (s.type == CovarianceType::kSpherical) {
    a.push_back({s.second_trace.data(), s.second_trace.size()});
  }
  return a;
}

}  // namespace dpem::internal

namespace dpem {
namespace {

using internal::FeatureCount;
using internal::ExactSum;
using internal::MergeExactSums;
using internal::StatisticArray;
using internal::ZeroStatistics;

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)
// log(DBL_MIN): exp of anything smaller is subnormal or 0.
constexpr double kLogSmallestNormal = -708.3964185322641;

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

// Unpacks the packed lower triangle (QuadraticFeatures' order) of row `k` of
// `t` into the symmetric d x d matrix `out`.
void UnpackSymmetric(const Eigen::MatrixXd& t, Eigen::Index k, Eigen::MatrixXd& out) {
  const Eigen::Index d = out.rows();
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i, ++f) out(i, j) = out(j, i) = t(k, f);
  }
}

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

// One thread's share of an E-step pass: the current block's partial
// statistics (from zero), the exact sum of its finished blocks' partials
// (engine/exact_sum.h), and its buffers.
struct EStepWorker {
  GmmStatistics stats;
  Eigen::MatrixXd feature_sums;  // kFull: F x K, sum_i gamma_ik f(x_i).
  Eigen::MatrixXd gamma;         // B x K.
  Eigen::MatrixXd scratch;       // kFull: the block's features, B x F.
  ExactSum exact;
};

// The arrays of a pass's statistics that are summed exactly: the feature
// sums for full covariances (they hold the counts, sums and second moments),
// the statistics' own arrays otherwise.
std::vector<StatisticArray> ExactArrays(GmmStatistics& s, Eigen::MatrixXd& feature_sums) {
  if (s.type == CovarianceType::kFull) return {{feature_sums.data(), feature_sums.size()}};
  return internal::StatisticArrays(s);
}

// Unpacks K x F feature sums into counts, sums and second moments.
void UnpackFeatureSums(const Eigen::MatrixXd& t, GmmStatistics& s) {
  const Eigen::Index d = s.sums.cols();
  const Eigen::Index pairs = d * (d + 1) / 2;
  s.counts = t.col(pairs + d);
  s.sums = t.middleCols(pairs, d);
  for (Eigen::Index k = 0; k < t.rows(); ++k) UnpackSymmetric(t, k, s.second_full[k]);
}

// Adds one block's statistics, given its responsibilities, into `w`.
// For kFull, w.scratch must hold the block's quadratic features.
void Accumulate(const RowBlock& block, EStepWorker& w) {
  const Eigen::MatrixXd& gamma = w.gamma;
  GmmStatistics& s = w.stats;
  if (s.type == CovarianceType::kFull) {
    // F x K rather than K x F: the product's long rows then fill the
    // kernel's register panels (K = 10 rows would leave most of them empty).
    w.feature_sums.noalias() += w.scratch.transpose() * gamma;
    return;
  }
  s.counts.noalias() += gamma.colwise().sum().transpose();
  s.sums.noalias() += gamma.transpose() * block;
  switch (s.type) {
    case CovarianceType::kFull:
      break;
    case CovarianceType::kDiagonal:
      s.second_diag.noalias() += gamma.transpose() * block.array().square().matrix();
      break;
    case CovarianceType::kSpherical:
      s.second_trace.noalias() += gamma.transpose() * block.rowwise().squaredNorm();
      break;
  }
}

// Merges the workers into the statistics of the pass: the exact sums (the
// same for any thread count), and the log-likelihood in thread order.
// With exact == false (raw data outside the unit ball's scale), the
// per-thread floating-point sums are added in thread order instead.
GmmStatistics Merge(std::vector<EStepWorker>& workers, Eigen::Index n, bool exact) {
  GmmStatistics stats = std::move(workers[0].stats);
  Eigen::MatrixXd feature_sums = std::move(workers[0].feature_sums);
  if (exact) {
    MergeExactSums(workers, &EStepWorker::exact).WriteTo(ExactArrays(stats, feature_sums));
  } else {
    const std::vector<StatisticArray> total = ExactArrays(stats, feature_sums);
    for (size_t t = 1; t < workers.size(); ++t) {
      const std::vector<StatisticArray> part = ExactArrays(workers[t].stats, workers[t].feature_sums);
      for (size_t a = 0; a < total.size(); ++a) {
        for (Eigen::Index j = 0; j < total[a].second; ++j) total[a].first[j] += part[a].first[j];
      }
    }
  }
  for (size_t t = 1; t < workers.size(); ++t) stats.log_likelihood += workers[t].stats.log_likelihood;
  if (stats.type == CovarianceType::kFull) UnpackFeatureSums(feature_sums.transpose(), stats);
  stats.n = n;
  return stats;
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
    const Eigen::MatrixXd& cov = params.covariances[k];
    double log_det = 0;
    if (params.type == CovarianceType::kFull) {
      Eigen::LLT<Eigen::MatrixXd> llt(cov);
      if (llt.info() != Eigen::Success) {
        return NumericalError("Cholesky factorisation of covariance " +
                              std::to_string(k) + " failed");
      }
      log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
      const Eigen::MatrixXd precision = llt.solve(identity);
      const Eigen::VectorXd mu = params.means.row(k).transpose();
      const Eigen::VectorXd p_mu = precision * mu;
      auto w = evaluator.quadratic_weights_.col(k);
      Eigen::Index f = 0;
      for (Eigen::Index j = 0; j < d; ++j) {
        for (Eigen::Index i = j; i < d; ++i) {
          w(f++) = i == j ? -0.5 * precision(i, i) : -0.5 * (precision(i, j) + precision(j, i));
        }
      }
      w.segment(f, d) = p_mu;
      w(f + d) = evaluator.log_weights_(k) - 0.5 * mu.dot(p_mu) -
                 0.5 * (static_cast<double>(d) * kLog2Pi + log_det);
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
  return NormalizeLogJoint(*responsibilities);
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

namespace {

// The pass; `exact` chooses exact sums (released statistics of unit-ball
// records) or plain floating-point sums (any scale).
StatusOr<GmmStatistics> ComputeStatisticsPass(const GmmParameters& params, const RowSource& x,
                                              const Engine& engine, bool exact) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  const Eigen::Index k = params.components();
  const Eigen::Index d = params.dimension();
  if (x.cols() != d) {
    return InvalidArgumentError("data have " + std::to_string(x.cols()) +
                                " columns, the model " + std::to_string(d) + " dimensions");
  }
  const auto init = [&](EStepWorker& w) {
    w.stats = ZeroStatistics(params);
    if (params.type == CovarianceType::kFull) w.feature_sums.setZero(FeatureCount(d), k);
    w.exact = ExactSum(internal::TotalSize(ExactArrays(w.stats, w.feature_sums)));
  };
  const Eigen::Index row_doubles = (params.type == CovarianceType::kFull ? FeatureCount(d) : d) + k;
  DPEM_ASSIGN_OR_RETURN(
      std::vector<EStepWorker> workers,
      engine.Reduce<EStepWorker>(x, row_doubles, init,
                                 [&](EStepWorker& w, const RowBlock& block, Eigen::Index) {
        w.stats.log_likelihood +=
            evaluator.Responsibilities(block, &w.gamma, &w.scratch).sum();
        Accumulate(block, w);
        if (exact) w.exact.FoldAndZero(ExactArrays(w.stats, w.feature_sums));
        return OkStatus();
      }));
  return Merge(workers, x.rows(), exact);
}

}  // namespace

StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params, const RowSource& x,
                                          const Engine& engine) {
  return ComputeStatisticsPass(params, x, engine, /*exact=*/true);
}

StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params,
                                          const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  DPEM_RETURN_IF_ERROR(ValidateData(params, x));
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create(EngineOptions{}));
  return ComputeStatisticsPass(params, source, engine, /*exact=*/false);
}

}  // namespace dpem
