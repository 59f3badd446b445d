// Random test matrices for the eigen-solver tests (test data, not noise: a
// std::mt19937_64 stream from a fixed seed).
#ifndef DPEM_TESTING_RANDOM_MATRICES_H_
#define DPEM_TESTING_RANDOM_MATRICES_H_

#include <Eigen/Core>
#include <Eigen/QR>

#include <random>

namespace dpem::test_support {

// rows x cols independent N(0, 1) entries from `seed`.
inline Eigen::MatrixXd GaussianMatrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd a(rows, cols);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = n(rng);
  return a;
}

// A Haar-like d x d orthogonal matrix: Q of the QR decomposition of a
// Gaussian one.
inline Eigen::MatrixXd RandomOrthogonal(Eigen::Index d, unsigned seed) {
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(GaussianMatrix(d, d, seed));
  return qr.householderQ();
}

// Q diag(spectrum) Q^T with its strict upper triangle overwritten by garbage
// (-7e300): a planted spectrum for solvers that read only the lower triangle,
// which must never read the rest.
inline Eigen::MatrixXd PlantedLowerTriangle(const Eigen::MatrixXd& q,
                                            const Eigen::VectorXd& spectrum) {
  Eigen::MatrixXd a = q * spectrum.asDiagonal() * q.transpose();
  a.triangularView<Eigen::StrictlyUpper>().setConstant(-7e300);
  return a;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_RANDOM_MATRICES_H_
