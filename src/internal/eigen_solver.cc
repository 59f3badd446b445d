// LAPACK-backed symmetric eigen-decompositions: see internal/eigen_solver.h.
#include "internal/eigen_solver.h"

#include <lapacke.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dpem::internal {
namespace {

Status CheckSymmetricInput(const Eigen::MatrixXd& sym) {
  if (sym.rows() == 0 || sym.rows() != sym.cols()) {
    return InvalidArgumentError("eigen-decomposition: the matrix must be square and non-empty");
  }
  if (!sym.allFinite()) {
    return InvalidArgumentError("eigen-decomposition: the matrix has NaN or infinite entries");
  }
  return OkStatus();
}

// Reverses LAPACK's ascending order and makes each vector's largest-magnitude
// entry positive (a deterministic sign convention).
Eigenpairs Descending(const Eigen::VectorXd& ascending_values,
                      const Eigen::MatrixXd& ascending_vectors) {
  Eigenpairs out;
  out.values = ascending_values.reverse();
  out.vectors = ascending_vectors.rowwise().reverse();
  FixEigenvectorSigns(out.vectors);
  return out;
}

Status LapackStatus(const char* routine, lapack_int info) {
  if (info == 0) return OkStatus();
  return NumericalError(std::string(routine) + " failed (info = " + std::to_string(info) + ")");
}

}  // namespace

void FixEigenvectorSigns(Eigen::MatrixXd& vectors) {
  for (Eigen::Index j = 0; j < vectors.cols(); ++j) {
    Eigen::Index arg = 0;
    vectors.col(j).cwiseAbs().maxCoeff(&arg);
    if (vectors(arg, j) < 0) vectors.col(j) *= -1.0;
  }
}

StatusOr<Eigenpairs> TopEigenpairs(const Eigen::MatrixXd& sym, Eigen::Index count) {
  DPEM_RETURN_IF_ERROR(CheckSymmetricInput(sym));
  const lapack_int d = static_cast<lapack_int>(sym.rows());
  if (count < 1 || count > d) {
    return InvalidArgumentError("eigen-decomposition: the number of eigenpairs must be in [1, " +
                                std::to_string(d) + "]");
  }
  Eigen::MatrixXd a = sym;  // dsyevr destroys its input.
  Eigen::VectorXd w(d);
  Eigen::MatrixXd z(d, count);
  std::vector<lapack_int> support(2 * static_cast<std::size_t>(count));
  lapack_int found = 0;
  const lapack_int il = d - static_cast<lapack_int>(count) + 1;
  const lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', d, a.data(), d, 0.0,
                                         0.0, il, d, 0.0, &found, w.data(), z.data(), d,
                                         support.data());
  DPEM_RETURN_IF_ERROR(LapackStatus("LAPACKE_dsyevr", info));
  if (found != count) return NumericalError("LAPACKE_dsyevr returned too few eigenpairs");
  return Descending(w.head(count), z);
}

StatusOr<double> SmallestEigenvalue(const Eigen::MatrixXd& sym) {
  DPEM_RETURN_IF_ERROR(CheckSymmetricInput(sym));
  const lapack_int d = static_cast<lapack_int>(sym.rows());
  Eigen::MatrixXd a = sym;  // dsyevr destroys its input.
  Eigen::VectorXd w(d);
  std::vector<lapack_int> support(2);
  lapack_int found = 0;
  double unused_z = 0.0;
  const lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'N', 'I', 'L', d, a.data(), d, 0.0,
                                         0.0, 1, 1, 0.0, &found, w.data(), &unused_z, 1,
                                         support.data());
  DPEM_RETURN_IF_ERROR(LapackStatus("LAPACKE_dsyevr", info));
  if (found != 1) return NumericalError("LAPACKE_dsyevr returned no eigenvalue");
  return w(0);
}

StatusOr<Eigenpairs> AllEigenpairs(const Eigen::MatrixXd& sym) {
  DPEM_RETURN_IF_ERROR(CheckSymmetricInput(sym));
  const lapack_int d = static_cast<lapack_int>(sym.rows());
  Eigen::MatrixXd a = sym;  // Overwritten by the eigenvectors.
  Eigen::VectorXd w(d);
  const lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', d, a.data(), d, w.data());
  DPEM_RETURN_IF_ERROR(LapackStatus("LAPACKE_dsyevd", info));
  return Descending(w, a);
}

StatusOr<Eigen::MatrixXd> FloorEigenvalues(const Eigen::MatrixXd& sym, double floor,
                                           Eigenpairs* floored) {
  if (!std::isfinite(floor)) return InvalidArgumentError("eigenvalue floor must be finite");
  DPEM_ASSIGN_OR_RETURN(Eigenpairs e, AllEigenpairs(sym));
  Eigen::MatrixXd out = (sym + sym.transpose()) / 2.0;
  // The eigenvalues below the floor are the trailing ones (descending order).
  const Eigen::Index below = (e.values.array() < floor).count();
  if (below > 0) {
    // out + V_b diag(floor - l_b) V_b^T, as one symmetric rank-`below` update
    // (half the flops of rebuilding V diag(l) V^T).
    const Eigen::VectorXd lift = (floor - e.values.tail(below).array()).sqrt();
    const Eigen::MatrixXd c = e.vectors.rightCols(below) * lift.asDiagonal();
    out.selfadjointView<Eigen::Lower>().rankUpdate(c);
    out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
    e.values.tail(below).setConstant(floor);
  }
  if (floored != nullptr) *floored = std::move(e);
  return out;
}

}  // namespace dpem::internal
