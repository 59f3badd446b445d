// GMM model files: see dpem/models/gmm/gmm_model_io.h. The shared parts
// (format, version, n, iterations, domain, guarantee with its ledger, seed)
// are written and read by pipeline/model_file.h; this file's
// ModelFileFormat<GmmFit> adds the mixture's own: covariance type,
// estimator, start, parameters and the mechanisms' fields of a private fit,
// and checks the ledger's length.
#include "dpem/models/gmm/gmm_model_io.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/ledger_json.h"
#include "dpem/data/private_bounds.h"
#include "dpem/models/gmm/gmm_fit_task.h"
#include "internal/file_util.h"
#include "internal/json_fields.h"
#include "models/gmm/gmm_release_plan.h"
#include "models/start/private_start.h"
#include "pipeline/model_file.h"

namespace dpem {

using nlohmann::json;

// Format, version, model, description, most iterations, no fixed accountant.
template <>
const internal::ModelFileSchema internal::ModelFileFormat<GmmFit>::kSchema{
    kGmmModelFormat, 1, "gaussian_mixture", "Gaussian-mixture", internal::kMaxModelIterations,
    std::nullopt};

namespace {

json ParametersToJson(const GmmParameters& p) {
  json covariances = json::array();
  for (const Eigen::MatrixXd& c : p.covariances) covariances.push_back(internal::RowsToJson(c));
  return {{"weights", internal::AsStdVector(p.weights)},
          {"means", internal::RowsToJson(p.means)},
          {"covariances", covariances}};
}

// The privacy fields of a private mixture's own.
void AddPrivacyFields(const GmmGuarantee& g, json& privacy) {
  privacy["mechanisms"] = GmmMechanismsName(g.mechanisms);
  privacy["per_release_epsilon"] = g.per_release_epsilon;
  privacy["component_frame_radius"] = g.frame_radius;
  if (g.frame_radius > 0.0) {
    privacy["component_frame_rule"] = g.adaptive_frames ? "adaptive" : "fixed";
    privacy["frame_clip_correction"] = g.frame_clip_correction;
    privacy["spherical_first_iteration"] = g.spherical_first_iteration;
    privacy["diagonal_first_iteration"] = g.diagonal_first_iteration;
  }
  privacy["noise_multipliers"] = g.noise_multipliers;
  privacy["iteration_weights"] = g.iteration_weights;
  privacy["start_cell_frames"] = g.start_cell_frames;
  privacy["averaged_iterations"] = g.averaged_iterations;
  if (g.adaptive_iterations) {
    privacy["adaptive_iterations"] = {{"settled", g.settled}, {"movement", g.movement}};
  }
}

StatusOr<GmmParameters> ParametersFrom(const json& model) {
  GmmParameters p;
  DPEM_ASSIGN_OR_RETURN(const std::string type, internal::StringField(model, "covariance_type"));
  DPEM_ASSIGN_OR_RETURN(p.type, ParseCovarianceType(type));
  DPEM_ASSIGN_OR_RETURN(const double k, internal::NumberField(model, "components"));
  DPEM_ASSIGN_OR_RETURN(const double d, internal::NumberField(model, "dimension"));
  if (!(k >= 1 && k <= 1e6 && d >= 1 && d <= 1e6 && k == std::floor(k) && d == std::floor(d))) {
    return InvalidArgumentError("components and dimension must be whole numbers >= 1");
  }
  const auto K = static_cast<Eigen::Index>(k), D = static_cast<Eigen::Index>(d);
  DPEM_ASSIGN_OR_RETURN(const json* params, internal::Field(model, "parameters"));
  DPEM_ASSIGN_OR_RETURN(const json* weights, internal::Field(*params, "weights"));
  DPEM_ASSIGN_OR_RETURN(p.weights, internal::VectorFrom(*weights, "weights"));
  if (p.weights.size() != K) return InvalidArgumentError("weights must have K entries");
  DPEM_ASSIGN_OR_RETURN(const json* means, internal::Field(*params, "means"));
  DPEM_ASSIGN_OR_RETURN(p.means, internal::MatrixFrom(*means, K, D, "means"));
  DPEM_ASSIGN_OR_RETURN(const json* covs, internal::Field(*params, "covariances"));
  if (!covs->is_array() || static_cast<Eigen::Index>(covs->size()) != K) {
    return InvalidArgumentError("covariances must hold K matrices");
  }
  for (const json& c : *covs) {
    DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd m, internal::MatrixFrom(c, D, D, "each covariance"));
    p.covariances.push_back(std::move(m));
  }
  DPEM_RETURN_IF_ERROR(ValidateParameters(p));
  return p;
}

// The start the fit used; files written before the field existed started
// from random points (the only start then).
StatusOr<GmmInit> InitFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const std::optional<std::string> name,
                        internal::OptionalStringField(model, "init"));
  if (!name) return GmmInit::kRandom;
  return ParseGmmInit(*name);
}

