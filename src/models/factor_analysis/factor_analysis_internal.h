// Private entry points of factor analysis shared by factor_analysis.cc,
// factor_analysis_fit.cc and factor_analysis_spectrum.cc (not installed).
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "internal/eigen_solver.h"

namespace dpem::internal {

// FitFaToSecondMoment with S's leading eigenpairs already computed (at least
// options.factors of them, descending; e.g. from RepairEigenvalues), so that
// a private fit finds them once.
StatusOr<FaParameters> FitFaWithEigenpairs(const Eigen::MatrixXd& s, const Eigenpairs& top,
                                           const FaEmOptions& options);

// True if S's eigenpairs come from LAPACK rather than Lanczos
// (FaEmOptions::dense_max_dimension): d <= o.dense_max_dimension, or the
// Krylov solver cannot take `count` eigenpairs of a d x d matrix.
bool UseDenseEigenSolver(Eigen::Index d, Eigen::Index count, const FaEmOptions& o);

// The `count` largest eigenpairs of the symmetric S (descending, signs as
// TopEigenpairs fixes them): TopEigenpairs if UseDenseEigenSolver, else
// KrylovTopEigenpairs, or TopEigenpairs if Lanczos fails (a status, never
// a wrong answer). Reads S's lower triangle only on the Krylov path.
StatusOr<Eigenpairs> LeadingEigenpairs(const Eigen::MatrixXd& s, Eigen::Index count,
                                       const FaEmOptions& o);

// S's smallest eigenvalue: LAPACK's, or Lanczos's as the top of mu I - S
// with mu = 2 ||S||_F >= 2 ||S||_2 (KrylovSmallestEigenvalue; accurate to
// about 1e-10 ||S||_F), as LeadingEigenpairs chooses for one eigenpair.
StatusOr<double> LowestEigenvalue(const Eigen::MatrixXd& s, const FaEmOptions& o);

// The private fit's post-processing of S~ = T~ / N (FaEigenvalueRepair), in
// place, and S's top o.factors eigenpairs after it (the EM start; kFloor
// returns all of them when it decomposes). If lambda_min(S~) >= floor, S~ is
// left as it is by either repair; else kShift adds (floor - lambda_min) I,
// and kFloor replaces S~ by FloorEigenvalues(S~, floor) (one O(d^3) LAPACK
// decomposition, which also gives the start). Requires S~ symmetric and
// finite.
StatusOr<Eigenpairs> RepairEigenvalues(Eigen::MatrixXd& s, double floor,
                                       FaEigenvalueRepair repair, const FaEmOptions& o);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_
