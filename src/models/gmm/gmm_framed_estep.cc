// The private E-step pass in component frames (gmm_frames.h): the
// responsibilities of the plain pass (GmmDensityEvaluator), then, for each
// component, every record's frame coordinates u computed explicitly and
// accumulated as they are: sum g, sum g u, sum g T(u), each block's partial
// from zero, the partials summed exactly (engine/exact_sum.h).
//
// Why explicitly. The framed statistics could be had from global sums by an
// affine map (S^{-1}(sum g x - N m), ...), but that map multiplies the sums'
// rounding error by up to 1 / (rho^2 lambda_min), which grows with N and
// without bound as a component shrinks; the error would be data-dependent and
// could exceed the sensitivity. Accumulating the u's themselves makes the
// released sums ordinary floating-point sums of vectors in the unit ball, as
// in the global frame.
//
// The unit ball, as computed. For a local frame, y = S^{-1} x - S^{-1} m
// comes from one matrix product per block for all components (with the
// triangular inverses S^{-1}), its squared norm n_y is computed, and
// internal::ShrinkIntoUnitBall (internal/unit_ball.h) makes u from it:
//   u = y                         if n_y <= kInsideSquared,
//   u = y * kShrunkRadius / sqrt(n_y)   otherwise,
//   u = 0                         if n_y is not finite (overflow; any vector
//                                 of norm <= 1 keeps the sensitivity),
// so every accumulated u has norm at most 1. Global frames
// accumulate the unit-ball records themselves (the domain map guarantees
// their norm).
#include <Eigen/Core>

#include <cmath>
#include <string>
#include <vector>

#include "engine/exact_sum.h"
#include "engine/rank_combine.h"
#include "internal/unit_ball.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_kernels.h"

namespace dpem::internal {
namespace {

struct FramedWorker {
  GmmStatistics stats;          // The current block's partial, from zero.
  ExactSum exact;               // The finished blocks' partials, exactly.
  Eigen::MatrixXd gamma, scratch;
  Eigen::MatrixXd u;            // (K d) x B: column i holds record i's u_k.
  Eigen::MatrixXd weighted;     // d x B: u scaled by the responsibilities.
};

// Adds sum_i g_i (1, u_i, T(u_i)) of component k into `s`.
void Accumulate(const Eigen::Ref<const Eigen::MatrixXd>& u,
                const Eigen::Ref<const Eigen::VectorXd>& g,
                Eigen::Index k, Eigen::MatrixXd& weighted, GmmStatistics& s) {
  s.counts(k) += g.sum();
  s.sums.row(k).noalias() += (u * g).transpose();
  switch (s.type) {
    case CovarianceType::kFull:
      weighted = u * g.asDiagonal();
      s.second_full[k].noalias() += weighted * u.transpose();
      break;
    case CovarianceType::kDiagonal:
      s.second_diag.row(k).noalias() += (u.cwiseAbs2() * g).transpose();
      break;
    case CovarianceType::kSpherical:
      s.second_trace(k) += u.colwise().squaredNorm().dot(g);
      break;
  }
}

}  // namespace

void FrameCoordinates(const RowBlock& x, const StackedFrames& frames, Eigen::MatrixXd& u) {
  const Eigen::Index d = x.cols();
  u.noalias() = frames.inverse_scales * x.transpose();
  u.colwise() -= frames.inverse_scale_origins;
  for (size_t k = 0; k < frames.local.size(); ++k) {
    if (!frames.local[k]) continue;  // u = x (identity map), in the ball.
    const Eigen::Index first = static_cast<Eigen::Index>(k) * d;
    auto block = u.middleRows(first, d);
    const Eigen::RowVectorXd norms = block.colwise().squaredNorm();
    for (Eigen::Index i = 0; i < block.cols(); ++i) ShrinkIntoUnitBall(block.col(i), norms(i));
  }
}

StatusOr<GmmStatistics> ComputeFramedStatistics(const GmmParameters& params,
                                                const std::vector<ComponentFrame>& frames,
                                                const RowSource& unit, const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  const Eigen::Index k_count = params.components();
  const Eigen::Index d = params.dimension();
  if (frames.size() != static_cast<size_t>(k_count)) {
    return InvalidArgumentError("one frame per component is needed");
  }
  DPEM_RETURN_IF_ERROR(CheckDataColumns(params, unit.cols()));
  const StackedFrames stacked = StackFrames(frames);
  const auto init = [&](FramedWorker& w) {
    w.stats = ZeroStatistics(params);
    w.exact = ExactSum(TotalSize(StatisticArrays(w.stats)));
  };
  const Eigen::Index row_doubles = FeatureCount(d) + k_count + k_count * d + d;
  DPEM_ASSIGN_OR_RETURN(
      std::vector<FramedWorker> workers,
      engine.Reduce<FramedWorker>(unit, row_doubles, init,
                                  [&](FramedWorker& w, const RowBlock& block, Eigen::Index) {
        BlockResponsibilities(evaluator, block, w);
        FrameCoordinates(block, stacked, w.u);
        for (Eigen::Index k = 0; k < k_count; ++k) {
          Accumulate(w.u.middleRows(k * d, d), w.gamma.col(k), k, w.weighted, w.stats);
        }
        w.exact.FoldAndZero(StatisticArrays(w.stats));
        return OkStatus();
      }));
  GmmStatistics total = std::move(workers[0].stats);
  DPEM_RETURN_IF_ERROR(WriteExactSumOverRanks(
      unit.collective(), MergeExactSums(workers, &FramedWorker::exact), StatisticArrays(total)));
  for (size_t t = 1; t < workers.size(); ++t) total.log_likelihood += workers[t].stats.log_likelihood;
  DPEM_RETURN_IF_ERROR(SumInRankOrder(unit.collective(), {&total.log_likelihood, 1}));
  total.n = unit.rows();
  return total;
}

}  // namespace dpem::internal
