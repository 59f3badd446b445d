// The private-fit pipeline's task for a factor analysis fit: dpem/pipeline/fit_pipeline.h.
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FA_FIT_TASK_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FA_FIT_TASK_H_

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/pipeline/model_fit_task.h"

namespace dpem {

using FaFitTask = ModelFitTask<FaFitOptions, FaFit>;

// The task that fits by FitFactorAnalysis with `options` and writes FaModelIo::ToJson.
FaFitTask MakeFaFitTask(FaFitOptions options);

}  // namespace dpem

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FA_FIT_TASK_H_
