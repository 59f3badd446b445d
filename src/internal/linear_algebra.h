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
// already inside. If the eigen-solver does not converge, returns the diagonal
// matrix of sym's diagonal clamped to [lo, hi] instead (also a matrix with
// its eigenvalues in [lo, hi]; a repair, never an error, since callers
// post-process released values). Requires lo <= hi; the caller checks that
// `sym` is symmetric and finite. Never fails for such input.
StatusOr<Eigen::MatrixXd> ClampEigenvalues(const Eigen::MatrixXd& sym, double lo, double hi);

// Projects `v` onto the closed ball of radius `radius` about the origin:
// v / (||v|| / radius) if ||v|| > radius, computed without overflow for any
// finite entries; 0 if radius <= 0 or v has a non-finite entry. The
// post-processing of noisy sums onto the ball their noisy count allows
// (the private start).
void ProjectOntoBall(Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> v, double radius);

// ProjectOntoBall(v, 1): the models' domain projection of means and centres.
void ProjectOntoUnitBall(Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> v);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_LINEAR_ALGEBRA_H_
