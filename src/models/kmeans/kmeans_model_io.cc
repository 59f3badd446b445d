// k-means model files: see dpem/models/kmeans/kmeans_model_io.h. The shared
// parts (format, version, n, iterations, domain, guarantee with its ledger,
// seed) are written and read by pipeline/model_file.h; this file's
// ModelFileFormat<KmeansFit> adds the method, the start, the centres and
// the noise multipliers (read back and checked), and checks the ledger's
// length.
#include "dpem/models/kmeans/kmeans_model_io.h"

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "accounting/ledger_json.h"
#include "dpem/data/private_bounds.h"
#include "dpem/models/kmeans/kmeans_fit_task.h"
#include "internal/file_util.h"
#include "internal/json_fields.h"
#include "models/start/private_start.h"
#include "pipeline/model_file.h"

namespace dpem {

using nlohmann::json;

// Format, version, model, description, most iterations, no fixed accountant.
template <>
const internal::ModelFileSchema internal::ModelFileFormat<KmeansFit>::kSchema{
    "dpem-kmeans", 1, "kmeans", "k-means", internal::kMaxModelIterations, std::nullopt};

namespace {

// The most centres a file may hold.
constexpr std::size_t kMaxCentres = 1000000;

StatusOr<Eigen::MatrixXd> CentresFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const json* rows, internal::Field(model, "centres"));
  if (rows->is_array() && rows->size() > kMaxCentres) {
    return InvalidArgumentError("'centres' must hold at most 1000000 rows");
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd c, internal::RowsFrom(*rows, "'centres'"));
  if (c.cols() == 0) return InvalidArgumentError("'centres' must be K rows of d numbers");
  if (!c.allFinite()) return InvalidArgumentError("'centres' must be finite");
  return c;
}

// The method, and the start (files written before the field existed were
// seeded at random).
Status MethodAndStartFrom(const json& model, KmeansFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const std::string method, internal::StringField(model, "method"));
  DPEM_ASSIGN_OR_RETURN(fit.method, ParseKmeansMethod(method));
  DPEM_ASSIGN_OR_RETURN(const std::optional<std::string> init,
                        internal::OptionalStringField(model, "init"));
  if (!init) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(fit.init, ParseKmeansInit(*init));
  return OkStatus();
}

// A private model's ledger: the releases of a domain released inside the
// fit (--data-norm auto), each labelled with kBoundsLabelPrefix, then two of
// a private start, then one per iteration (two for cdp-laplace).
Status CheckLedger(const KmeansFit& fit) {
  if (!fit.guarantee.is_private) return OkStatus();
  const std::size_t bounds =
      internal::CountReleasesLabelled(fit.guarantee.ledger, kBoundsLabelPrefix);
  const std::size_t per_iteration = fit.method == KmeansMethod::kCdpLaplace ? 2 : 1;
  const std::size_t start = fit.init == KmeansInit::kPrivate ? internal::kPrivateStartReleases : 0;
  if (fit.guarantee.ledger.size() !=
      bounds + start + per_iteration * static_cast<std::size_t>(fit.iterations)) {
    return InvalidArgumentError("a private model must list one release per iteration (two for "
                                "cdp-laplace), after two for a private start and those of "
                                "its domain, if released");
  }
  return internal::CheckStartInLedger(fit.guarantee.ledger, fit.init == KmeansInit::kPrivate);
}

// A private model's noise multipliers, as AddFields writes them: positive
// and finite, two for cdp-laplace's counts and sums, one otherwise.
Status NoiseMultipliersFrom(const json& model, KmeansFit& fit) {
  fit.guarantee.noise_multipliers.clear();
  if (!fit.guarantee.is_private) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(const json* privacy, internal::Field(model, "privacy"));
  DPEM_ASSIGN_OR_RETURN(const json* z, internal::Field(*privacy, "noise_multipliers"));
  DPEM_ASSIGN_OR_RETURN(fit.guarantee.noise_multipliers,
                        internal::FiniteNumbersFrom(*z, "privacy.noise_multipliers",
                                                    internal::kPositiveNumber));
  const std::size_t expected = fit.method == KmeansMethod::kCdpLaplace ? 2 : 1;
  if (fit.guarantee.noise_multipliers.size() != expected) {
    return InvalidArgumentError("privacy.noise_multipliers must hold " +
                                std::to_string(expected) + " number(s) for method " +
                                std::string(KmeansMethodName(fit.method)));
  }
  return OkStatus();
}

}  // namespace

template <>
void internal::ModelFileFormat<KmeansFit>::AddFields(const KmeansFit& fit, json& model) {
  model["method"] = KmeansMethodName(fit.method);
  model["components"] = fit.centres.rows();
  model["dimension"] = fit.centres.cols();
  model["init"] = KmeansInitName(fit.init);
  model["centres"] = internal::RowsToJson(fit.centres);
  if (fit.guarantee.is_private) {
    model["privacy"]["noise_multipliers"] = fit.guarantee.noise_multipliers;
  }
}

template <>
Status internal::ModelFileFormat<KmeansFit>::ReadFields(const json& model, KmeansFit& fit) {
  DPEM_RETURN_IF_ERROR(MethodAndStartFrom(model, fit));
  DPEM_ASSIGN_OR_RETURN(fit.centres, CentresFrom(model));
  DPEM_RETURN_IF_ERROR(internal::CheckCenterLength(fit.domain, fit.centres.cols()));
  DPEM_RETURN_IF_ERROR(CheckLedger(fit));
  return NoiseMultipliersFrom(model, fit);
}

template struct ModelIo<KmeansFit>;

KmeansFitTask MakeKmeansFitTask(KmeansFitOptions options) {
  // dplloyd is pure epsilon-DP: a budget is charged no delta for it.
  double (*charged_delta)(const KmeansFitOptions&) = [](const KmeansFitOptions& o) {
    return KmeansMethodNeedsDelta(o.method) ? o.delta : 0.0;
  };
  return MakeModelFitTask<KmeansFitOptions, KmeansFit>(&FitKmeans, std::move(options),
                                                       charged_delta);
}

}  // namespace dpem
