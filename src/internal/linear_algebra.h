// Linear-algebra helpers shared by the mechanisms and models. Private to the
// library.
#ifndef DPEM_INTERNAL_LINEAR_ALGEBRA_H_
#define DPEM_INTERNAL_LINEAR_ALGEBRA_H_

#include <Eigen/Core>

#include "dpem/status.h"

namespace dpem::internal {

// The Frobenius-nearest symmetric matrix to symmetric `sym` whose eigenvalues
// lie in [lo, hi] (hi may be +infinity): eigen-decompose, clamp, reassemble,
// symmetrise exactly. Returns the symmetrised input when its eigenvalues are
// already inside. NumericalError if the eigen-solver fails. Requires
// lo <= hi; the caller checks that `sym` is symmetric and finite.
StatusOr<Eigen::MatrixXd> ClampEigenvalues(const Eigen::MatrixXd& sym, double lo, double hi);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_LINEAR_ALGEBRA_H_
