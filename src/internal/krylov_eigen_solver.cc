// Lanczos eigen-solvers over lower-triangle products: see
// internal/krylov_eigen_solver.h.
#include "internal/krylov_eigen_solver.h"

#include <Spectra/SymEigsSolver.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "internal/symmetric_product.h"

namespace dpem::internal {
namespace {

// Spectra's operator y = sign S x + shift x, S given by its lower triangle.
class ShiftedSymmetricOp {
 public:
  using Scalar = double;

  ShiftedSymmetricOp(const Eigen::MatrixXd& lower, double sign, double shift, int threads)
      : lower_(lower), sign_(sign), shift_(shift), threads_(threads) {}

  Eigen::Index rows() const { return lower_.rows(); }
  Eigen::Index cols() const { return lower_.cols(); }

  void perform_op(const double* x_in, double* y_out) const {
    const Eigen::Map<const Eigen::VectorXd> x(x_in, lower_.rows());
    Eigen::Map<Eigen::VectorXd> y(y_out, lower_.rows());
    y = sign_ * SymmetricProduct(lower_, x, threads_) + shift_ * x;
  }

 private:
  const Eigen::MatrixXd& lower_;
  double sign_;
  double shift_;
  int threads_;
};

Status CheckInput(const Eigen::MatrixXd& lower, Eigen::Index count) {
  if (lower.rows() != lower.cols() || lower.rows() == 0) {
    return InvalidArgumentError("Krylov eigen-solver: the matrix must be square and non-empty");
  }
  if (!KrylovCanSolve(lower.rows(), count)) {
    return InvalidArgumentError("Krylov eigen-solver: " + std::to_string(count) +
                                " eigenpairs of a " + std::to_string(lower.rows()) +
                                "-dimensional matrix need the dense solver");
  }
  for (Eigen::Index j = 0; j < lower.cols(); ++j) {
    if (!lower.col(j).tail(lower.rows() - j).allFinite()) {
      return InvalidArgumentError("Krylov eigen-solver: the matrix has NaN or infinite entries");
    }
  }
  return OkStatus();
}

// The largest `count` eigenpairs of `op` (descending), or NumericalError.
StatusOr<Eigenpairs> LargestOf(ShiftedSymmetricOp& op, Eigen::Index count,
                               const KrylovOptions& o) {
  const Eigen::Index d = op.rows();
  const Eigen::Index ncv = std::min(d, std::max(2 * count + 1, count + kKrylovExtraVectors));
  const Eigen::Index budget = o.max_products > 0 ? o.max_products : std::max(d / 2, kKrylovMinProducts);
  // Each restart costs about ncv - count products after the first ncv.
  const Eigen::Index restarts = std::max<Eigen::Index>(1, (budget - ncv) / (ncv - count));
  try {
    Spectra::SymEigsSolver<ShiftedSymmetricOp> solver(op, count, ncv);
    solver.init();  // A fixed pseudo-random start: deterministic.
    const Eigen::Index converged =
        solver.compute(Spectra::SortRule::LargestAlge, restarts, o.tolerance);
    if (solver.info() != Spectra::CompInfo::Successful || converged < count) {
      return NumericalError("Krylov eigen-solver: " + std::to_string(converged) + " of " +
                            std::to_string(count) + " eigenpairs converged in " +
                            std::to_string(solver.num_operations()) + " products");
    }
    Eigenpairs out{solver.eigenvalues(), solver.eigenvectors()};
    if (out.values.size() != count || out.vectors.cols() != count || !out.values.allFinite() ||
        !out.vectors.allFinite()) {
      return NumericalError("Krylov eigen-solver returned invalid eigenpairs");
    }
    FixEigenvectorSigns(out.vectors);
    return out;
  } catch (const std::exception& e) {
    return NumericalError(std::string("Krylov eigen-solver: ") + e.what());
  }
}

}  // namespace

bool KrylovCanSolve(Eigen::Index d, Eigen::Index count) {
  return count >= 1 && count + kKrylovExtraVectors < d;
}

StatusOr<Eigenpairs> KrylovTopEigenpairs(const Eigen::MatrixXd& lower, Eigen::Index count,
                                         const KrylovOptions& options) {
  DPEM_RETURN_IF_ERROR(CheckInput(lower, count));
  ShiftedSymmetricOp op(lower, 1.0, 0.0, options.threads);
  return LargestOf(op, count, options);
}

StatusOr<double> KrylovSmallestEigenvalue(const Eigen::MatrixXd& lower, double largest,
                                          const KrylovOptions& options) {
  DPEM_RETURN_IF_ERROR(CheckInput(lower, 1));
  if (!std::isfinite(largest)) {
    return InvalidArgumentError("Krylov eigen-solver: the largest eigenvalue must be finite");
  }
  const double mu = 2.0 * std::abs(largest);
  ShiftedSymmetricOp op(lower, -1.0, mu, options.threads);
  DPEM_ASSIGN_OR_RETURN(const Eigenpairs top, LargestOf(op, 1, options));
  return mu - top.values(0);
}

}  // namespace dpem::internal
