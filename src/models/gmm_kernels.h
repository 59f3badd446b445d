// Block kernels shared by the Gaussian-mixture E-steps (gmm_estep.cc, the
// plain pass; gmm_framed_estep.cc, the private pass in component frames).
// Private to the library.
#ifndef DPEM_MODELS_GMM_KERNELS_H_
#define DPEM_MODELS_GMM_KERNELS_H_

#include <Eigen/Core>

#include "dpem/data/matrix.h"
#include "dpem/models/gmm.h"

namespace dpem::internal {

// F = d(d+1)/2 + d + 1, the number of quadratic features of R^d.
inline Eigen::Index FeatureCount(Eigen::Index d) { return d * (d + 1) / 2 + d + 1; }

// The quadratic features of each row of `block` into `features` (B x F,
// column-major): products x_i x_j (i <= j, column by column of the lower
// triangle: (0,0), (1,0), ..., (d-1,0), (1,1), ...), then x, then 1.
void QuadraticFeatures(const Eigen::Ref<const DataMatrix>& block, Eigen::MatrixXd* features);

// Unpacks the packed lower triangle (QuadraticFeatures' order) of row `k` of
// `t` into the symmetric d x d matrix `out`.
void UnpackSymmetric(const Eigen::MatrixXd& t, Eigen::Index k, Eigen::MatrixXd& out);

// Zero statistics of the shapes of `params`.
GmmStatistics ZeroStatistics(const GmmParameters& params);

// Turns log joint densities (rows x K) into responsibilities in place, by a
// log-sum-exp per row, and returns log p(x_i) per row. Results below the
// smallest normal double are flushed to exactly 0 (a component of weight 0,
// log joint -infinity, gets no responsibility at all). Every row must have a
// finite maximum.
Eigen::VectorXd NormalizeLogJoint(Eigen::MatrixXd& r);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_KERNELS_H_
