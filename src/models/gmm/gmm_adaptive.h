// The adaptive schedule of a private Gaussian-mixture fit
// (GmmFitOptions::adaptive_iterations; docs/gmm.md, "Adaptive J"): its
// budget weights, the movement statistic that chooses what its later
// releases release, and the pool of a settled fit's repeated releases.
// Everything here reads released values and public options only. Private to
// the library.
//
// Thread safety: pure functions of their arguments; ReleasePool is not
// thread-safe.
#ifndef DPEM_MODELS_GMM_GMM_ADAPTIVE_H_
#define DPEM_MODELS_GMM_GMM_ADAPTIVE_H_

#include <vector>

#include "dpem/models/gmm/gmm.h"

namespace dpem::internal {

// The budget weights of the adaptive schedule of J = `iterations` releases
// (J > kAdaptiveHeadIterations = H), given the J = H default's schedule
// `head` (H weights summing to H; empty: equal). With f_i = head_i / H
// iteration i's share of the J = H fit's budget: w_i = f_i J for i < H,
// w_H = f_H (1 - kAdaptiveHeldBackShare) J, and each later release
// f_H kAdaptiveHeldBackShare J / (J - H). They sum to J (the cost of J equal
// iterations, as every schedule; CalibrationOptions::iteration_weights), the
// first H - 1 iterations cost what they cost in the J = H fit, and the H-th
// with the later ones costs what its H-th did.
std::vector<double> AdaptiveIterationWeights(const std::vector<double>& head, int iterations);

// The movement of the released means between two iterates of a private fit,
// in units of what their release noise alone would move them (docs/gmm.md,
// "Adaptive J"):
//   T = (1/K) sum_k n_k^2 (dmu_k^T Sigma_k^-1 dmu_k) / (d rho^2 (s_b^2 + s_a^2)),
// n_k = w_k n the component's released count after, dmu_k the change of its
// mean, Sigma_k its covariance after, s_b and s_a the standard deviations of
// the noise on a sum's coordinate in the two releases (`noise_before`,
// `noise_after`) and rho the frames' largest radius (`frame_radius`). A
// component frame of radius rho maps the noise on a sum to noise of
// covariance rho^2 s^2 Sigma_k / n_k^2 on the mean, so T is about 1 or less
// (frames are at most rho wide) when EM has settled and only the noise moves
// the means, and large when EM still moves them. A component whose
// covariance does not factor, a noise scale that underflows to 0 and a
// result that is not finite count as moving (the largest double, finite for
// a model file): never NaN. Requires both
// iterates of the same shapes, noises > 0, frame_radius > 0, n > 0.
double MeanMovement(const GmmParameters& before, const GmmParameters& after, double noise_before,
                    double noise_after, double frame_radius, double n);

// The weighted average of releases of the same statistics (a settled
// adaptive fit's repeated releases of its head's last E-step): each release
// weighted by its share of the budget schedule, which for Gaussian noise is
// its precision, so that the pool is the release of the whole share
// (inverse-variance weighting). Counts, sums and second moments are pooled;
// the log-likelihood is not a release and is NaN.
class ReleasePool {
 public:
  // Adds the released statistics `s` with weight `w` > 0; every Add must
  // have the type and shapes of the first.
  void Add(const GmmStatistics& s, double w);
  // The sum of the weights added (0 if none).
  double weight() const { return total_; }
  // The pooled statistics. Requires weight() > 0.
  GmmStatistics Result() const;

 private:
  GmmStatistics sum_;
  double total_ = 0.0;
};

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_ADAPTIVE_H_