// How the frames were made; files written before 2026-11-24 have neither
// field: their frames had a fixed radius and no clip correction.
Status FrameRuleFrom(const json& privacy, GmmGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(const std::optional<std::string> rule,
                        internal::OptionalStringField(privacy, "component_frame_rule"));
  if (rule && *rule != "adaptive" && *rule != "fixed") {
    return InvalidArgumentError("privacy.component_frame_rule must be adaptive or fixed");
  }
  g.adaptive_frames = rule && *rule == "adaptive";
  // Absent from older files: not used.
  DPEM_ASSIGN_OR_RETURN(g.frame_clip_correction,
                        internal::BoolFieldOr(privacy, "frame_clip_correction", false));
  DPEM_ASSIGN_OR_RETURN(g.spherical_first_iteration,
                        internal::BoolFieldOr(privacy, "spherical_first_iteration", false));
  DPEM_ASSIGN_OR_RETURN(g.diagonal_first_iteration,
                        internal::BoolFieldOr(privacy, "diagonal_first_iteration", false));
  // Absent from older files: not used.
  DPEM_ASSIGN_OR_RETURN(g.start_cell_frames,
                        internal::BoolFieldOr(privacy, "start_cell_frames", false));
  return OkStatus();
}

// The privacy fields of a private mixture's own (AddPrivacyFields).
Status PrivacyFieldsFrom(const json& model, GmmGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
  DPEM_ASSIGN_OR_RETURN(const std::string mechanisms,
                        internal::StringField(*privacy, "mechanisms"));
  DPEM_ASSIGN_OR_RETURN(g.mechanisms, ParseGmmMechanisms(mechanisms));
  DPEM_ASSIGN_OR_RETURN(g.per_release_epsilon,
                        internal::FiniteNumberField(*privacy, "per_release_epsilon",
                                                    internal::kPositiveNumber, "privacy"));
  if (privacy->contains("component_frame_radius")) {  // Absent from older files.
    DPEM_ASSIGN_OR_RETURN(g.frame_radius,
                          internal::FiniteNumberField(*privacy, "component_frame_radius",
                                                      internal::kNonNegativeNumber, "privacy"));
  }
  DPEM_RETURN_IF_ERROR(FrameRuleFrom(*privacy, g));
  DPEM_ASSIGN_OR_RETURN(const json* z, internal::Field(*privacy, "noise_multipliers"));
  DPEM_ASSIGN_OR_RETURN(g.noise_multipliers,
                        internal::FiniteNumbersFrom(*z, "privacy.noise_multipliers",
                                                    internal::kPositiveNumber));
  g.iteration_weights.clear();
  if (privacy->contains("iteration_weights")) {  // Absent from older files: equal.
    DPEM_ASSIGN_OR_RETURN(const json* w, internal::Field(*privacy, "iteration_weights"));
    DPEM_ASSIGN_OR_RETURN(g.iteration_weights,
                          internal::FiniteNumbersFrom(*w, "privacy.iteration_weights",
                                                      internal::kPositiveNumber));
  }
  return OkStatus();
}

