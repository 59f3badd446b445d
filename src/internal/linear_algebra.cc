#include "internal/linear_algebra.h"

#include <Eigen/Eigenvalues>

#include <cmath>

namespace dpem::internal {

StatusOr<Eigen::MatrixXd> ClampEigenvalues(const Eigen::MatrixXd& sym, double lo, double hi) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sym);
  if (eig.info() != Eigen::Success) {
    return Eigen::MatrixXd(sym.diagonal().cwiseMax(lo).cwiseMin(hi).asDiagonal());
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

void ProjectOntoBall(Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> v, double radius) {
  if (!v.allFinite() || !(radius > 0.0)) {
    v.setZero();
    return;
  }
  const double norm = v.norm();
  if (std::isfinite(norm)) {
    if (norm > radius) v /= norm / radius;
    return;
  }
  // ||v|| overflows: v / max|v_j| has a norm in [1, sqrt(d)].
  v /= v.cwiseAbs().maxCoeff();
  v /= v.norm() / radius;
}

void ProjectOntoUnitBall(Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> v) {
  ProjectOntoBall(v, 1.0);
}

}  // namespace dpem::internal
