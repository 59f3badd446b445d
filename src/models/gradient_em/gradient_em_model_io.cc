// Gradient EM model files: see dpem/models/gradient_em/gradient_em_model_io.h.
// The shared parts (format, version, n, iterations, guarantee with its
// ledger, seed) are written and read by pipeline/model_file.h; this file adds
// the model, the method, beta, sigma and step, and the mechanism's public
// parameters of a private fit, and checks the ledger's length.
#include "dpem/models/gradient_em/gradient_em_model_io.h"

#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "dpem/data/generators.h"
#include "internal/json_fields.h"
#include "pipeline/model_file.h"

namespace dpem {
namespace {

using nlohmann::json;

// The most coordinates a file's beta may hold.
constexpr std::int64_t kMaxDimension = 1000000;

// The field `key` of `object`: a finite number > 0.
StatusOr<double> PositiveField(const json& object, const char* key) {
  return internal::FiniteNumberField(object, key, internal::kPositiveNumber);
}

// The mechanism's public parameters, under "privacy" (a private model).
json MechanismToJson(const GradientEmModelFit& fit) {
  const GradientEmGuarantee& g = fit.guarantee;
  json j = {{"calibration", NoiseCalibrationRuleName(g.calibration)},
            {"noise_multiplier", g.noise_multiplier},
            {"sensitivity_l2", g.sensitivity},
            {"noise_stddev", g.noise_stddev}};
  if (!GradientEmUsesRobustMean(fit.method)) {
    j["clip"] = fit.clip;
    return j;
  }
  j.update({{"tau", fit.tau},
            {"zeta", fit.zeta},
            {"robust_scale", g.robust.scale},
            {"robust_beta", g.robust.beta}});
  return j;
}

json TrajectoryToJson(const std::vector<Eigen::VectorXd>& trajectory) {
  json t = json::array();
  for (const Eigen::VectorXd& b : trajectory) t.push_back(internal::AsStdVector(b));
  return t;
}

// The model and the method, which must be private exactly when the
// privacy block says so.
Status ModelAndMethodFrom(const json& model, GradientEmModelFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const std::string kind, internal::StringField(model, "gradient_em_model"));
  DPEM_ASSIGN_OR_RETURN(fit.model, ParseGradientEmModel(kind));
  DPEM_ASSIGN_OR_RETURN(const std::string method, internal::StringField(model, "method"));
  DPEM_ASSIGN_OR_RETURN(fit.method, ParseGradientEmMethod(method));
  if ((fit.method != GradientEmMethod::kNonPrivate) != fit.guarantee.is_private) {
    return InvalidArgumentError("method '" + method + "' disagrees with privacy.private");
  }
  return OkStatus();
}

// beta (`dimension` finite numbers), sigma and the step.
Status ParametersFrom(const json& model, GradientEmModelFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const std::int64_t d,
                        internal::CountField(model, "dimension", kMaxDimension));
  DPEM_ASSIGN_OR_RETURN(const json* beta, internal::Field(model, "beta"));
  DPEM_ASSIGN_OR_RETURN(fit.beta, internal::VectorFrom(*beta, "'beta'"));
  if (fit.beta.size() != d || !fit.beta.allFinite()) {
    return InvalidArgumentError("'beta' must hold 'dimension' (" + std::to_string(d) +
                                ") finite numbers");
  }
  DPEM_ASSIGN_OR_RETURN(fit.sigma, PositiveField(model, "sigma"));
  DPEM_ASSIGN_OR_RETURN(fit.step, PositiveField(model, "step"));
  return OkStatus();
}

