// Reading and writing fitted factor analysis models as JSON model files
// (format "dpem-fa"), laid out like the GMM model files (gmm_model_io.h):
// the parameters in the data's original units (mean, loadings W as d rows of
// L numbers, noise variances), the data transform (public centre and radius
// R), and the privacy guarantee with every release of the ledger. The format
// is documented in docs/factor_analysis.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_

#include <string>

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/status.h"

namespace dpem {

// The model file's format name and version.
inline constexpr const char* kFaModelFormat = "dpem-fa";
inline constexpr int kFaModelVersion = 1;

// The model as JSON text (indented).
std::string FaModelToJson(const FaFit& fit);

// Parses model JSON text; InvalidArgument naming the first problem (format,
// version, missing or mistyped field, shapes, parameters that fail
// ValidateFaParameters).
StatusOr<FaFit> FaModelFromJson(const std::string& text);

// Writes atomically (temporary file, then rename). IoError naming the path.
Status WriteFaModel(const std::string& path, const FaFit& fit);

// Reads and parses a model file; NotFound / IoError / InvalidArgument.
StatusOr<FaFit> ReadFaModel(const std::string& path);

}  // namespace dpem

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_
