// Reading and writing fitted factor analysis models as JSON model files
// (format "dpem-fa"): ModelIo<FaFit> (dpem/models/model_io.h), defined in
// fa_model_io.cc. Besides the shared fields, a file holds the parameters in
// the data's original units (mean, loadings W as d rows of L numbers, noise
// variances) and a private fit's mechanism and noise multiplier; the reader
// refuses parameters that fail ValidateFaParameters. The format is
// documented in docs/factor_analysis.md.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/models/model_io.h"

namespace dpem {

// The model file functions of factor analysis.
using FaModelIo = ModelIo<FaFit>;

}  // namespace dpem

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FA_MODEL_IO_H_
