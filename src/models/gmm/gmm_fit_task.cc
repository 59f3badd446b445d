// The pipeline task for a Gaussian mixture fit: see dpem/models/gmm/gmm_fit_task.h.
#include "dpem/models/gmm/gmm_fit_task.h"

#include <utility>

#include "dpem/models/gmm/gmm_model_io.h"

namespace dpem {
namespace {

// FitGmm over a row source (it is overloaded for matrices too).
StatusOr<GmmFit> FitRows(const RowSource& x, const GmmFitOptions& options, Generator& gen) {
  return FitGmm(x, options, gen);
}

}  // namespace

GmmFitTask MakeGmmFitTask(GmmFitOptions options) {
  return GmmFitTask({&FitRows, &GmmModelToJson}, std::move(options));
}

}  // namespace dpem