// How many last iterates a private fit's parameters average: 1 (the last
// iterate), or internal::AveragedIterationsOfJ(J) >= 2 for a fit from the
// private start (the only counts internal::AveragedIterations gives); files
// written before the field existed hold the last iterate (1).
Status AveragedIterationsFrom(const json& model, GmmFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
  fit.guarantee.averaged_iterations = 1;
  if (!privacy->contains("averaged_iterations")) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(const std::int64_t averaged,
                        internal::CountField(*privacy, "averaged_iterations", fit.iterations));
  const int rule = internal::AveragedIterationsOfJ(fit.iterations);
  if (averaged != 1 && !(fit.init == GmmInit::kPrivate && rule >= 2 && averaged == rule)) {
    return InvalidArgumentError(
        "privacy.averaged_iterations must be 1 or, for a fit of J >= 4 iterations from the "
        "private start, floor(J / 2) = " + std::to_string(rule) + ", not " +
        std::to_string(averaged));
  }
  fit.guarantee.averaged_iterations = static_cast<int>(averaged);
  return OkStatus();
}

// Whether a private fit ran the adaptive schedule and what it chose
// (GmmGuarantee::adaptive_iterations; absent: it did not). Only a joint fit
// from the private start of more than kAdaptiveHeadIterations iterations
// runs it; it settled exactly when its movement is below kSettledMovement,
// and a settled one averages no iterates.
Status AdaptiveIterationsFrom(const json& model, GmmFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
  GmmGuarantee& g = fit.guarantee;
  g.adaptive_iterations = privacy->contains("adaptive_iterations");
  if (!g.adaptive_iterations) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(const json* a, internal::Field(*privacy, "adaptive_iterations"));
  DPEM_ASSIGN_OR_RETURN(g.settled, internal::BoolField(*a, "settled"));
  DPEM_ASSIGN_OR_RETURN(g.movement, internal::FiniteNumberField(*a, "movement",
                                                                internal::kNonNegativeNumber,
                                                                "privacy.adaptive_iterations"));
  if (fit.init != GmmInit::kPrivate || fit.iterations <= kAdaptiveHeadIterations ||
      g.mechanisms != GmmMechanisms::kJoint) {
    return InvalidArgumentError("privacy.adaptive_iterations belongs only to a joint fit from "
                                "the private start of more than " +
                                std::to_string(kAdaptiveHeadIterations) + " iterations");
  }
  if (g.settled != (g.movement < kSettledMovement)) {
    return InvalidArgumentError("privacy.adaptive_iterations: settled must say whether the "
                                "movement is below " + std::to_string(kSettledMovement));
  }
  if (g.settled && g.averaged_iterations != 1) {
    return InvalidArgumentError("privacy.adaptive_iterations: a settled fit averages no "
                                "iterates (privacy.averaged_iterations must be 1)");
  }
  return OkStatus();
}

// The relative distance within which an iteration's recorded noise
// multiplier (noise scale over sensitivity) must match the schedule's: the
// discrete noise rounds it up by at most about 2^-19 (kDiscreteGridBits,
// dpem/mechanisms/additive_noise.h); continuous noise records it exactly.
constexpr double kScheduleMultiplierTolerance = 1e-4;

// A schedule against the ledger: only the joint mechanism has one (a lighter
// first iteration needs it), and then the last J releases are the
// iterations', iteration j's labelled "iteration j / " with the noise
// multiplier noise_multipliers[0] / sqrt(w_j) (GmmReleasePlan::ForIteration).
Status CheckScheduleInLedger(const GmmGuarantee& g) {
  const std::vector<double>& w = g.iteration_weights;
  if (w.empty()) return OkStatus();
  if (g.mechanisms != GmmMechanisms::kJoint || g.noise_multipliers.size() != 1) {
    return InvalidArgumentError("privacy.iteration_weights: only a joint release of one noise "
                                "multiplier has a budget schedule");
  }
  const std::vector<Release>& releases = g.ledger.releases();
  const std::size_t first = releases.size() - w.size();  // CheckLedger: size >= J.
  for (std::size_t j = 0; j < w.size(); ++j) {
    const Release& r = releases[first + j];
    const std::string label = "iteration " + std::to_string(j + 1) + " / ";
    const double expected = g.noise_multipliers[0] / std::sqrt(w[j]);
    const double recorded = r.noise_scale / r.sensitivity;
    if (r.label.rfind(label, 0) != 0 ||
        !(std::fabs(recorded / expected - 1.0) <= kScheduleMultiplierTolerance)) {
      return InvalidArgumentError(
          "privacy.iteration_weights does not match the ledger: release '" + r.label +
          "' should be iteration " + std::to_string(j + 1) + "'s, with noise multiplier " +
          std::to_string(expected) + " (noise_multipliers over the square root of its weight), "
          "not " + std::to_string(recorded));
    }
  }
  return OkStatus();
}

