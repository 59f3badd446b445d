// What factor analysis needs of the spectrum of its d x d second moment: the
// top L eigenpairs (EM's start), the smallest eigenvalue and, for a private
// fit, the eigenvalue repair (models/factor_analysis/factor_analysis_internal.h). Lanczos
// above FaEmOptions::dense_max_dimension, so that nothing is O(d^3) there
// unless the caller asks for the projection floor (FaEigenvalueRepair::kFloor)
// and the floor changes the matrix.
#include <cmath>
#include <utility>

#include "internal/krylov_eigen_solver.h"
#include "internal/randomized_eigen_solver.h"
#include "models/factor_analysis/factor_analysis_internal.h"

namespace dpem::internal {
namespace {

KrylovOptions KrylovFor(const FaEmOptions& o) {
  KrylovOptions k;
  k.threads = o.threads;
  return k;
}

}  // namespace

bool UseDenseEigenSolver(Eigen::Index d, Eigen::Index count, const FaEmOptions& o) {
  return d <= o.dense_max_dimension || !KrylovCanSolve(d, count);
}

StatusOr<Eigenpairs> LeadingEigenpairs(const Eigen::MatrixXd& s, Eigen::Index count,
                                       const FaEmOptions& o) {
  if (UseDenseEigenSolver(s.rows(), count, o)) return TopEigenpairs(s, count);
  StatusOr<Eigenpairs> krylov = KrylovTopEigenpairs(s, count, KrylovFor(o));
  if (krylov.ok() || krylov.status().code() != StatusCode::kNumericalError) return krylov;
  return TopEigenpairs(s, count);  // Lanczos did not converge: LAPACK.
}

StatusOr<double> LowestEigenvalue(const Eigen::MatrixXd& s, const FaEmOptions& o,
                                  double tolerance, double* margin) {
  if (margin != nullptr) *margin = 0.0;
  if (UseDenseEigenSolver(s.rows(), 1, o)) return SmallestEigenvalue(s);
  // ||S||_F from the lower triangle: the diagonal once, the rest twice.
  double squares = s.diagonal().squaredNorm();
  for (Eigen::Index j = 0; j + 1 < s.cols(); ++j) {
    squares += 2.0 * s.col(j).tail(s.rows() - j - 1).squaredNorm();
  }
  KrylovOptions k = KrylovFor(o);
  k.tolerance = tolerance;
  StatusOr<double> krylov = KrylovSmallestEigenvalue(s, std::sqrt(squares), k);
  if (krylov.ok() || krylov.status().code() != StatusCode::kNumericalError) {
    // mu = 2 ||S||_F (KrylovSmallestEigenvalue); the Ritz value is at most 2 mu.
    if (margin != nullptr && krylov.ok()) *margin = 2.0 * tolerance * 2.0 * std::sqrt(squares);
    return krylov;
  }
  return SmallestEigenvalue(s);
}

StatusOr<RepairedSpectrum> RepairEigenvalues(Eigen::MatrixXd& s, double floor,
                                             FaEigenvalueRepair repair, const FaEmOptions& o,
                                             bool approximate_start) {
  RepairedSpectrum out;
  if (repair == FaEigenvalueRepair::kFloor && UseDenseEigenSolver(s.rows(), o.factors, o)) {
    // One decomposition gives the floor and the start, as before Lanczos.
    DPEM_ASSIGN_OR_RETURN(s, FloorEigenvalues(s, floor, &out.top));
    return out;
  }
  // kShiftBack takes the shift back out of Psi: a looser lambda_min, less
  // its error margin, is enough.
  const bool back = repair == FaEigenvalueRepair::kShiftBack;
  double margin = 0.0;
  DPEM_ASSIGN_OR_RETURN(double lowest,
                        LowestEigenvalue(s, o, back ? kShiftBackTolerance : kKrylovTolerance,
                                         &margin));
  // Lanczos's lowest Ritz value is within about 1e-10 ||S||_F of lambda_min
  // (and above it) at the default tolerance: when it is >= floor, every
  // repair but kShiftBack is the identity to that accuracy; kShiftBack
  // subtracts its margin first.
  if (back) lowest -= margin;
  if (lowest < floor && repair == FaEigenvalueRepair::kFloor) {
    DPEM_ASSIGN_OR_RETURN(s, FloorEigenvalues(s, floor, &out.top));
    return out;
  }
  if (lowest < floor) {
    out.shift = floor - lowest;
    s.diagonal().array() += out.shift;
  }
  if (approximate_start && !UseDenseEigenSolver(s.rows(), o.factors, o) &&
      o.factors + kRandomizedOversampling <= s.rows()) {
    StatusOr<Eigenpairs> approximate = RandomizedTopEigenpairs(s, o.factors, o.threads);
    if (approximate.ok() || approximate.status().code() != StatusCode::kNumericalError) {
      DPEM_ASSIGN_OR_RETURN(out.top, std::move(approximate));
      return out;
    }  // The small eigenproblem failed: Lanczos's, as LeadingEigenpairs falls back.
  }
  DPEM_ASSIGN_OR_RETURN(out.top, LeadingEigenpairs(s, o.factors, o));  // Same vectors.
  return out;
}

void TakeShiftBack(FaParameters& p, double shift, double psi_min) {
  p.noise_variances = (p.noise_variances.array() - shift).cwiseMax(psi_min);
}

}  // namespace dpem::internal
