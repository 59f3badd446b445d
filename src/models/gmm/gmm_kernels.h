// What the Gaussian-mixture E-steps share (gmm_estep.cc, the plain pass;
// gmm_framed_estep.cc, the private pass in component frames). Private to the
// library.
#ifndef DPEM_MODELS_GMM_GMM_KERNELS_H_
#define DPEM_MODELS_GMM_GMM_KERNELS_H_

#include <Eigen/Core>

#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "engine/exact_sum.h"

namespace dpem::internal {

// F = d(d+1)/2 + d + 1, the number of quadratic features of R^d.
inline Eigen::Index FeatureCount(Eigen::Index d) { return d * (d + 1) / 2 + d + 1; }

// Zero statistics of the shapes of `params`.
GmmStatistics ZeroStatistics(const GmmParameters& params);

// The released arrays of `s`, in a fixed order, for its exact sum
// (engine/exact_sum.h): counts, sums, then each full second moment, the
// diagonal ones or the traces, as the type has them.
std::vector<StatisticArray> StatisticArrays(GmmStatistics& s);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_KERNELS_H_
