// Private entry points of factor analysis shared by factor_analysis.cc and
// factor_analysis_fit.cc (not installed).
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_INTERNAL_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_INTERNAL_H_

#include "dpem/models/factor_analysis.h"
#include "internal/eigen_solver.h"

namespace dpem::internal {

// FitFaToSecondMoment with S's leading eigenpairs already computed (at least
// options.factors of them, descending; e.g. from FloorEigenvalues), so that a
// private fit decomposes its d x d matrix once.
StatusOr<FaParameters> FitFaWithEigenpairs(const Eigen::MatrixXd& s, const Eigenpairs& top,
                                           const FaEmOptions& options);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_INTERNAL_H_
