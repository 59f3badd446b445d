// The adaptive schedule of a private Gaussian-mixture fit: see
// models/gmm/gmm_adaptive.h.
#include "models/gmm/gmm_adaptive.h"

#include <Eigen/Cholesky>

#include <cstddef>
#include <limits>

#include "dpem/models/fit_defaults.h"

namespace dpem::internal {

std::vector<double> AdaptiveIterationWeights(const std::vector<double>& head, int iterations) {
  constexpr int kHead = kAdaptiveHeadIterations;
  const double j = iterations;
  std::vector<double> w(static_cast<std::size_t>(iterations));
  for (int i = 0; i < kHead; ++i) {
    const double share = (head.empty() ? 1.0 : head[static_cast<std::size_t>(i)]) / kHead;
    w[static_cast<std::size_t>(i)] = share * j;
  }
  const double last = w[kHead - 1];
  w[kHead - 1] = last * (1.0 - kAdaptiveHeldBackShare);
  for (int i = kHead; i < iterations; ++i) {
    w[static_cast<std::size_t>(i)] = last * kAdaptiveHeldBackShare / (iterations - kHead);
  }
  return w;
}

double MeanMovement(const GmmParameters& before, const GmmParameters& after, double noise_before,
                    double noise_after, double frame_radius, double n) {
  const double d = static_cast<double>(after.dimension());
  constexpr double kMoving = std::numeric_limits<double>::max();
  const double noise = d * frame_radius * frame_radius *
                       (noise_before * noise_before + noise_after * noise_after);
  if (!(noise > 0.0)) return kMoving;  // Underflow (a tiny fixed radius).
  double total = 0.0;
  for (Eigen::Index k = 0; k < after.components(); ++k) {
    const Eigen::VectorXd moved = (after.means.row(k) - before.means.row(k)).transpose();
    const Eigen::LLT<Eigen::MatrixXd> llt(after.covariances[static_cast<std::size_t>(k)]);
    if (llt.info() != Eigen::Success) return kMoving;
    const double count = after.weights(k) * n;
    total += count * count * moved.dot(llt.solve(moved)) / noise;
  }
  const double t = total / static_cast<double>(after.components());
  return t <= kMoving ? t : kMoving;  // NaN and +infinity count as moving.
}

void ReleasePool::Add(const GmmStatistics& s, double w) {
  if (total_ == 0.0) {
    sum_ = s;
    sum_.counts *= w;
    sum_.sums *= w;
    for (Eigen::MatrixXd& m : sum_.second_full) m *= w;
    sum_.second_diag *= w;
    sum_.second_trace *= w;
  } else {
    sum_.counts += w * s.counts;
    sum_.sums += w * s.sums;
    for (std::size_t k = 0; k < sum_.second_full.size(); ++k) {
      sum_.second_full[k] += w * s.second_full[k];
    }
    sum_.second_diag += w * s.second_diag;
    sum_.second_trace += w * s.second_trace;
  }
  total_ += w;
}

GmmStatistics ReleasePool::Result() const {
  GmmStatistics pooled = sum_;
  pooled.counts /= total_;
  pooled.sums /= total_;
  for (Eigen::MatrixXd& m : pooled.second_full) m /= total_;
  pooled.second_diag /= total_;
  pooled.second_trace /= total_;
  pooled.log_likelihood = std::numeric_limits<double>::quiet_NaN();
  return pooled;
}

}  // namespace dpem::internal
