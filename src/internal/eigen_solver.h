// Symmetric eigen-decompositions through LAPACK (LAPACKE_dsyevr / dsyevd of
// the system's OpenBLAS or reference LAPACK): the top eigenpairs of a large
// symmetric matrix in seconds where Eigen's SelfAdjointEigenSolver takes
// minutes (d = 4096). Private to the library.
//
// Thread safety: reentrant (LAPACK may use its own threads internally).
#ifndef DPEM_INTERNAL_EIGEN_SOLVER_H_
#define DPEM_INTERNAL_EIGEN_SOLVER_H_

#include <Eigen/Core>

#include "dpem/status.h"

namespace dpem::internal {

// Eigenpairs of a symmetric matrix: values(i) belongs to vectors.col(i).
struct Eigenpairs {
  Eigen::VectorXd values;   // In DESCENDING order.
  Eigen::MatrixXd vectors;  // d x count, orthonormal columns.
};

// The `count` largest eigenvalues of the symmetric `sym` and their
// eigenvectors (LAPACKE_dsyevr with range = indices d - count + 1 .. d),
// sorted in descending order; each eigenvector's sign is fixed so that its
// entry of largest magnitude is positive. Only the lower triangle of `sym`
// is read. Requires `sym` square, finite, and 1 <= count <= d:
// InvalidArgument otherwise; NumericalError if LAPACK fails.
StatusOr<Eigenpairs> TopEigenpairs(const Eigen::MatrixXd& sym, Eigen::Index count);

// The smallest eigenvalue of `sym` (LAPACKE_dsyevr with range = index 1, no
// eigenvectors). Only the lower triangle is read. Same requirements and
// errors as TopEigenpairs.
StatusOr<double> SmallestEigenvalue(const Eigen::MatrixXd& sym);

// Every eigenpair of `sym` (LAPACKE_dsyevd, divide and conquer), descending,
// signs fixed as above. Same requirements and errors as TopEigenpairs.
StatusOr<Eigenpairs> AllEigenpairs(const Eigen::MatrixXd& sym);

// Makes each column's entry of largest magnitude positive (the first such
// entry on ties): the sign convention of every eigen-solver here.
void FixEigenvectorSigns(Eigen::MatrixXd& vectors);

// V diag(max(l, floor)) V^T for sym = V diag(l) V^T, exactly symmetric: the
// Frobenius-nearest matrix whose eigenvalues are >= floor, by AllEigenpairs
// (the LAPACK counterpart of ClampEigenvalues for large d). Returns `sym`
// symmetrised when no eigenvalue is below the floor. Requires `sym` square and
// finite and `floor` finite. If `floored` is not null it receives the
// decomposition of the result (the eigenvalues max(l, floor), descending).
StatusOr<Eigen::MatrixXd> FloorEigenvalues(const Eigen::MatrixXd& sym, double floor,
                                           Eigenpairs* floored = nullptr);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_EIGEN_SOLVER_H_
