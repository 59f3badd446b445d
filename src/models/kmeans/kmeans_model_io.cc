// k-means model files: see dpem/models/kmeans/kmeans_model_io.h.
#include "dpem/models/kmeans/kmeans_model_io.h"

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "dpem/data/private_bounds.h"
#include "internal/file_util.h"
#include "accounting/ledger_json.h"
#include "models/start/private_start.h"

namespace dpem {
namespace {

using nlohmann::json;

std::vector<double> AsVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

json PrivacyToJson(const KmeansFit& fit) {
  const KmeansGuarantee& g = fit.guarantee;
  json out = {{"private", g.is_private},
              {"neighbour_relation", kNeighbourRelation},
              {"guarantee_void", g.guarantee_void},
              {"void_reasons", g.void_reasons},
              {"seeded", fit.seed.has_value()}};
  if (fit.seed) {
    out["seed"] = *fit.seed;
    out["seed_warning"] = kSeededGeneratorWarning;
  }
  if (!g.is_private) return out;
  out["epsilon"] = g.epsilon;
  out["delta"] = g.delta;
  out["target_epsilon"] = g.target_epsilon;
  out["target_delta"] = g.target_delta;
  out["accountant"] = AccountantName(g.accountant);
  out["noise_multipliers"] = g.noise_multipliers;
  out["releases"] = internal::LedgerToJson(g.ledger);
  return out;
}

// A field of `object`, or InvalidArgument naming it.
StatusOr<const json*> Field(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) {
    return InvalidArgumentError(std::string("missing field '") + key + "'");
  }
  return &object.at(key);
}

StatusOr<Eigen::VectorXd> NumbersFrom(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgumentError(what + " must be an array of numbers");
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) return InvalidArgumentError(what + " must be an array of numbers");
    out(static_cast<Eigen::Index>(i)) = v[i].get<double>();
  }
  return out;
}

StatusOr<Eigen::MatrixXd> CentresFrom(const json& rows) {
  if (!rows.is_array() || rows.empty() || rows.size() > 1000000) {
    return InvalidArgumentError("'centres' must be a non-empty array of rows");
  }
  const std::size_t d = rows[0].is_array() ? rows[0].size() : 0;
  for (const json& r : rows) {
    if (!r.is_array() || r.size() != d || d == 0) {
      return InvalidArgumentError("'centres' must be K rows of d numbers");
    }
  }
  Eigen::MatrixXd c(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(d));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd row, NumbersFrom(rows[i], "each centre"));
    c.row(static_cast<Eigen::Index>(i)) = row.transpose();
  }
  if (!c.allFinite()) return InvalidArgumentError("'centres' must be finite");
  return c;
}

StatusOr<DataDomain> DomainFrom(const json& model, Eigen::Index d) {
  DPEM_ASSIGN_OR_RETURN(const json* t, Field(model, "data_transform"));
  DPEM_ASSIGN_OR_RETURN(const json* norm, Field(*t, "data_norm"));
  DPEM_ASSIGN_OR_RETURN(const json* from_data, Field(*t, "from_data"));
  DPEM_ASSIGN_OR_RETURN(const json* center, Field(*t, "center"));
  if (!norm->is_number() || !from_data->is_boolean()) {
    return InvalidArgumentError("'data_transform' has mistyped fields");
  }
  DataDomain domain;
  domain.data_norm = norm->get<double>();
  domain.from_data = from_data->get<bool>();
  DPEM_ASSIGN_OR_RETURN(domain.center, NumbersFrom(*center, "'center'"));
  if (domain.center.size() != d) return InvalidArgumentError("'center' must have d entries");
  DPEM_RETURN_IF_ERROR(ValidateDomain(domain));
  return domain;
}

// The privacy block: only what score/predict and round trips need; the
// ledger's length is checked against the method and J.
Status GuaranteeFrom(const json& model, KmeansFit& fit) {
  DPEM_ASSIGN_OR_RETURN(const json* p, Field(model, "privacy"));
  DPEM_ASSIGN_OR_RETURN(const json* is_private, Field(*p, "private"));
  DPEM_ASSIGN_OR_RETURN(const json* is_void, Field(*p, "guarantee_void"));
  if (!is_private->is_boolean() || !is_void->is_boolean()) {
    return InvalidArgumentError("'privacy' has mistyped fields");
  }
  fit.guarantee.is_private = is_private->get<bool>();
  fit.guarantee.guarantee_void = is_void->get<bool>();
  if (p->contains("seed") && (*p)["seed"].is_number_unsigned()) {
    fit.seed = (*p)["seed"].get<std::uint64_t>();
  }
  if (!fit.guarantee.is_private) return OkStatus();
  for (const char* key : {"epsilon", "delta", "target_epsilon", "target_delta"}) {
    DPEM_ASSIGN_OR_RETURN(const json* v, Field(*p, key));
    if (!v->is_number()) return InvalidArgumentError(std::string("'") + key + "' must be a number");
  }
  fit.guarantee.epsilon = (*p)["epsilon"].get<double>();
  fit.guarantee.delta = (*p)["delta"].get<double>();
  fit.guarantee.target_epsilon = (*p)["target_epsilon"].get<double>();
  fit.guarantee.target_delta = (*p)["target_delta"].get<double>();
  DPEM_ASSIGN_OR_RETURN(const json* releases, Field(*p, "releases"));
  if (!releases->is_array()) return InvalidArgumentError("'releases' must be an array");
  DPEM_ASSIGN_OR_RETURN(fit.guarantee.ledger, internal::LedgerFromJson(*releases));
  // Releases of a domain released inside the fit (--data-norm auto) are
  // listed first, each labelled with kBoundsLabelPrefix.
  const std::size_t bounds =
      internal::CountReleasesLabelled(fit.guarantee.ledger, kBoundsLabelPrefix);
  const std::size_t per_iteration = fit.method == KmeansMethod::kCdpLaplace ? 2 : 1;
  const std::size_t start = fit.init == KmeansInit::kPrivate ? internal::kPrivateStartReleases : 0;
  if (releases->size() != bounds + start + per_iteration * static_cast<std::size_t>(fit.iterations)) {
    return InvalidArgumentError("a private model must list one release per iteration (two for "
                                "cdp-laplace), after two for a private start and those of "
                                "its domain, if released");
  }
  return internal::CheckStartInLedger(fit.guarantee.ledger, fit.init == KmeansInit::kPrivate);
}

