// Randomized subspace iteration: see internal/randomized_eigen_solver.h.
#include "internal/randomized_eigen_solver.h"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <cstdint>
#include <string>

#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "internal/symmetric_product.h"

namespace dpem::internal {
namespace {

// An orthonormal basis of y's columns (the thin Q of Householder QR).
Eigen::MatrixXd Orthonormalised(const Eigen::MatrixXd& y) {
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(y);
  return qr.householderQ() * Eigen::MatrixXd::Identity(y.rows(), y.cols());
}

}  // namespace

StatusOr<Eigenpairs> RandomizedTopEigenpairs(const Eigen::MatrixXd& lower, Eigen::Index count,
                                             int threads) {
  const Eigen::Index d = lower.rows();
  if (lower.cols() != d || count < 1 || count + kRandomizedOversampling > d) {
    return InvalidArgumentError("randomized eigenpairs need a square matrix and 1 <= count <= "
                                "d - " + std::to_string(kRandomizedOversampling));
  }
  if (!lower.allFinite()) return InvalidArgumentError("the matrix must be finite");
  const Eigen::Index k = count + kRandomizedOversampling;
  Generator start = Generator::FromSeed(kRandomizedStartSeed);
  Eigen::MatrixXd q(d, k);
  for (Eigen::Index j = 0; j < k; ++j) {
    for (Eigen::Index i = 0; i < d; ++i) q(i, j) = SampleStandardNormal(start);
  }
  q = Orthonormalised(q);
  for (int it = 0; it <= kRandomizedPowerIterations; ++it) {
    q = Orthonormalised(SymmetricProduct(lower, q, threads));
  }
  const Eigen::MatrixXd sq = SymmetricProduct(lower, q, threads);
  const Eigen::MatrixXd small = q.transpose() * sq;  // Q^T S Q, k x k.
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (small + small.transpose()));
  if (eig.info() != Eigen::Success) {
    return NumericalError("randomized eigenpairs: the Rayleigh-Ritz step failed");
  }
  Eigenpairs top;  // The solver's eigenvalues ascend: take the last `count`, reversed.
  top.values = eig.eigenvalues().tail(count).reverse();
  top.vectors = q * eig.eigenvectors().rightCols(count).rowwise().reverse();
  FixEigenvectorSigns(top.vectors);
  return top;
}

}  // namespace dpem::internal
