// The pipeline task for a factor analysis fit: see dpem/models/factor_analysis/fa_fit_task.h.
#include "dpem/models/factor_analysis/fa_fit_task.h"

#include <utility>

#include "dpem/models/factor_analysis/fa_model_io.h"

namespace dpem {
namespace {

// FitFactorAnalysis over a row source (it is overloaded for matrices too).
StatusOr<FaFit> FitRows(const RowSource& x, const FaFitOptions& options, Generator& gen) {
  return FitFactorAnalysis(x, options, gen);
}

}  // namespace

FaFitTask MakeFaFitTask(FaFitOptions options) {
  return FaFitTask({&FitRows, &FaModelToJson}, std::move(options));
}

}  // namespace dpem
