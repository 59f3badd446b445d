// Defaults shared by Gaussian-mixture and k-means fits.
//
// The number of iterations J when the caller leaves it unset (0): fewer
// iterations from a private start, because each iteration's noise grows with
// J at a fixed budget and a start in the right basin needs few (docs/gmm.md,
// "Choosing J"; scripts/private_start_experiment.py and
// scripts/private_start_real_data.py measured it).
//
// Thread safety: constants and pure functions.
#ifndef DPEM_MODELS_FIT_DEFAULTS_H_
#define DPEM_MODELS_FIT_DEFAULTS_H_

#include <cmath>

namespace dpem {

// A private fit from the private start.
inline constexpr int kDefaultPrivateStartIterations = 3;
// k-means from the private start when its centres' noise is large
// (internal::DefaultPrivateStartIterations): one release of the iterations'
// whole budget, if r = sigma_1 sqrt(d) K / n is at least this. Measured on
// the peer table of docs/kmeans.md: J = 1 was better from r = 0.04 up
// (100k x 10 with 16 clusters at epsilon 0.1; 100k x 100 with 64 at 1 and
// 0.1), J = 3 better at r = 0.005 (Gowalla, K = 5, epsilon 1).
inline constexpr double kNoisyCentreRatio = 0.02;
// A Gaussian-mixture fit from the private start when its noise is small
// (internal::DefaultPrivateStartIterations of models/gmm): the papers' J if
// the same ratio r is below kQuietCentreRatio. From the private start,
// well-separated Gaussian clusters need 3 iterations at any noise, and
// each extra one costs them a little; clustered data that is not Gaussian
// (Gowalla's check-ins) keeps gaining up to J = 10, by more than the
// mixtures lose once the noise is small (docs/gmm.md, "Choosing J").
inline constexpr double kQuietCentreRatio = 0.006;
inline constexpr int kQuietPrivateStartIterations = 10;
// Above the same ratio (r >= kQuietCentreRatio), a Gaussian-mixture fit of
// J >= 4 iterations from the private start returns a weighted average of
// its last floor(J * kAveragedIterationShare) iterates
// (GmmFitOptions::iterate_averaging; docs/gmm.md, "Averaging the last
// iterates"): there the last iterate's error is mostly its release's noise,
// which averaging shrinks. Below it, and from the random start, the iterates
// still move, and the average lags behind the last one.
inline constexpr double kAveragedIterationShare = 0.5;
// The adaptive schedule (GmmFitOptions::adaptive_iterations; docs/gmm.md,
// "Adaptive J"): a Gaussian-mixture fit from the private start whose J is
// the default and whose noise is large (r >= kQuietCentreRatio) plans
// kAdaptiveIterations releases. The first kAdaptiveHeadIterations are the
// J = 3 default's, except that the last of them holds back
// kAdaptiveHeldBackShare of its share of the budget for the later releases
// (equal shares). After the head, the released means' movement
// (internal::MeanMovement) decides what the later releases release: below
// kSettledMovement the head's last statistics again, pooled with it into
// one M-step (the pool's noise is that of the J = 3 default's last
// release: well-separated Gaussian clusters lose nothing); otherwise EM iterations, for
// data whose EM keeps moving (Gowalla's check-ins, the Adult census
// columns). Measured in docs/gmm.md, "Adaptive J".
inline constexpr int kAdaptiveIterations = 6;
inline constexpr int kAdaptiveHeadIterations = kDefaultPrivateStartIterations;
inline constexpr double kAdaptiveHeldBackShare = 0.7;
inline constexpr double kSettledMovement = 1.0;
// A private fit from the random start (park2016's and park2017's J = 10).
inline constexpr int kDefaultRandomStartIterations = 10;
// A non-private fit (scikit-learn's GaussianMixture max_iter; dpem runs
// exactly J iterations).
inline constexpr int kDefaultPlainIterations = 100;

// The ratio r of the two rules above: the standard deviation of the noise
// on a typical cluster's mean, in units of the ball's radius, were the
// iterations' whole budget spent on one release: sigma_1 sqrt(d) / (n / K),
// sigma_1 being the noise on one coordinate of a sum in that release and
// n / K a cluster's count if they were equal. Public values only.
inline double CentreNoiseRatio(double sums_noise, long long dimension, int components,
                               long long n) {
  return sums_noise * std::sqrt(static_cast<double>(dimension)) *
         static_cast<double>(components) / static_cast<double>(n);
}

// The most components the private start serves: its sketch holds up to
// 10,000 points and the clustering of the sketch M x K distance matrices
// (80 MB each at K = 1000). A fit with more refuses an explicit private start before it
// reads the data and defaults to the random start.
inline constexpr int kMaxPrivateStartComponents = 1000;

// Whether a private fit of K components starts privately by default: for
// 2 <= K <= kMaxPrivateStartComponents (with K = 1 the first iteration finds
// the one component from any start, and the start's share of the budget
// would be wasted).
inline bool PrivateStartByDefault(int components) {
  return components >= 2 && components <= kMaxPrivateStartComponents;
}

// The default J of a fit that is private or not, and starts privately or not.
inline int DefaultIterations(bool is_private, bool private_start) {
  if (!is_private) return kDefaultPlainIterations;
  return private_start ? kDefaultPrivateStartIterations : kDefaultRandomStartIterations;
}

}  // namespace dpem

#endif  // DPEM_MODELS_FIT_DEFAULTS_H_
