// k-means++ seeding and Lloyd: see models/start/kmeans_plusplus.h.
#include "models/start/kmeans_plusplus.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/discrete_samplers.h"
#include "engine/rank_combine.h"

namespace dpem::internal {
namespace {

// Squared distances (n x L) of each of the n records this process holds
// (all N, or a rank's shard: RowSource::LocalRows) to each row of
// `candidates` (L x d), clamped at 0 against rounding
// (NearestCentre::SquaredDistances). Threads write disjoint rows, so the
// result does not depend on the thread count.
StatusOr<Eigen::MatrixXd> SquaredDistances(const RowSource& x, const Eigen::MatrixXd& candidates,
                                           const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(candidates));
  const RowRange local = x.LocalRows();
  Eigen::MatrixXd out(local.size(), candidates.rows());
  DPEM_RETURN_IF_ERROR(engine.ForEachBlock(
      x, candidates.rows() + x.cols(), [&](int, const RowBlock& block, Eigen::Index first) {
        Eigen::MatrixXd d2;
        nc.SquaredDistances(block, d2);
        out.middleRows(first - local.begin, block.rows()) = d2;
        return OkStatus();
      }));
  return out;
}

// The sums over the whole table of the columns of `local` (one row per
// record this process holds), each rank's added in rank order.
StatusOr<Eigen::RowVectorXd> TableColumnSums(const RowSource& x, const Eigen::MatrixXd& local) {
  Eigen::RowVectorXd sums = local.colwise().sum();
  DPEM_RETURN_IF_ERROR(SumInRankOrder(x.collective(), {sums.data(), static_cast<size_t>(sums.size())}));
  return sums;
}

// The index of the first of `weights` at which their running sum reaches
// `target` (numpy's searchsorted on the cumulative sum), or -1.
Eigen::Index SearchCumulative(const Eigen::VectorXd& weights, double target) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < weights.size(); ++i) {
    sum += weights(i);
    if (sum >= target) return i;
  }
  return -1;
}

// The table row at which the running sum of the records' weights first
// reaches `target`, at most N - 1; `local` holds the weights of the rows
// this process holds. Across ranks: the rank in whose rows the target falls
// (by the ranks' totals, in rank order) searches its own.
StatusOr<Eigen::Index> SearchTable(const RowSource& x, const Eigen::VectorXd& local,
                                   double target) {
  const Collective* c = x.collective();
  const RowRange rows = x.LocalRows();
  if (IsSingleProcess(c)) {
    const Eigen::Index i = SearchCumulative(local, target);
    return i < 0 ? x.rows() - 1 : rows.begin + i;
  }
  std::vector<double> totals(static_cast<size_t>(c->size()), 0.0);
  totals[static_cast<size_t>(c->rank())] = local.sum();
  DPEM_RETURN_IF_ERROR(SumInRankOrder(c, totals));
  double before = 0.0;
  int owner = -1;
  for (int r = 0; r < c->size() && owner < 0; ++r) {
    if (before + totals[static_cast<size_t>(r)] >= target) owner = r;
    else before += totals[static_cast<size_t>(r)];
  }
  double found = 0.0;  // The owner's row + 1; every other rank adds 0.
  if (owner == c->rank()) {
    const Eigen::Index i = SearchCumulative(local, target - before);
    found = static_cast<double>(i < 0 ? rows.end - 1 : rows.begin + i) + 1.0;
  }
  DPEM_RETURN_IF_ERROR(SumInRankOrder(c, {&found, 1}));
  return found >= 1.0 ? static_cast<Eigen::Index>(found) - 1 : x.rows() - 1;
}

// One greedy step: draws `trials` candidates by D^2 sampling, keeps the one
// that lowers the potential most, and updates `closest` (the squared
// distances of the rows this process holds). Returns its table row.
StatusOr<Eigen::Index> GreedyStep(const RowSource& x, int trials, const Engine& engine,
                                  Generator& gen, Eigen::VectorXd& closest) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::RowVectorXd potential, TableColumnSums(x, closest));
  std::vector<Eigen::Index> ids(static_cast<size_t>(trials));
  Eigen::MatrixXd candidates(trials, x.cols());
  for (int t = 0; t < trials; ++t) {
    DPEM_ASSIGN_OR_RETURN(ids[static_cast<size_t>(t)],
                          SearchTable(x, closest, gen.UniformOpen01() * potential(0)));
    DPEM_ASSIGN_OR_RETURN(candidates.row(t), ReadRowOnEveryRank(x, ids[static_cast<size_t>(t)]));
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd d2, SquaredDistances(x, candidates, engine));
  for (int t = 0; t < trials; ++t) d2.col(t) = d2.col(t).cwiseMin(closest);
  DPEM_ASSIGN_OR_RETURN(const Eigen::RowVectorXd potentials, TableColumnSums(x, d2));
  int best = 0;
  double best_potential = std::numeric_limits<double>::infinity();
  for (int t = 0; t < trials; ++t) {
    if (potentials(t) < best_potential) best_potential = potentials(t), best = t;
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
  DPEM_ASSIGN_OR_RETURN(centres.row(0), ReadRowOnEveryRank(x, first));
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd d0,
                        SquaredDistances(x, centres.topRows(1), engine));
  Eigen::VectorXd closest = d0.col(0);
  for (int c = 1; c < k; ++c) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::Index id, GreedyStep(x, trials, engine, gen, closest));
    DPEM_ASSIGN_OR_RETURN(centres.row(c), ReadRowOnEveryRank(x, id));
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