StatusOr<KmeansFit> FitFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const json* format, Field(model, "format"));
  if (!format->is_string() || format->get<std::string>() != kKmeansModelFormat) {
    return InvalidArgumentError("not a dpem k-means model");
  }
  DPEM_ASSIGN_OR_RETURN(const json* version, Field(model, "version"));
  if (!version->is_number() || version->get<double>() != kKmeansModelVersion) {
    return InvalidArgumentError("unsupported model version");
  }
  KmeansFit fit;
  DPEM_ASSIGN_OR_RETURN(const json* method, Field(model, "method"));
  if (!method->is_string()) return InvalidArgumentError("'method' must be a string");
  DPEM_ASSIGN_OR_RETURN(fit.method, ParseKmeansMethod(method->get<std::string>()));
  for (const char* key : {"n", "iterations"}) {
    DPEM_ASSIGN_OR_RETURN(const json* v, Field(model, key));
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() < 1 ||
        v->get<std::uint64_t>() > (std::uint64_t{1} << 53)) {
      return InvalidArgumentError(std::string("'") + key + "' must be a whole number >= 1");
    }
  }
  fit.n = static_cast<Eigen::Index>(model["n"].get<std::uint64_t>());
  if (model["iterations"].get<std::uint64_t>() > 1000000) {
    return InvalidArgumentError("'iterations' must be <= 1000000");
  }
  fit.iterations = static_cast<int>(model["iterations"].get<std::uint64_t>());
  // Files written before the field existed were seeded at random.
  if (model.contains("init")) {
    if (!model["init"].is_string()) return InvalidArgumentError("'init' must be a string");
    DPEM_ASSIGN_OR_RETURN(fit.init, ParseKmeansInit(model["init"].get<std::string>()));
  }
  DPEM_ASSIGN_OR_RETURN(const json* centres, Field(model, "centres"));
  DPEM_ASSIGN_OR_RETURN(fit.centres, CentresFrom(*centres));
  DPEM_ASSIGN_OR_RETURN(fit.domain, DomainFrom(model, fit.centres.cols()));
  DPEM_RETURN_IF_ERROR(GuaranteeFrom(model, fit));
  return fit;
}

}  // namespace

std::string KmeansModelToJson(const KmeansFit& fit) {
  json centres = json::array();
  for (Eigen::Index i = 0; i < fit.centres.rows(); ++i) {
    centres.push_back(AsVector(fit.centres.row(i).transpose()));
  }
  json model = {{"format", kKmeansModelFormat},
                {"version", kKmeansModelVersion},
                {"model", "kmeans"},
                {"method", KmeansMethodName(fit.method)},
                {"components", fit.centres.rows()},
                {"dimension", fit.centres.cols()},
                {"n", fit.n},
                {"iterations", fit.iterations},
                {"init", KmeansInitName(fit.init)},
                {"centres", centres},
                {"data_transform",
                 {{"data_norm", fit.domain.data_norm},
                  {"clipping", "records clipped to the L2 ball of radius data_norm around "
                               "center, then mapped to the unit ball"},
                  {"from_data", fit.domain.from_data},
                  {"center", AsVector(fit.domain.center)}}},
                {"privacy", PrivacyToJson(fit)}};
  return model.dump(2) + "\n";
}

StatusOr<KmeansFit> KmeansModelFromJson(const std::string& text) {
  const json model = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (model.is_discarded()) return InvalidArgumentError("not valid JSON");
  return FitFrom(model);
}

Status WriteKmeansModel(const std::string& path, const KmeansFit& fit) {
  return internal::WriteFileAtomically(path, KmeansModelToJson(fit));
}

StatusOr<KmeansFit> ReadKmeansModel(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  StatusOr<KmeansFit> fit = KmeansModelFromJson(text);
  if (!fit.ok()) return InvalidArgumentError(path + ": " + fit.status().message());
  return fit;
}

}  // namespace dpem
