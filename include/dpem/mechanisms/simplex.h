// Euclidean projection onto the (floored) probability simplex: the
// post-processing that turns noisy mixing weights into weights.
//
// park2016 (Sec. 4.2, footnote 4) clamps noisy weights to [0, 1] and
// renormalises; dpem uses the Euclidean projection instead, which is the
// nearest point of the feasible set (Duchi, Shalev-Shwartz, Singer, Chandra,
// ICML 2008, Fig. 1), optionally with a positive floor so that no component
// dies. Post-processing of released values: costs no privacy.
#ifndef DPEM_MECHANISMS_SIMPLEX_H_
#define DPEM_MECHANISMS_SIMPLEX_H_

#include <Eigen/Core>

#include "dpem/status.h"

namespace dpem {

// The Euclidean projection of `v` onto {w in R^K : w_k >= floor, sum_k w_k = 1}
// (Duchi et al. 2008, Fig. 1, applied to v - floor on the simplex of radius
// 1 - K floor): w_k = max(v_k - tau, floor) for the unique tau making the sum
// 1. Requires K = v.size() >= 1, all v finite, floor finite, floor >= 0 and
// K * floor < 1; InvalidArgument otherwise.
StatusOr<Eigen::VectorXd> ProjectToSimplex(const Eigen::VectorXd& v,
                                           double floor = 0.0);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_SIMPLEX_H_
