// The starting point of a Gaussian-mixture fit: see models/gmm/gmm_init.h.
#include "models/gmm/gmm_init.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dpem/models/kmeans/kmeans.h"
#include "engine/rank_combine.h"
#include "models/gmm/gmm_kernels.h"
#include "models/start/kmeans_plusplus.h"
#include "models/gmm/gmm_frames.h"
#include "models/start/private_start.h"

namespace dpem::internal {
namespace {

// Equal weights, the given means, covariances I / (d + 2).
GmmParameters WithMeans(const Eigen::MatrixXd& means, CovarianceType type) {
  const Eigen::Index k = means.rows();
  const Eigen::Index d = means.cols();
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::VectorXd::Constant(k, 1.0 / static_cast<double>(k));
  p.means = means;
  p.covariances.assign(static_cast<size_t>(k),
                       Eigen::MatrixXd::Identity(d, d) / static_cast<double>(d + 2));
  return p;
}

// Adds one record's contribution to the statistics of cluster `c`.
void AddRecord(const Eigen::Ref<const Eigen::RowVectorXd>& x, Eigen::Index c,
               GmmStatistics& s) {
  s.counts(c) += 1.0;
  s.sums.row(c) += x;
  switch (s.type) {
    case CovarianceType::kFull:
      s.second_full[static_cast<size_t>(c)].noalias() += x.transpose() * x;
      break;
    case CovarianceType::kDiagonal:
      s.second_diag.row(c) += x.cwiseAbs2();
      break;
    case CovarianceType::kSpherical:
      s.second_trace(c) += x.squaredNorm();
      break;
  }
}

}  // namespace

StatusOr<GmmParameters> RandomGmmStart(int k, Eigen::Index d, CovarianceType type,
                                       Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd means, UniformInUnitBall(k, d, gen));
  return WithMeans(means, type);
}

StatusOr<GmmParameters> PrivateGmmStart(const RowSource& unit, CovarianceType type,
                                        double covariance_floor, double frame_radius,
                                        const PrivateStartPlan& plan,
                                        const Engine& engine, Generator& gen,
                                        PrivacyLedger& ledger) {
  DPEM_ASSIGN_OR_RETURN(const StartClusters clusters,
                        PrivateStart(unit, plan, engine, gen, ledger));
  const int k = plan.components;
  const Eigen::Index d = unit.cols();
  GmmParameters p = WithMeans(clusters.centres, type);
  p.weights = clusters.weights.cwiseMax(kMinStartWeight / k);
  p.weights /= p.weights.sum();
  // Half the distance to the nearest other centre, at most 1 (the ball's
  // radius, also for a single centre), in frame radii.
  const Eigen::VectorXd reach =
      (0.5 * NearestOtherDistances(clusters.centres)).cwiseMin(1.0) / frame_radius;
  const double largest = 1.0 / static_cast<double>(d + 2);
  for (int c = 0; c < k; ++c) {
    const double spread = clusters.spreads(c) / static_cast<double>(d);
    const double v = std::clamp(std::max(spread, reach(c) * reach(c)), covariance_floor,
                                std::max(covariance_floor, largest));
    p.covariances[static_cast<size_t>(c)] = Eigen::MatrixXd::Identity(d, d) * v;
  }
  return p;
}

StatusOr<GmmStatistics> HardAssignmentStatistics(const RowSource& x,
                                                 const Eigen::MatrixXd& centres,
                                                 CovarianceType type, const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(centres));
  if (centres.cols() != x.cols()) {
    return InvalidArgumentError("the centres and the data differ in dimension");
  }
  const GmmStatistics zero = ZeroStatistics(WithMeans(centres, type));
  struct Worker {
    GmmStatistics stats;
    Eigen::MatrixXd scratch;
    Eigen::VectorXi labels;
    Eigen::VectorXd distances;
  };
  DPEM_ASSIGN_OR_RETURN(
      std::vector<Worker> workers,
      engine.Reduce<Worker>(
          x, centres.rows() + x.cols(), [&](Worker& w) { w.stats = zero; },
          [&](Worker& w, const RowBlock& block, Eigen::Index) {
        nc.Assign(block, w.labels, w.distances, w.scratch);
        for (Eigen::Index i = 0; i < block.rows(); ++i) AddRecord(block.row(i), w.labels(i), w.stats);
        w.stats.n += block.rows();
        return OkStatus();
      }));
  for (size_t t = 1; t < workers.size(); ++t) {
    DPEM_RETURN_IF_ERROR(workers[0].stats.Add(workers[t].stats));
  }
  GmmStatistics& total = workers[0].stats;
  DPEM_RETURN_IF_ERROR(SumInRankOrder(x.collective(), StatisticArrays(total)));
  DPEM_RETURN_IF_ERROR(SumInRankOrder(x.collective(), {&total.log_likelihood, 1}));
  total.n = x.rows();
  return std::move(total);
}

StatusOr<GmmParameters> KmeansGmmStart(const RowSource& unit, int k, CovarianceType type,
                                       double covariance_floor, int max_iterations,
                                       const Engine& engine, Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd centres,
                        KmeansPlusPlusCentres(unit, k, max_iterations, engine, gen));
  DPEM_ASSIGN_OR_RETURN(const GmmStatistics s,
                        HardAssignmentStatistics(unit, centres, type, engine));
  MStepOptions m;
  m.estimator = Estimator::kMle;
  m.covariance_floor = covariance_floor;
  // A cluster with at least one record gets its own mean and covariance.
  m.min_count = 0.5;
  return MStep(s, WithMeans(centres, type), static_cast<double>(s.n), m);
}

StatusOr<GmmParameters> InitialGmmParameters(const RowSource& unit,
                                             const GmmFitOptions& options,
                                             const PrivateStartPlan* start,
                                             const Engine& engine,
                                             Generator& gen, PrivacyLedger* ledger) {
  switch (options.ResolvedInit()) {
    case GmmInit::kRandom:
      return RandomGmmStart(options.components, unit.cols(), options.covariance, gen);
    case GmmInit::kKmeansPlusPlus:
      if (options.IsPrivate()) {
        return InvalidArgumentError("a private fit cannot start from k-means++");
      }
      return KmeansGmmStart(unit, options.components, options.covariance,
                            options.covariance_floor, options.init_max_iterations, engine,
                            gen);
    case GmmInit::kPrivate:
      if (start == nullptr || ledger == nullptr) {
        return InvalidArgumentError("the private start needs a private fit's release");
      }
      return PrivateGmmStart(unit, options.covariance, options.covariance_floor,
                             options.frame_radius > 0.0 ? options.frame_radius
                                                        : DefaultFrameRadius(unit.cols()),
                             *start, engine, gen, *ledger);
  }
  return InternalError("unhandled GmmInit");
}

GmmParameters StartReadAs(GmmParameters start, CovarianceType type) {
  const Eigen::Index d = start.dimension();
  start.type = type;
  for (Eigen::MatrixXd& c : start.covariances) {
    const Eigen::VectorXd diagonal = c.diagonal();
    if (type == CovarianceType::kSpherical) {
      c = Eigen::MatrixXd::Identity(d, d) * (diagonal.sum() / static_cast<double>(d));
    } else if (type == CovarianceType::kDiagonal) {
      c = diagonal.asDiagonal();
    }
  }
  return start;
}

}  // namespace dpem::internal