// A private model's mechanism: its calibration and noise, the method's
// public parameters, one release per iteration, and a certificate within
// what the fit accepts of its target.
Status MechanismFrom(const json& privacy, GradientEmModelFit& fit) {
  GradientEmGuarantee& g = fit.guarantee;
  DPEM_ASSIGN_OR_RETURN(const std::string rule, internal::StringField(privacy, "calibration"));
  DPEM_ASSIGN_OR_RETURN(g.calibration, ParseNoiseCalibrationRule(rule));
  DPEM_ASSIGN_OR_RETURN(g.noise_multiplier, PositiveField(privacy, "noise_multiplier"));
  DPEM_ASSIGN_OR_RETURN(g.sensitivity, PositiveField(privacy, "sensitivity_l2"));
  DPEM_ASSIGN_OR_RETURN(g.noise_stddev, PositiveField(privacy, "noise_stddev"));
  if (GradientEmUsesRobustMean(fit.method)) {
    DPEM_ASSIGN_OR_RETURN(fit.tau, PositiveField(privacy, "tau"));
    DPEM_ASSIGN_OR_RETURN(fit.zeta, PositiveField(privacy, "zeta"));
    DPEM_ASSIGN_OR_RETURN(g.robust.scale, PositiveField(privacy, "robust_scale"));
    DPEM_ASSIGN_OR_RETURN(g.robust.beta, PositiveField(privacy, "robust_beta"));
  } else {
    DPEM_ASSIGN_OR_RETURN(fit.clip, PositiveField(privacy, "clip"));
  }
  if (g.ledger.size() != static_cast<std::size_t>(fit.iterations)) {
    return InvalidArgumentError("a private model must list one release per iteration");
  }
  if (!(g.epsilon <= g.target_epsilon * (1.0 + kGradientEmEpsilonTolerance))) {
    return InvalidArgumentError("'epsilon' must be at most 'target_epsilon'");
  }
  return OkStatus();
}

}  // namespace

// No domain: the records carry their own clipping (the clipping threshold,
// or the robust estimator's scale).
template <>
const internal::ModelFileSchema internal::ModelFileFormat<GradientEmModelFit>::kSchema{
    .format = kGradientEmModelFormat,
    .version = kGradientEmModelVersion,
    .model = "gradient_em",
    .description = "gradient EM",
    .max_iterations = kMaxGradientEmIterations,
    .fixed_accountant = std::nullopt,
    .has_domain = false};

template <>
void internal::ModelFileFormat<GradientEmModelFit>::AddFields(const GradientEmModelFit& fit,
                                                              json& model) {
  model["gradient_em_model"] = GradientEmModelName(fit.model);
  model["method"] = GradientEmMethodName(fit.method);
  model["dimension"] = fit.dimension();
  model["beta"] = internal::AsStdVector(fit.beta);
  model["sigma"] = fit.sigma;
  model["step"] = fit.step;
  if (!fit.trajectory.empty()) model["trajectory"] = TrajectoryToJson(fit.trajectory);
  if (fit.guarantee.is_private) model["privacy"].update(MechanismToJson(fit));
}

template <>
Status internal::ModelFileFormat<GradientEmModelFit>::ReadFields(const json& model,
                                                                 GradientEmModelFit& fit) {
  DPEM_RETURN_IF_ERROR(ModelAndMethodFrom(model, fit));
  DPEM_RETURN_IF_ERROR(ParametersFrom(model, fit));
  if (!fit.guarantee.is_private) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
  return MechanismFrom(*privacy, fit);
}

template struct ModelIo<GradientEmModelFit>;

GradientEmModelFit MakeGradientEmModelFit(GradientEmModel model, const GradientEmOptions& options,
                                          Eigen::Index n, const GradientEmFit& fitted,
                                          bool trajectory) {
  GradientEmModelFit fit;
  fit.model = model;
  fit.method = options.method;
  fit.n = n;
  fit.iterations = options.iterations;
  fit.sigma = options.sigma;
  fit.step = options.step;
  if (options.method == GradientEmMethod::kClipped) fit.clip = options.clip;
  if (GradientEmUsesRobustMean(options.method)) {
    fit.tau = options.tau;
    fit.zeta = options.zeta;
  }
  fit.beta = fitted.beta;
  if (trajectory) fit.trajectory = fitted.trajectory;
  fit.guarantee = fitted.guarantee;
  fit.seed = fitted.seed;
  return fit;
}

Eigen::Index GradientEmModelColumns(const GradientEmModelFit& fit) {
  switch (fit.model) {
    case GradientEmModel::kGmm:
      return fit.dimension();
    case GradientEmModel::kMrm:
      return fit.dimension() + 1;
    case GradientEmModel::kRmc:
      break;
  }
  return 2 * fit.dimension() + 1;
}

StatusOr<Eigen::VectorXd> GradientEmModelLogLikelihoods(const GradientEmModelFit& fit,
                                                        const DataMatrix& records) {
  DPEM_ASSIGN_OR_RETURN(const GradientEmData data, FromDataMatrix(fit.model, records));
  return GradientEmLogLikelihoods(data, fit.beta, fit.sigma);
}

StatusOr<double> GradientEmModelMeanLogLikelihood(const GradientEmModelFit& fit,
                                                  const DataMatrix& records) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd ll, GradientEmModelLogLikelihoods(fit, records));
  return ll.mean();
}

}  // namespace dpem
