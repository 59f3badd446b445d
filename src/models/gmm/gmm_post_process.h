// The post-processing of a private Gaussian-mixture M-step
// (dpem/models/gmm/private_gmm.h): noise-aware eigenvalue floors of the
// covariances and the projection of the parameters onto the public domain;
// and the average of a fit's last iterates.
// It reads released values and public options only. Private to the library.
//
// Thread safety: pure functions of their arguments.
#ifndef DPEM_MODELS_GMM_GMM_POST_PROCESS_H_
#define DPEM_MODELS_GMM_GMM_POST_PROCESS_H_

#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/status.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_release_plan.h"

namespace dpem::internal {

// The private M-step's post-processing of the unit-ball parameters `p`
// computed from the released statistics `noisy` (released by `plan`, in the
// component frames `frames`, empty for the plain pass): covariances floored
// at the noise level in the frame their statistics were released in, then
// projected onto the domain (means in the unit ball, covariance eigenvalues
// in [floor, 1]). Requires the shapes of `p`, `noisy` and `frames` (if any)
// to agree.
Status PostProcessGmm(GmmParameters& p, const GmmStatistics& noisy, const GmmReleasePlan& plan,
                      const GmmFitOptions& o, const std::vector<ComponentFrame>& frames);

// The weighted average of a private fit's last iterates (GmmFitOptions::
// iterate_averaging; docs/gmm.md, "Averaging the last iterates"): weights,
// means and covariances averaged entry by entry, weight w_t for iterate t.
// Every iterate is post-processed released values, so the average is too;
// a convex combination of parameters in the domain stays in it (means in
// the unit ball; covariance eigenvalues in [f, 1], f the smallest of the
// iterates' floors, which vary by iteration and component and are all at
// least GmmFitOptions::covariance_floor), and a spherical or diagonal
// covariance keeps its structure. Not thread-safe.
class IterateAverage {
 public:
  // Adds `p` with weight `w` > 0; every Add must have the shapes and type
  // of the first.
  void Add(const GmmParameters& p, double w);
  // Whether nothing has been added.
  bool empty() const { return total_ == 0.0; }
  // The average (weights renormalised to sum 1 against rounding). Requires
  // !empty().
  GmmParameters Result() const;

 private:
  GmmParameters sum_;
  double total_ = 0.0;
};

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_POST_PROCESS_H_
