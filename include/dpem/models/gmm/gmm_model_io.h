// Reading and writing fitted Gaussian mixtures as JSON model files (format
// "dpem-gmm"): ModelIo<GmmFit> (dpem/models/model_io.h), defined in
// gmm_model_io.cc. Besides the shared fields, a file holds the covariance
// type, estimator, start and parameters, and a private fit's mechanisms,
// per-release epsilon, component frame radius and noise multipliers; the
// reader refuses parameters that fail ValidateParameters. The format is
// documented in docs/gmm.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_GMM_GMM_MODEL_IO_H_
#define DPEM_MODELS_GMM_GMM_MODEL_IO_H_

#include <string>

#include "dpem/models/gmm/private_gmm.h"
#include "dpem/models/model_io.h"
#include "dpem/status.h"

namespace dpem {

// The model file functions of Gaussian mixtures.
using GmmModelIo = ModelIo<GmmFit>;

// The model file's format name, on which the CLI's model commands dispatch.
inline constexpr const char* kGmmModelFormat = "dpem-gmm";

// GmmModelIo::Read, by the name the CLI's model commands call it.
inline StatusOr<GmmFit> ReadGmmModel(const std::string& path) { return GmmModelIo::Read(path); }

}  // namespace dpem

#endif  // DPEM_MODELS_GMM_GMM_MODEL_IO_H_
