// Private entry points of factor analysis shared by factor_analysis.cc,
// factor_analysis_fit.cc and factor_analysis_spectrum.cc (not installed).
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "internal/eigen_solver.h"
#include "internal/krylov_eigen_solver.h"

namespace dpem::internal {

// FitFaToSecondMoment with S's leading eigenpairs already computed (at least
// options.factors of them, descending; e.g. from RepairEigenvalues), so that
// a private fit finds them once.
// If `iterations_run` is set, it receives the number of EM iterations made.
StatusOr<FaParameters> FitFaWithEigenpairs(const Eigen::MatrixXd& s, const Eigenpairs& top,
                                           const FaEmOptions& options,
                                           int* iterations_run = nullptr);

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
// with mu = 2 ||S||_F >= 2 ||S||_2 (KrylovSmallestEigenvalue, to the
// relative residual `tolerance`), as LeadingEigenpairs chooses for one
// eigenpair. If `margin` is set it receives a bound on the error, 0 for
// LAPACK's and 2 tolerance mu for Lanczos's (Spectra accepts a residual below
// tolerance times the Ritz value, at most 2 mu; an eigenvalue lies within the
// residual of a Ritz value): lambda_min is then at least the value less the
// margin, unless Lanczos missed the top of a cluster, which its restarts make
// unlikely.
StatusOr<double> LowestEigenvalue(const Eigen::MatrixXd& s, const FaEmOptions& o,
                                  double tolerance = kKrylovTolerance,
                                  double* margin = nullptr);

// The relative residual at which kShiftBack finds lambda_min: it takes the
// shift back out of Psi, so c need not be exact, only above f - lambda_min
// (the margin sees to it). 1e-4 took 0.84 s against 1.05 s at 1e-10 for the
// Olivetti fit (J = 1), the shift within 7e-4 of 1e-10's at epsilon 0.3 to
// 1000 (2026-11-24).
inline constexpr double kShiftBackTolerance = 1e-4;

// What RepairEigenvalues did: S's top eigenpairs after it, and the multiple
// of the identity it added (kShift, kShiftBack; 0 otherwise).
struct RepairedSpectrum {
  Eigenpairs top;
  double shift = 0.0;
};

// The private fit's post-processing of S~ = T~ / N (FaEigenvalueRepair), in
// place, and S's top o.factors eigenpairs after it (the EM start; kFloor
// returns all of them when it decomposes). If lambda_min(S~) >= floor, S~ is
// left as it is by every repair; else kShift and kShiftBack add (floor -
// lambda_min) I, and kFloor replaces S~ by FloorEigenvalues(S~, floor) (one
// O(d^3) LAPACK decomposition, which also gives the start). The start's
// eigenpairs are RandomizedTopEigenpairs's with `approximate_start` where
// Lanczos would find them (above o.dense_max_dimension, and L +
// kRandomizedOversampling <= d), else (or if its small eigenproblem fails)
// LeadingEigenpairs's. Requires S~
// symmetric and finite.
StatusOr<RepairedSpectrum> RepairEigenvalues(Eigen::MatrixXd& s, double floor,
                                             FaEigenvalueRepair repair, const FaEmOptions& o,
                                             bool approximate_start = false);

// kShiftBack's last step: p's noise variances less `shift`, floored at
// psi_min (FaEigenvalueRepair::kShiftBack). Post-processing of public values.
void TakeShiftBack(FaParameters& p, double shift, double psi_min);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_INTERNAL_H_
