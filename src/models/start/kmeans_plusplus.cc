// k-means++ seeding and Lloyd: see models/start/kmeans_plusplus.h.
#include "models/start/kmeans_plusplus.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/discrete_samplers.h"

namespace dpem::internal {
namespace {

// Squared distances (N x L) of every record of `x` to each row of
// `candidates` (L x d), clamped at 0 against rounding
// (NearestCentre::SquaredDistances). Threads write disjoint rows, so the
// result does not depend on the thread count.
StatusOr<Eigen::MatrixXd> SquaredDistances(const RowSource& x, const Eigen::MatrixXd& candidates,
                                           const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(candidates));
  Eigen::MatrixXd out(x.rows(), candidates.rows());
  DPEM_RETURN_IF_ERROR(engine.ForEachBlock(
      x, candidates.rows() + x.cols(), [&](int, const RowBlock& block, Eigen::Index first) {
        Eigen::MatrixXd d2;
        nc.SquaredDistances(block, d2);
        out.middleRows(first, block.rows()) = d2;
        return OkStatus();
      }));
  return out;
}

// The record index at which the running sum of `weights` first reaches
// `target` (numpy's searchsorted on the cumulative sum), at most N - 1.
Eigen::Index SearchCumulative(const Eigen::VectorXd& weights, double target) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < weights.size(); ++i) {
    sum += weights(i);
    if (sum >= target) return i;
  }
  return weights.size() - 1;
}

Eigen::RowVectorXd ReadRow(const RowSource& x, Eigen::Index i) {
  DataMatrix scratch;
  return x.Block(i, 1, scratch).row(0);
}

// One greedy step: draws `trials` candidates by D^2 sampling, keeps the one
// that lowers the potential most, and updates `closest`. Returns its index.
StatusOr<Eigen::Index> GreedyStep(const RowSource& x, int trials, const Engine& engine,
                                  Generator& gen, Eigen::VectorXd& closest) {
  const double potential = closest.sum();
  std::vector<Eigen::Index> ids(static_cast<size_t>(trials));
  Eigen::MatrixXd candidates(trials, x.cols());
  for (int t = 0; t < trials; ++t) {
    ids[static_cast<size_t>(t)] = SearchCumulative(closest, gen.UniformOpen01() * potential);
    candidates.row(t) = ReadRow(x, ids[static_cast<size_t>(t)]);
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd d2, SquaredDistances(x, candidates, engine));
  int best = 0;
  double best_potential = std::numeric_limits<double>::infinity();
  for (int t = 0; t < trials; ++t) {
    d2.col(t) = d2.col(t).cwiseMin(closest);
    const double p = d2.col(t).sum();
    if (p < best_potential) best_potential = p, best = t;
  }
  closest = d2.col(best);
  return ids[static_cast<size_t>(best)];
}

// The mean coordinate variance of `x`: sum ||x||^2 / N - ||mean||^2, over d.
StatusOr<double> MeanVariance(const RowSource& x, const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const KmeansStatistics s,
                        ComputeKmeansStatistics(Eigen::MatrixXd::Zero(1, x.cols()), x, engine));
  const double n = static_cast<double>(x.rows());
  const double total = s.sse / n - (s.sums.row(0) / n).squaredNorm();
  return std::max(0.0, total) / static_cast<double>(x.cols());
}

}  // namespace

StatusOr<Eigen::MatrixXd> KmeansPlusPlusSeeds(const RowSource& x, int k, const Engine& engine,
                                              Generator& gen) {
  if (k < 1 || k > x.rows()) {
    return InvalidArgumentError("k-means++ needs 1 <= K <= N (K = " + std::to_string(k) +
                                ", N = " + std::to_string(x.rows()) + ")");
  }
  const int trials = 2 + static_cast<int>(std::log(static_cast<double>(k)));
  Eigen::MatrixXd centres(k, x.cols());
  const auto first = static_cast<Eigen::Index>(
      SampleUniformBelow(gen, static_cast<std::uint64_t>(x.rows())));
  centres.row(0) = ReadRow(x, first);
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd d0,
                        SquaredDistances(x, centres.topRows(1), engine));
  Eigen::VectorXd closest = d0.col(0);
  for (int c = 1; c < k; ++c) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::Index id, GreedyStep(x, trials, engine, gen, closest));
    centres.row(c) = ReadRow(x, id);
  }
  return centres;
}

StatusOr<Eigen::MatrixXd> LloydToConvergence(const RowSource& x, Eigen::MatrixXd centres,
                                             int max_iterations, const Engine& engine) {
  if (max_iterations < 1) return InvalidArgumentError("Lloyd needs max_iterations >= 1");
  DPEM_ASSIGN_OR_RETURN(const double variance, MeanVariance(x, engine));
  const double tolerance = kLloydRelativeTolerance * variance;
  for (int it = 0; it < max_iterations; ++it) {
    DPEM_ASSIGN_OR_RETURN(const KmeansStatistics s, ComputeKmeansStatistics(centres, x, engine));
    Eigen::MatrixXd next = centres;
    for (Eigen::Index c = 0; c < centres.rows(); ++c) {
      if (s.counts(c) > 0) next.row(c) = s.sums.row(c) / s.counts(c);
    }
    const double shift = (next - centres).squaredNorm();
    centres = std::move(next);
    if (shift <= tolerance) break;
  }
  return centres;
}

StatusOr<Eigen::MatrixXd> KmeansPlusPlusCentres(const RowSource& x, int k, int max_iterations,
                                                const Engine& engine, Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd seeds, KmeansPlusPlusSeeds(x, k, engine, gen));
  return LloydToConvergence(x, std::move(seeds), max_iterations, engine);
}

}  // namespace dpem::internal