// A private model's ledger: the releases of a domain released inside the
// fit (--data-norm auto), each labelled with kBoundsLabelPrefix, then the
// private start's (models/start/private_start.h), then those of the
// iterations.
Status CheckLedger(const GmmFit& fit) {
  if (!fit.guarantee.is_private) return OkStatus();
  DPEM_RETURN_IF_ERROR(
      internal::CheckGmmIterationWeights(fit.guarantee.iteration_weights, fit.iterations));
  DPEM_RETURN_IF_ERROR(internal::CheckStartInLedger(fit.guarantee.ledger,
                                                    fit.init == GmmInit::kPrivate));
  const std::size_t per_iteration =
      fit.guarantee.mechanisms == GmmMechanisms::kJoint
          ? 1
          : static_cast<std::size_t>(2 * fit.parameters.components() + 1);
  const std::size_t bounds_releases =
      internal::CountReleasesLabelled(fit.guarantee.ledger, kBoundsLabelPrefix);
  const std::size_t start_releases =
      fit.init == GmmInit::kPrivate ? internal::kPrivateStartReleases : 0;
  const std::size_t expected = static_cast<std::size_t>(fit.iterations) * per_iteration +
                               bounds_releases + start_releases;
  if (fit.guarantee.ledger.size() != expected) {
    return InvalidArgumentError("a private model of " + std::to_string(fit.iterations) +
                                " iterations must list " + std::to_string(expected) +
                                " releases");
  }
  return CheckScheduleInLedger(fit.guarantee);
}

}  // namespace

template <>
void internal::ModelFileFormat<GmmFit>::AddFields(const GmmFit& fit, json& model) {
  const GmmParameters& p = fit.parameters;
  model["covariance_type"] = CovarianceTypeName(p.type);
  model["estimator"] = EstimatorName(fit.estimator);
  model["components"] = p.components();
  model["dimension"] = p.dimension();
  model["init"] = GmmInitName(fit.init);
  model["parameters"] = ParametersToJson(p);
  if (fit.guarantee.is_private) AddPrivacyFields(fit.guarantee, model["privacy"]);
}

template <>
Status internal::ModelFileFormat<GmmFit>::ReadFields(const json& model, GmmFit& fit) {
  DPEM_ASSIGN_OR_RETURN(fit.parameters, ParametersFrom(model));
  DPEM_RETURN_IF_ERROR(internal::CheckCenterLength(fit.domain, fit.parameters.dimension()));
  DPEM_ASSIGN_OR_RETURN(const std::string estimator, internal::StringField(model, "estimator"));
  DPEM_ASSIGN_OR_RETURN(fit.estimator, ParseEstimator(estimator));
  DPEM_ASSIGN_OR_RETURN(fit.init, InitFrom(model));
  if (fit.guarantee.is_private) DPEM_RETURN_IF_ERROR(PrivacyFieldsFrom(model, fit.guarantee));
  DPEM_RETURN_IF_ERROR(CheckLedger(fit));
  if (!fit.guarantee.is_private) return OkStatus();
  DPEM_RETURN_IF_ERROR(AveragedIterationsFrom(model, fit));
  return AdaptiveIterationsFrom(model, fit);
}

template struct ModelIo<GmmFit>;

GmmFitTask MakeGmmFitTask(GmmFitOptions options) {
  return MakeModelFitTask<GmmFitOptions, GmmFit>(&FitGmm, std::move(options));
}

}  // namespace dpem
