// Reading and writing fitted k-means models as JSON model files (format
// "dpem-kmeans"): ModelIo<KmeansFit> (dpem/models/model_io.h), defined in
// kmeans_model_io.cc. Besides the shared fields, a file holds the method,
// the start, the centres in the data's original units and a private fit's
// noise multipliers; the reader refuses non-finite centres and a ledger whose
// length does not match the method and J. No statistic of the training data
// (NICV, counts) is written: those are not private. The format is documented
// in docs/kmeans.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_
#define DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_

#include "dpem/models/kmeans/kmeans.h"
#include "dpem/models/model_io.h"

namespace dpem {

// The model file functions of k-means.
using KmeansModelIo = ModelIo<KmeansFit>;

}  // namespace dpem

#endif  // DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_
