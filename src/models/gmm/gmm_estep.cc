// The E-step of the Gaussian mixture, fused with the accumulation of the
// sufficient statistics, block by block on the engine's threads. The
// responsibilities come from GmmDensityEvaluator (gmm_density.cc).
//
// Full covariances. The evaluator computes a block's log joint densities
// from its B x F matrix of quadratic features f(x) = (x_i x_j for i <= j,
// x_1 .. x_d, 1) (gmm_density.cc); the same features give the statistics:
//   sum_i gamma_ik f(x_i) holds N_k (on 1), the sums (on x) and the packed
//   second moments (on x_i x_j):  Gamma^T (K x B) * Features (B x F).
// With the log-density product, that is 4 K F ~ 2 K d^2 flops per row in
// BLAS-3 shape, half of whitening with Cholesky factors and a rank update per
// component (what scikit-learn does), since symmetry is used twice.
//
// The plain fits' full-covariance pass (ComputePlainFitStatistics) first
// lets SettledRows (gmm_settled_rows.h) take the records that one component
// claims in double precision, at about 2 d^2 flops each, and runs the dense
// product on the others; the pass for releases does the dense work for
// every record (why: gmm_settled_rows.h).
//
// Diagonal and spherical covariances accumulate the products of the
// responsibilities with the records and their squares.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpem/engine/engine.h"
#include "dpem/models/gmm/gmm.h"
#include "engine/exact_sum.h"
#include "engine/rank_combine.h"
#include "models/gmm/gmm_kernels.h"
#include "models/gmm/gmm_settled_rows.h"

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

// Unpacks the packed lower triangle (QuadraticFeatures' order, gmm_density.cc)
// of row `k` of `t` into the symmetric d x d matrix `out`.
void UnpackSymmetric(const Eigen::MatrixXd& t, Eigen::Index k, Eigen::MatrixXd& out) {
  const Eigen::Index d = out.rows();
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i, ++f) out(i, j) = out(j, i) = t(k, f);
  }
}

// One thread's share of an E-step pass: the current block's partial
// statistics (from zero), the exact sum of its finished blocks' partials
// (engine/exact_sum.h), and its buffers.
struct EStepWorker {
  GmmStatistics stats;
  Eigen::MatrixXd feature_sums;  // kFull: F x K, sum_i gamma_ik f(x_i).
  Eigen::MatrixXd gamma;         // B x K.
  Eigen::MatrixXd scratch;       // kFull: the block's features, B x F.
  internal::SettledScratch settled;
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
StatusOr<GmmStatistics> Merge(std::vector<EStepWorker>& workers, const RowSource& x,
                              bool exact) {
  GmmStatistics stats = std::move(workers[0].stats);
  Eigen::MatrixXd feature_sums = std::move(workers[0].feature_sums);
  if (exact) {
    DPEM_RETURN_IF_ERROR(internal::WriteExactSumOverRanks(
        x.collective(), MergeExactSums(workers, &EStepWorker::exact),
        ExactArrays(stats, feature_sums)));
  } else {
    const std::vector<StatisticArray> total = ExactArrays(stats, feature_sums);
    for (size_t t = 1; t < workers.size(); ++t) {
      const std::vector<StatisticArray> part = ExactArrays(workers[t].stats, workers[t].feature_sums);
      for (size_t a = 0; a < total.size(); ++a) {
        for (Eigen::Index j = 0; j < total[a].second; ++j) total[a].first[j] += part[a].first[j];
      }
    }
    DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(x.collective(), total));
  }
  for (size_t t = 1; t < workers.size(); ++t) stats.log_likelihood += workers[t].stats.log_likelihood;
  DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(x.collective(), {&stats.log_likelihood, 1}));
  if (stats.type == CovarianceType::kFull) UnpackFeatureSums(feature_sums.transpose(), stats);
  stats.n = x.rows();
  return stats;
}

// Readies worker `w` for a pass at `params`: zero statistics (and, for full
// covariances, zero feature sums) and an exact sum of their size.
void InitWorker(const GmmParameters& params, EStepWorker& w) {
  w.stats = ZeroStatistics(params);
  if (params.type == CovarianceType::kFull) {
    w.feature_sums.setZero(FeatureCount(params.dimension()), params.components());
  }
  w.exact = ExactSum(internal::TotalSize(ExactArrays(w.stats, w.feature_sums)));
}

// The dense work on `rows` (a block, or the records of a block that the
// shortcut left), in cache-sized sub-blocks of ChooseBlockRows(row_doubles)
// rows.
void DenseWork(const GmmDensityEvaluator& evaluator, const RowBlock& rows,
               Eigen::Index row_doubles, EStepWorker& w) {
  (void)ForEachSubBlock(rows, row_doubles, [&](const RowBlock& sub) {
    internal::BlockResponsibilities(evaluator, sub, w);
    Accumulate(sub, w);
    return OkStatus();
  });
}

// The pass; `exact` chooses exact sums (released statistics of unit-ball
// records) or plain floating-point sums (any scale); with `use_settled`, a
// full-covariance pass lets SettledRows take each block's settled records
// first where it is worthwhile at `params`.
StatusOr<GmmStatistics> ComputeStatisticsPass(const GmmParameters& params, const RowSource& x,
                                              const Engine& engine, bool exact,
                                              bool use_settled) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  const Eigen::Index k = params.components();
  const Eigen::Index d = params.dimension();
  DPEM_RETURN_IF_ERROR(internal::CheckDataColumns(params, x.cols()));
  const std::optional<internal::SettledRows> settled =
      use_settled ? internal::WorthwhileShortcut(params) : std::nullopt;
  const auto init = [&](EStepWorker& w) { InitWorker(params, w); };
  const Eigen::Index row_doubles = (params.type == CovarianceType::kFull ? FeatureCount(d) : d) + k;
  DPEM_ASSIGN_OR_RETURN(
      std::vector<EStepWorker> workers,
      engine.Reduce<EStepWorker>(
          x, row_doubles, init,
          [&](EStepWorker& w, const RowBlock& block, Eigen::Index) {
            if (settled &&
                settled->Claim(block, w.feature_sums, &w.stats.log_likelihood, w.settled) > 0) {
              const DataMatrix& rest = w.settled.unsettled;
              DenseWork(evaluator, RowBlock(rest.data(), rest.rows(), d), row_doubles, w);
            } else {
              DenseWork(evaluator, block, row_doubles, w);
            }
            if (exact) w.exact.FoldAndZero(ExactArrays(w.stats, w.feature_sums));
            return OkStatus();
          },
          internal::SubBlocksPerBlock(row_doubles, settled.has_value())));
  return Merge(workers, x, exact);
}

}  // namespace

StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params, const RowSource& x,
                                          const Engine& engine) {
  return ComputeStatisticsPass(params, x, engine, /*exact=*/true, /*use_settled=*/false);
}

StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params,
                                          const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  DPEM_RETURN_IF_ERROR(ValidateData(params, x));
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create(EngineOptions{}));
  return ComputeStatisticsPass(params, source, engine, /*exact=*/false, /*use_settled=*/true);
}

namespace internal {

StatusOr<GmmStatistics> ComputePlainFitStatistics(const GmmParameters& params,
                                                  const RowSource& x, const Engine& engine) {
  return ComputeStatisticsPass(params, x, engine, /*exact=*/true, /*use_settled=*/true);
}

}  // namespace internal

}  // namespace dpem
