// Products of a large symmetric matrix with a few vectors, reading only its
// lower triangle: what factor analysis's EM iterations and the Krylov
// eigen-solver spend their time on (d = 4096: a 128 MiB matrix, read once per
// product; the product is bound by memory, not flops). Private to the
// library.
//
// Thread safety: reentrant; a product may start threads - 1 std::threads.
#ifndef DPEM_INTERNAL_SYMMETRIC_PRODUCT_H_
#define DPEM_INTERNAL_SYMMETRIC_PRODUCT_H_

#include <Eigen/Core>

namespace dpem::internal {

// Below this dimension a product runs in one part on the calling thread
// (splitting a matrix that fits in cache costs more than it saves).
inline constexpr Eigen::Index kSymmetricProductSerialDimension = 512;
// The number of column ranges the lower triangle is cut into above that
// dimension (equal areas; one partial result each, added in range order):
// fixed, so that the result does not depend on the thread count.
inline constexpr int kSymmetricProductParts = 16;

// Returns S X for the symmetric d x d matrix S whose lower triangle (diagonal
// included) is `lower`'s; the strict upper triangle of `lower` is never read.
// X is d x k, k >= 0. The columns of the triangle are taken in panels of a few
// columns, each panel read once from memory for both of its uses (its
// entries as S(i, j) and as S(j, i)). `threads` <= 0 means OpenMP's default
// (all cores without OpenMP). The bits of the result never depend on
// `threads`.
// Requires `lower` square with x.rows() rows (checked by assertion only).
Eigen::MatrixXd SymmetricProduct(const Eigen::MatrixXd& lower,
                                 const Eigen::Ref<const Eigen::MatrixXd>& x, int threads);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_SYMMETRIC_PRODUCT_H_
