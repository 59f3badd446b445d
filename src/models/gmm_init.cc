// The starting point of a Gaussian-mixture fit: see models/gmm_init.h.
#include "models/gmm_init.h"

#include <cmath>
#include <utility>
#include <vector>

#include "dpem/models/kmeans.h"
#include "dpem/random/samplers.h"
#include "models/gmm_kernels.h"
#include "models/kmeans_plusplus.h"

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
  Eigen::MatrixXd means(k, d);
  for (int c = 0; c < k; ++c) {
    DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd dir, SampleGaussianVector(gen, d, 1.0));
    const double norm = dir.norm();
    const double radius = std::pow(gen.UniformOpen01(), 1.0 / static_cast<double>(d));
    means.row(c) = (norm > 0 ? dir / norm : dir) * radius;
  }
  return WithMeans(means, type);
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
  std::vector<Worker> workers(static_cast<size_t>(engine.threads()));
  for (Worker& w : workers) w.stats = zero;
  DPEM_RETURN_IF_ERROR(engine.ForEachBlock(
      x, centres.rows() + x.cols(), [&](int thread, const RowBlock& block, Eigen::Index) {
        Worker& w = workers[static_cast<size_t>(thread)];
        nc.Assign(block, w.labels, w.distances, w.scratch);
        for (Eigen::Index i = 0; i < block.rows(); ++i) AddRecord(block.row(i), w.labels(i), w.stats);
        w.stats.n += block.rows();
        return OkStatus();
      }));
  for (size_t t = 1; t < workers.size(); ++t) {
    DPEM_RETURN_IF_ERROR(workers[0].stats.Add(workers[t].stats));
  }
  return std::move(workers[0].stats);
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
                                             const Engine& engine, Generator& gen) {
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
      return InvalidArgumentError("the private start is not available yet");
  }
  return InternalError("unhandled GmmInit");
}

}  // namespace dpem::internal
