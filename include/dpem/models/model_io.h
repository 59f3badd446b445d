// Reading and writing fitted models as JSON model files: one format per
// model, each read and written by the one template below. ModelIo<GmmFit>
// reads and writes Gaussian mixtures ("dpem-gmm", docs/gmm.md),
// ModelIo<KmeansFit> k-means ("dpem-kmeans", docs/kmeans.md),
// ModelIo<FaFit> factor analysis ("dpem-fa", docs/factor_analysis.md) and
// ModelIo<GradientEmModelFit> gradient EM ("dpem-gradient-em",
// docs/gradient_em.md; no data transform: it has no public domain); each
// model's <model>_model_io.h names its instance and says what its files add.
//
// A model file holds the parameters in the data's original units, the data
// transform (the public centre and radius R of the domain), and the privacy
// guarantee: target and certified (epsilon, delta), the accountant, the
// neighbour relation, every release with its mechanism, sensitivity and noise
// scale, the seed if the generator was seeded, and whether the guarantee is
// void (and why).
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_MODEL_IO_H_
#define DPEM_MODELS_MODEL_IO_H_

#include <string>

#include "dpem/status.h"

namespace dpem {

// The model file functions of the model whose fits are of type Fit (GmmFit,
// KmeansFit, FaFit or GradientEmModelFit): defined, and instantiated, in that model's
// _model_io.cc.
template <typename Fit>
struct ModelIo {
  // The model as JSON text (indented).
  static std::string ToJson(const Fit& fit);
  // Parses model JSON text; InvalidArgument naming the first problem (format,
  // version, missing or mistyped field, shapes, parameters that fail the
  // model's validation, a ledger that does not match the fit).
  static StatusOr<Fit> FromJson(const std::string& text);
  // Writes atomically (a temporary file in the same directory, then rename),
  // so a failure never leaves a partial file at `path`. IoError naming the
  // path.
  static Status Write(const std::string& path, const Fit& fit);
  // Reads and parses a model file; NotFound / IoError / InvalidArgument.
  static StatusOr<Fit> Read(const std::string& path);
};

}  // namespace dpem

#endif  // DPEM_MODELS_MODEL_IO_H_
