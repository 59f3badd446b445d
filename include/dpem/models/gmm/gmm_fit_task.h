// The private-fit pipeline's task for a Gaussian mixture fit: dpem/pipeline/fit_pipeline.h.
#ifndef DPEM_MODELS_GMM_GMM_FIT_TASK_H_
#define DPEM_MODELS_GMM_GMM_FIT_TASK_H_

#include "dpem/models/gmm/private_gmm.h"
#include "dpem/pipeline/model_fit_task.h"

namespace dpem {

using GmmFitTask = ModelFitTask<GmmFitOptions, GmmFit>;

// The task that fits by FitGmm with `options` and writes GmmModelIo::ToJson.
GmmFitTask MakeGmmFitTask(GmmFitOptions options);

}  // namespace dpem

#endif  // DPEM_MODELS_GMM_GMM_FIT_TASK_H_
