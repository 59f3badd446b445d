// The private-fit pipeline's task for a k-means fit (the pure-DP
// dplloyd is charged no delta): dpem/pipeline/fit_pipeline.h.
#ifndef DPEM_MODELS_KMEANS_KMEANS_FIT_TASK_H_
#define DPEM_MODELS_KMEANS_KMEANS_FIT_TASK_H_

#include "dpem/models/kmeans/kmeans.h"
#include "dpem/pipeline/model_fit_task.h"

namespace dpem {

using KmeansFitTask = ModelFitTask<KmeansFitOptions, KmeansFit>;

// The task that fits by FitKmeans with `options` and writes KmeansModelIo::ToJson.
KmeansFitTask MakeKmeansFitTask(KmeansFitOptions options);

}  // namespace dpem

#endif  // DPEM_MODELS_KMEANS_KMEANS_FIT_TASK_H_
