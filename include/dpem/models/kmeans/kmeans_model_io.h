// Reading and writing fitted k-means models as JSON model files (format
// "dpem-kmeans"), laid out like the GMM files (gmm_model_io.h): the centres in
// the data's original units, the data transform (public centre and radius R),
// and the privacy guarantee with every release of the ledger. No statistic of
// the training data (NICV, counts) is written: those are not private. The
// format is documented in docs/kmeans.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_
#define DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_

#include <string>

#include "dpem/models/kmeans/kmeans.h"
#include "dpem/status.h"

namespace dpem {

// The model file's format name and version.
inline constexpr const char* kKmeansModelFormat = "dpem-kmeans";
inline constexpr int kKmeansModelVersion = 1;

// The model as JSON text (indented).
std::string KmeansModelToJson(const KmeansFit& fit);
// Parses model JSON text; InvalidArgument naming the first problem (format,
// version, missing or mistyped field, shapes, non-finite centres, a ledger
// whose length does not match the method and J).
StatusOr<KmeansFit> KmeansModelFromJson(const std::string& text);

// Writes atomically (temporary file, then rename). IoError naming the path.
Status WriteKmeansModel(const std::string& path, const KmeansFit& fit);
// Reads and parses a model file; NotFound / IoError / InvalidArgument.
StatusOr<KmeansFit> ReadKmeansModel(const std::string& path);

}  // namespace dpem

#endif  // DPEM_MODELS_KMEANS_KMEANS_MODEL_IO_H_
