// Approximate leading eigenpairs of a large symmetric matrix by randomized
// subspace iteration (Halko, Martinsson and Tropp, SIAM Review 53(2), 2011:
// Alg. 4.4, the range finder with power iterations, then Alg. 5.3's
// Rayleigh-Ritz step): a handful of products of S with a block of k
// vectors, each reading S's lower triangle once (internal/symmetric_product.h),
// where Lanczos (internal/krylov_eigen_solver.h) needs hundreds of products
// with one vector when the top of the spectrum is a dense cluster, as in a
// noisy release. The eigenpairs are approximate: use them where an
// approximation is enough (the start of EM on a private release). Private to
// the library.
//
// Thread safety: reentrant; the products may start threads - 1 std::threads.
#ifndef DPEM_INTERNAL_RANDOMIZED_EIGEN_SOLVER_H_
#define DPEM_INTERNAL_RANDOMIZED_EIGEN_SOLVER_H_

#include <Eigen/Core>

#include <cstdint>

#include "dpem/status.h"
#include "internal/eigen_solver.h"

namespace dpem::internal {

// Block columns beyond the eigenpairs wanted (Halko et al.'s oversampling p).
inline constexpr Eigen::Index kRandomizedOversampling = 10;
// Power iterations q: products with S after the first (Halko et al. Sec.
// 4.5; each sharpens the subspace towards the top eigenvalues).
inline constexpr int kRandomizedPowerIterations = 4;
// Seed of the fixed Gaussian start block (numerical, not noise: the result
// is a function of S alone, reproducible, as Lanczos's fixed start is).
inline constexpr std::uint64_t kRandomizedStartSeed = 0x5eed5eedULL;

// Approximately the `count` largest eigenvalues of the symmetric matrix whose
// lower triangle is `lower`'s, and their eigenvectors (orthonormal), in
// descending order, signs fixed as FixEigenvectorSigns does: Ritz pairs of S
// on the subspace spanned by S^(q+1) G (orthonormalised after every
// product), G a fixed d x (count + kRandomizedOversampling) Gaussian block,
// q = kRandomizedPowerIterations. Exact when S has rank <= the block's
// width; otherwise each Ritz value is at most the eigenvalue of its rank.
// Requires `lower` square and finite and 1 <= count, count +
// kRandomizedOversampling <= d: InvalidArgument otherwise; NumericalError if
// the small eigenproblem fails.
StatusOr<Eigenpairs> RandomizedTopEigenpairs(const Eigen::MatrixXd& lower, Eigen::Index count,
                                             int threads);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_RANDOMIZED_EIGEN_SOLVER_H_
