#include "internal/linear_algebra.h"

#include <Eigen/Eigenvalues>

namespace dpem::internal {

StatusOr<Eigen::MatrixXd> ClampEigenvalues(const Eigen::MatrixXd& sym, double lo, double hi) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sym);
  if (eig.info() != Eigen::Success) {
    return NumericalError("the symmetric eigen-solver did not converge");
  }
  const Eigen::VectorXd& values = eig.eigenvalues();
  if (values.minCoeff() >= lo && values.maxCoeff() <= hi) {
    return Eigen::MatrixXd(0.5 * (sym + sym.transpose()));
  }
  const Eigen::VectorXd clamped = values.cwiseMax(lo).cwiseMin(hi);
  const Eigen::MatrixXd& v = eig.eigenvectors();
  const Eigen::MatrixXd reassembled = v * clamped.asDiagonal() * v.transpose();
  return Eigen::MatrixXd(0.5 * (reassembled + reassembled.transpose()));
}

}  // namespace dpem::internal
