// Extreme eigenpairs of a large symmetric matrix by the implicitly restarted
// Lanczos method (Spectra's SymEigsSolver), with products that read only the
// lower triangle (internal/symmetric_product.h): O(d^2) per product and a
// few dozen to a few hundred products, where LAPACK's tridiagonal reduction
// costs O(d^3) (internal/eigen_solver.h). Private to the library.
//
// Thread safety: reentrant; the products may start threads - 1 std::threads.
#ifndef DPEM_INTERNAL_KRYLOV_EIGEN_SOLVER_H_
#define DPEM_INTERNAL_KRYLOV_EIGEN_SOLVER_H_

#include <Eigen/Core>

#include "dpem/status.h"
#include "internal/eigen_solver.h"

namespace dpem::internal {

// Spectra's convergence test: a Ritz pair (theta, v) is accepted when its
// residual ||S v - theta v|| is below kKrylovTolerance * |theta|.
inline constexpr double kKrylovTolerance = 1e-10;
// Lanczos vectors kept between restarts beyond the eigenpairs wanted (at
// least 2 count + 1 in all); 30 took the fewest products on the Olivetti
// matrices (top 10 of a noisy d = 4096 release: 391 to 447 products for 21
// to 60 vectors).
inline constexpr Eigen::Index kKrylovExtraVectors = 30;

// The least default budget of products (KrylovOptions::max_products): the
// top 10 of a 400 x 400 random symmetric matrix take about 400.
inline constexpr Eigen::Index kKrylovMinProducts = 2000;

// Options of the Krylov solvers.
struct KrylovOptions {
  int threads = 0;  // Threads of each product; <= 0 means OpenMP's default.
  double tolerance = kKrylovTolerance;
  // Give up (NumericalError) after about this many products; 0 means
  // max(d / 2, kKrylovMinProducts): for large d about the cost of LAPACK's
  // reduction, so that a caller falling back to LAPACK at most doubles the
  // time.
  Eigen::Index max_products = 0;
};

// True if a Krylov solver can find `count` eigenpairs of a d x d matrix:
// 1 <= count and count + kKrylovExtraVectors < d (Spectra needs more
// Lanczos vectors than eigenpairs and at most d of them).
bool KrylovCanSolve(Eigen::Index d, Eigen::Index count);

// The `count` largest eigenvalues of the symmetric matrix whose lower
// triangle is `lower`'s, and their eigenvectors, in descending order, each
// eigenvector's sign fixed as TopEigenpairs fixes it. Requires `lower` square
// and finite and KrylovCanSolve(d, count) (InvalidArgument otherwise);
// NumericalError if Spectra reports anything but success (not converged
// within max_products, or a numerical failure such as the breakdown of
// Lanczos on the zero matrix).
StatusOr<Eigenpairs> KrylovTopEigenpairs(const Eigen::MatrixXd& lower, Eigen::Index count,
                                         const KrylovOptions& options);

// The smallest eigenvalue of the same matrix, found as mu minus the largest
// eigenvalue of mu I - S with mu = 2 |largest|, where `largest` is S's
// largest eigenvalue or a bound on ||S||_2 (e.g. ||S||_F): every eigenvalue
// of mu I - S is then >= 0 and the largest is >= max(|lambda_max|,
// |lambda_min|), so the relative tolerance becomes one relative to
// |largest|, even when lambda_min is 0 or tiny. Same requirements (with
// count 1) and errors as KrylovTopEigenpairs.
StatusOr<double> KrylovSmallestEigenvalue(const Eigen::MatrixXd& lower, double largest,
                                          const KrylovOptions& options);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_KRYLOV_EIGEN_SOLVER_H_
