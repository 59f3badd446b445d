// The pipeline task for a k-means fit: see dpem/models/kmeans/kmeans_fit_task.h.
#include "dpem/models/kmeans/kmeans_fit_task.h"

#include <utility>

#include "dpem/models/kmeans/kmeans_model_io.h"

namespace dpem {
namespace {

// dplloyd is pure epsilon-DP: it spends no delta even when one is given.
double KmeansChargedDelta(const KmeansFitOptions& o) {
  return KmeansMethodNeedsDelta(o.method) ? o.delta : 0.0;
}

// FitKmeans over a row source (it is overloaded for matrices too).
StatusOr<KmeansFit> FitRows(const RowSource& x, const KmeansFitOptions& options,
                            Generator& gen) {
  return FitKmeans(x, options, gen);
}

}  // namespace

KmeansFitTask MakeKmeansFitTask(KmeansFitOptions options) {
  return KmeansFitTask({&FitRows, &KmeansModelToJson, &KmeansChargedDelta}, std::move(options));
}

}  // namespace dpem
