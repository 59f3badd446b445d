// Factor analysis model files: see dpem/models/factor_analysis/fa_model_io.h.
// The shared parts (format, version, n, iterations, domain, guarantee with
// its ledger, seed) are written and read by pipeline/model_file.h; this
// file's ModelFileFormat<FaFit> adds the parameters and the mechanism's
// fields of a private fit.
#include "dpem/models/factor_analysis/fa_model_io.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "accounting/ledger_json.h"
#include "dpem/accounting/accountant.h"
#include "dpem/data/private_bounds.h"
#include "dpem/models/factor_analysis/fa_fit_task.h"
#include "internal/file_util.h"
#include "internal/json_fields.h"
#include "pipeline/model_file.h"

namespace dpem {

using nlohmann::json;

// The one release is accounted at the discrete Gaussian's Renyi curve
// (rdp) whatever accountant the caller named; the iterations are bounded
// only by the fit's int.
template <>
const internal::ModelFileSchema internal::ModelFileFormat<FaFit>::kSchema{
    .format = "dpem-fa",
    .version = 1,
    .model = "factor_analysis",
    .description = "factor analysis",
    .max_iterations = std::numeric_limits<int>::max(),
    .fixed_accountant = AccountantKind::kRdp};

namespace {

json ParametersToJson(const FaParameters& p) {
  return {{"mean", internal::AsStdVector(p.mean)},
          {"loadings", internal::RowsToJson(p.loadings)},
          {"noise_variances", internal::AsStdVector(p.noise_variances)}};
}

// The parameters: the mean, the loadings (d rows of L numbers each, L taken
// from the first row) and the noise variances.
StatusOr<FaParameters> ParametersFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const json* params, internal::Field(model, "parameters"));
  DPEM_ASSIGN_OR_RETURN(const json* mean, internal::Field(*params, "mean"));
  DPEM_ASSIGN_OR_RETURN(const json* loadings, internal::Field(*params, "loadings"));
  DPEM_ASSIGN_OR_RETURN(const json* variances, internal::Field(*params, "noise_variances"));
  FaParameters p;
  DPEM_ASSIGN_OR_RETURN(p.mean, internal::VectorFrom(*mean, "'mean'"));
  DPEM_ASSIGN_OR_RETURN(p.loadings, internal::RowsFrom(*loadings, "'loadings'"));
  DPEM_ASSIGN_OR_RETURN(p.noise_variances, internal::VectorFrom(*variances, "'noise_variances'"));
  DPEM_RETURN_IF_ERROR(ValidateFaParameters(p));
  return p;
}

// A private fit makes one release (the second moment), after those of its
// domain if it released one, and certifies at most its target.
Status CheckLedger(const FaGuarantee& g) {
  const std::size_t bounds = internal::CountReleasesLabelled(g.ledger, kBoundsLabelPrefix);
  if (g.ledger.size() != bounds + 1) {
    return InvalidArgumentError("a private factor analysis model must list one release (the "
                                "second moment), after those of its domain, if released");
  }
  if (!(g.epsilon <= g.target_epsilon)) {
    return InvalidArgumentError("'epsilon' must be at most 'target_epsilon'");
  }
  return OkStatus();
}

}  // namespace

template <>
void internal::ModelFileFormat<FaFit>::AddFields(const FaFit& fit, json& model) {
  const FaParameters& p = fit.parameters;
  model["dimension"] = p.dimension();
  model["factors"] = p.factors();
  model["parameters"] = ParametersToJson(p);
  model["iterations_run"] = fit.iterations_run;
  model["tolerance"] = fit.tolerance;
  if (fit.guarantee.is_private) {
    model["privacy"]["mechanism"] = "analyze-gauss";
    model["privacy"]["noise_multiplier"] = fit.guarantee.noise_multiplier;
  }
}

template <>
Status internal::ModelFileFormat<FaFit>::ReadFields(const json& model, FaFit& fit) {
  DPEM_ASSIGN_OR_RETURN(fit.parameters, ParametersFrom(model));
  // Optional: files written before EM could stop early do not have it.
  if (model.contains("iterations_run")) {
    const std::optional<std::uint64_t> run = internal::AsUnsigned(model["iterations_run"]);
    if (!run || *run > static_cast<std::uint64_t>(fit.iterations)) {
      return InvalidArgumentError("'iterations_run' must be an integer from 0 to 'iterations'");
    }
    fit.iterations_run = static_cast<int>(*run);
  }
  if (model.contains("tolerance")) {
    DPEM_ASSIGN_OR_RETURN(fit.tolerance, internal::FiniteNumberField(
                                             model, "tolerance", internal::kNonNegativeNumber));
  }
  DPEM_RETURN_IF_ERROR(internal::CheckCenterLength(fit.domain, fit.parameters.dimension()));
  if (fit.guarantee.is_private) {
    DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
    DPEM_ASSIGN_OR_RETURN(fit.guarantee.noise_multiplier,
                          internal::FiniteNumberField(*privacy, "noise_multiplier",
                                                      internal::kPositiveNumber, "privacy"));
    DPEM_RETURN_IF_ERROR(CheckLedger(fit.guarantee));
  }
  return OkStatus();
}

template struct ModelIo<FaFit>;

FaFitTask MakeFaFitTask(FaFitOptions options) {
  return MakeModelFitTask<FaFitOptions, FaFit>(&FitFactorAnalysis, std::move(options));
}

}  // namespace dpem
