// Block kernels of gradient EM (gradient_em_models.cc), used by the fit's
// engine pass (gradient_em.cc). Private to the library.
#ifndef DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_INTERNAL_H_
#define DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_INTERNAL_H_

#include <Eigen/Core>

#include "dpem/data/row_source.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/random/generator.h"

namespace dpem::internal {

// Rows [first, first + out.rows()) of PerRecordGradients into `out` (which
// has d columns). Preconditions (checked by the callers): the data are valid,
// beta has d finite entries and sigma is finite and > 0.
void GradientRows(const GradientEmData& data, const Eigen::VectorXd& beta, double sigma,
                  Eigen::Index first, DataMatrix& out);

// The same for PerRecordGmmEmMaps (GMM data).
void GmmEmMapRows(const GradientEmData& data, const Eigen::VectorXd& beta, double sigma,
                  Eigen::Index first, DataMatrix& out);

// FitGradientEm of the table whose rows `local` holds, seen through `rows`:
// a source over local.x whose LocalRows() are the rows `local` holds and
// whose rows() is the table's N (a MatrixRowSource for a table held by one
// process; a ShardRowSource over local.x on each rank of a distributed
// fit, whose statistics are combined over the ranks). `local` is valid.
StatusOr<GradientEmFit> FitGradientEmOnRows(const GradientEmData& local, const RowSource& rows,
                                            const GradientEmOptions& options, Generator& gen);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_INTERNAL_H_
