// Reading fitted gradient EM models from JSON model files (format
// "dpem-gradient-em"), written by GradientEmFitTask (`dpem fit gradient-em
// --output`, `GradientEM.to_json` in Python): the shared layout of every
// model file (pipeline/model_file.h) without a data transform (the records
// carry their own clipping), plus the model (gmm, mrm, rmc), the method, the
// released beta^T, the public sigma and step, and the mechanism's public
// parameters under "privacy". The format is documented in
// docs/gradient_em.md.
//
// Scoring a model reads records laid out as its fit reads them
// (FromDataMatrix: gmm y_1..y_d; mrm y, x_1..x_d; rmc y, x_1..x_d,
// z_1..z_d): `dpem score` and Python's GradientEM.score call the same
// functions.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_MODEL_IO_H_
#define DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_MODEL_IO_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/models/model_io.h"
#include "dpem/status.h"

namespace dpem {

// The model file's format name and version.
inline constexpr const char* kGradientEmModelFormat = "dpem-gradient-em";
inline constexpr int kGradientEmModelVersion = 1;

// A fitted gradient EM model as its file records it: the fit's released
// beta and guarantee, with the public values it was fitted with.
struct GradientEmModelFit {
  GradientEmModel model = GradientEmModel::kGmm;
  GradientEmMethod method = GradientEmMethod::kDp;
  Eigen::Index n = 0;  // The number of records fitted (public).
  int iterations = 0;  // T.
  double sigma = std::numeric_limits<double>::quiet_NaN();  // The model's noise level.
  double step = std::numeric_limits<double>::quiet_NaN();   // eta.
  // The method's public parameters: tau and zeta (dp, dp-em), the clipping
  // threshold C (clipped); NaN where the method has none.
  double tau = std::numeric_limits<double>::quiet_NaN();
  double zeta = std::numeric_limits<double>::quiet_NaN();
  double clip = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd beta;  // beta^T.
  // beta^0..beta^T, written when not empty (--trajectory); not read back.
  std::vector<Eigen::VectorXd> trajectory;
  GradientEmGuarantee guarantee;
  std::optional<std::uint64_t> seed;
  // Always empty: a gradient EM fit has no public domain. Here for the
  // shared model-file code, which fills the fields every fit has.
  DataDomain domain;

  Eigen::Index dimension() const { return beta.size(); }
};

// The model file of `fitted`, the result of a fit of `model` with
// `options` on `n` records: the model file's fields, beta^0..beta^T
// included if `trajectory`.
GradientEmModelFit MakeGradientEmModelFit(GradientEmModel model, const GradientEmOptions& options,
                                          Eigen::Index n, const GradientEmFit& fitted,
                                          bool trajectory);

// The model file functions of gradient EM (dpem/models/model_io.h): the
// reader refuses, with InvalidArgument naming the first problem, beta not
// `dimension` finite numbers, sigma or step not finite and > 0, a method
// that does not match the privacy block, and a private model whose ledger
// does not list one release per iteration.
using GradientEmModelIo = ModelIo<GradientEmModelFit>;

// The number of columns of the model's records: d (gmm), d + 1 (mrm),
// 2 d + 1 (rmc).
Eigen::Index GradientEmModelColumns(const GradientEmModelFit& fit);

// The log-likelihood of each of `records` (laid out as above) under `fit`
// (GradientEmLogLikelihoods), and their mean (what `dpem score` prints);
// InvalidArgument for records of another layout or with invalid values.
StatusOr<Eigen::VectorXd> GradientEmModelLogLikelihoods(const GradientEmModelFit& fit,
                                                        const DataMatrix& records);
StatusOr<double> GradientEmModelMeanLogLikelihood(const GradientEmModelFit& fit,
                                                  const DataMatrix& records);

}  // namespace dpem

#endif  // DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_MODEL_IO_H_
