// The default number of iterations J of a Gaussian-mixture or k-means fit,
// used when the caller leaves it unset (0): fewer iterations from a private
// start, because each iteration's noise grows with J at a fixed budget and a
// start in the right basin needs few (docs/gmm.md, "Choosing J";
// scripts/private_start_experiment.py and scripts/private_start_real_data.py
// measured it).
//
// Thread safety: constants and a pure function.
#ifndef DPEM_MODELS_ITERATION_DEFAULTS_H_
#define DPEM_MODELS_ITERATION_DEFAULTS_H_

namespace dpem {

// A private fit from the private start.
inline constexpr int kDefaultPrivateStartIterations = 3;
// A private fit from the random start (park2016's and park2017's J = 10).
inline constexpr int kDefaultRandomStartIterations = 10;
// A non-private fit (scikit-learn's GaussianMixture max_iter; dpem runs
// exactly J iterations).
inline constexpr int kDefaultPlainIterations = 100;

// The default J of a fit that is private or not, and starts privately or not.
inline int DefaultIterations(bool is_private, bool private_start) {
  if (!is_private) return kDefaultPlainIterations;
  return private_start ? kDefaultPrivateStartIterations : kDefaultRandomStartIterations;
}

}  // namespace dpem

#endif  // DPEM_MODELS_ITERATION_DEFAULTS_H_
