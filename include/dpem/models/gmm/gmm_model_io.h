// Reading and writing fitted Gaussian mixtures as JSON model files.
//
// A model file holds the parameters in the data's original units, the data
// transform (the public centre and radius R of the domain), and the privacy
// guarantee: target and certified (epsilon, delta), the accountant, the
// neighbour relation, every release with its mechanism, sensitivity and noise
// scale, the seed if the generator was seeded, and whether the guarantee is
// void (and why). The format is documented in docs/gmm.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_GMM_GMM_MODEL_IO_H_
#define DPEM_MODELS_GMM_GMM_MODEL_IO_H_

#include <string>

#include "dpem/models/gmm/private_gmm.h"
#include "dpem/status.h"

namespace dpem {

// The model file's format name and version.
inline constexpr const char* kGmmModelFormat = "dpem-gmm";
inline constexpr int kGmmModelVersion = 1;

// The model as JSON text (indented).
std::string GmmModelToJson(const GmmFit& fit);
// Parses model JSON text; InvalidArgument naming the first problem (format,
// version, missing or mistyped field, shapes, parameters that fail
// ValidateParameters).
StatusOr<GmmFit> GmmModelFromJson(const std::string& text);

// Writes atomically (a temporary file in the same directory, then rename), so
// a failure never leaves a partial file at `path`. IoError naming the path.
Status WriteGmmModel(const std::string& path, const GmmFit& fit);
// Reads and parses a model file; NotFound / IoError / InvalidArgument.
StatusOr<GmmFit> ReadGmmModel(const std::string& path);

}  // namespace dpem

#endif  // DPEM_MODELS_GMM_GMM_MODEL_IO_H_
