// The post-processing of a private Gaussian-mixture M-step: see
// models/gmm/gmm_post_process.h.
#include "models/gmm/gmm_post_process.h"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "internal/linear_algebra.h"

namespace dpem::internal {
namespace {

// Post-processing of a private M-step that uses only the public domain: every
// record lies in the unit ball, so a mixture fitted to them has its means in
// the ball and no variance above 1. Noisy statistics can break both; project
// the means onto the ball and the covariances' eigenvalues into
// [floor, kMaxUnitBallVariance]. A full covariance reassembled from clamped
// eigenvalues that still fails its Cholesky factorisation (rounding) is
// replaced by its clamped diagonal, so that the next E-step never refuses the
// parameters (a repair of released values, never an error).
constexpr double kMaxUnitBallVariance = 1.0;

// Projects `p` onto the domain as above, component c's eigenvalues floored
// at floors(c).
Status ProjectToDomain(GmmParameters& p, const Eigen::VectorXd& floors) {
  for (Eigen::Index c = 0; c < p.components(); ++c) {
    const double floor = floors(c);
    ProjectOntoUnitBall(p.means.row(c));
    Eigen::MatrixXd& cov = p.covariances[c];
    if (p.type == CovarianceType::kFull) {
      DPEM_ASSIGN_OR_RETURN(cov, ClampEigenvalues(cov, floor, kMaxUnitBallVariance));
      if (Eigen::LLT<Eigen::MatrixXd>(cov).info() == Eigen::Success) continue;
    }
    // Diagonal and spherical (and the fallback): eigenvalues = diagonal.
    const Eigen::VectorXd diagonal = cov.diagonal().cwiseMax(floor).cwiseMin(kMaxUnitBallVariance);
    cov = diagonal.asDiagonal();
  }
  return OkStatus();
}

// The eigenvalue floor of each private covariance: the standard deviation of
// the noise its released second moment carries per entry, divided by the
// noisy count (and by d for a spherical trace), times sqrt(d) for a full
// matrix (the order of the noise matrix's spectral norm). Eigenvalues below it
// are indistinguishable from noise. Post-processing of released values only.
Eigen::VectorXd NoiseAwareFloors(const GmmStatistics& noisy, const GmmReleasePlan& plan,
                                 const GmmFitOptions& o) {
  const double d = static_cast<double>(noisy.sums.cols());
  const double per_entry = plan.SecondNoise();
  double factor = 1.0;
  if (o.covariance == CovarianceType::kFull) factor = std::sqrt(d);
  if (o.covariance == CovarianceType::kSpherical) factor = 1.0 / d;
  Eigen::VectorXd floors(noisy.counts.size());
  for (Eigen::Index c = 0; c < floors.size(); ++c) {
    const double n_k = std::max(noisy.counts(c), 1.0);
    floors(c) = std::max(o.covariance_floor, factor * per_entry / n_k);
  }
  return floors;
}

}  // namespace

Status PostProcessGmm(GmmParameters& p, const GmmStatistics& noisy, const GmmReleasePlan& plan,
                      const GmmFitOptions& o, const std::vector<ComponentFrame>& frames) {
  Eigen::VectorXd floors = NoiseAwareFloors(noisy, plan, o);
  if (!frames.empty()) {
    DPEM_RETURN_IF_ERROR(FloorInFrames(p, frames, floors));
    for (Eigen::Index c = 0; c < floors.size(); ++c) {
      if (frames[static_cast<size_t>(c)].local) floors(c) = o.covariance_floor;
    }
  }
  return ProjectToDomain(p, floors);
}

void IterateAverage::Add(const GmmParameters& p, double w) {
  if (total_ == 0.0) {
    sum_ = p;
    sum_.weights *= w;
    sum_.means *= w;
    for (Eigen::MatrixXd& c : sum_.covariances) c *= w;
  } else {
    sum_.weights += w * p.weights;
    sum_.means += w * p.means;
    for (std::size_t k = 0; k < sum_.covariances.size(); ++k) {
      sum_.covariances[k] += w * p.covariances[k];
    }
  }
  total_ += w;
}

GmmParameters IterateAverage::Result() const {
  GmmParameters average = sum_;
  average.weights /= average.weights.sum();
  average.means /= total_;
  for (Eigen::MatrixXd& c : average.covariances) c /= total_;
  return average;
}

}  // namespace dpem::internal
