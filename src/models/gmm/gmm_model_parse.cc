// Parsing of GMM model files: see dpem/models/gmm/gmm_model_io.h. Every field is
// checked for presence and type, and the parameters are validated, so a
// damaged or hostile file gives one InvalidArgument naming the problem.
#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "dpem/models/gmm/gmm_model_io.h"
#include "dpem/data/private_bounds.h"
#include "accounting/ledger_json.h"
#include "models/start/private_start.h"

namespace dpem {
namespace {

using nlohmann::json;

StatusOr<const json*> Field(const json& object, const std::string& key) {
  if (!object.is_object()) return InvalidArgumentError("expected an object around '" + key + "'");
  auto it = object.find(key);
  if (it == object.end()) return InvalidArgumentError("missing field '" + key + "'");
  return &*it;
}

StatusOr<double> NumberField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_number()) return InvalidArgumentError("field '" + key + "' must be a number");
  return v->get<double>();
}

// Bounds of the counts a model file may state (whole numbers >= 1).
constexpr double kMaxRecords = 9007199254740992.0;  // 2^53.
constexpr double kMaxIterations = 1e6;

StatusOr<int64_t> WholeNumberField(const json& object, const std::string& key, double maximum) {
  DPEM_ASSIGN_OR_RETURN(const double v, NumberField(object, key));
  if (!(v >= 1 && v <= maximum && v == std::floor(v))) {
    return InvalidArgumentError("field '" + key + "' must be a whole number from 1 to " +
                                std::to_string(static_cast<int64_t>(maximum)));
  }
  return static_cast<int64_t>(v);
}

StatusOr<std::string> StringField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_string()) return InvalidArgumentError("field '" + key + "' must be a string");
  return v->get<std::string>();
}

StatusOr<bool> BoolField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_boolean()) return InvalidArgumentError("field '" + key + "' must be true or false");
  return v->get<bool>();
}

StatusOr<Eigen::VectorXd> VectorFrom(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgumentError(what + " must be an array of numbers");
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) return InvalidArgumentError(what + " must be an array of numbers");
    out(static_cast<Eigen::Index>(i)) = v[i].get<double>();
  }
  return out;
}

StatusOr<Eigen::MatrixXd> MatrixFrom(const json& v, Eigen::Index rows, Eigen::Index cols,
                                     const std::string& what) {
  const std::string shape = what + " must be a " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " array of numbers";
  if (!v.is_array() || static_cast<Eigen::Index>(v.size()) != rows) {
    return InvalidArgumentError(shape);
  }
  // Check every row's length before allocating, so that the allocation is
  // bounded by the numbers the file really holds (a hostile header cannot
  // request a huge matrix).
  for (const json& row : v) {
    if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != cols) {
      return InvalidArgumentError(shape);
    }
  }
  Eigen::MatrixXd out(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd row, VectorFrom(v[static_cast<std::size_t>(i)], what));
    out.row(i) = row.transpose();
  }
  return out;
}

StatusOr<GmmParameters> ParametersFrom(const json& model) {
  GmmParameters p;
  DPEM_ASSIGN_OR_RETURN(const std::string type, StringField(model, "covariance_type"));
  DPEM_ASSIGN_OR_RETURN(p.type, ParseCovarianceType(type));
  DPEM_ASSIGN_OR_RETURN(const double k, NumberField(model, "components"));
  DPEM_ASSIGN_OR_RETURN(const double d, NumberField(model, "dimension"));
  if (!(k >= 1 && k <= 1e6 && d >= 1 && d <= 1e6 && k == std::floor(k) && d == std::floor(d))) {
    return InvalidArgumentError("components and dimension must be whole numbers >= 1");
  }
  const auto K = static_cast<Eigen::Index>(k), D = static_cast<Eigen::Index>(d);
  DPEM_ASSIGN_OR_RETURN(const json* params, Field(model, "parameters"));
  DPEM_ASSIGN_OR_RETURN(const json* weights, Field(*params, "weights"));
  DPEM_ASSIGN_OR_RETURN(p.weights, VectorFrom(*weights, "weights"));
  if (p.weights.size() != K) return InvalidArgumentError("weights must have K entries");
  DPEM_ASSIGN_OR_RETURN(const json* means, Field(*params, "means"));
  DPEM_ASSIGN_OR_RETURN(p.means, MatrixFrom(*means, K, D, "means"));
  DPEM_ASSIGN_OR_RETURN(const json* covs, Field(*params, "covariances"));
  if (!covs->is_array() || static_cast<Eigen::Index>(covs->size()) != K) {
    return InvalidArgumentError("covariances must hold K matrices");
  }
  for (const json& c : *covs) {
    DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd m, MatrixFrom(c, D, D, "each covariance"));
    p.covariances.push_back(std::move(m));
  }
  DPEM_RETURN_IF_ERROR(ValidateParameters(p));
  return p;
}

StatusOr<DataDomain> DomainFrom(const json& model, Eigen::Index d) {
  DPEM_ASSIGN_OR_RETURN(const json* t, Field(model, "data_transform"));
  DataDomain domain;
  DPEM_ASSIGN_OR_RETURN(domain.data_norm, NumberField(*t, "data_norm"));
  DPEM_ASSIGN_OR_RETURN(domain.from_data, BoolField(*t, "from_data"));
  DPEM_ASSIGN_OR_RETURN(const json* center, Field(*t, "center"));
  DPEM_ASSIGN_OR_RETURN(domain.center, VectorFrom(*center, "center"));
  if (domain.center.size() != d) return InvalidArgumentError("center must have d entries");
  DPEM_RETURN_IF_ERROR(ValidateDomain(domain));
  return domain;
}

StatusOr<PrivacyLedger> LedgerFrom(const json& releases) {
  return internal::LedgerFromJson(releases);
}

Status PrivateFieldsFrom(const json& privacy, GmmGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(g.epsilon, NumberField(privacy, "epsilon"));
  DPEM_ASSIGN_OR_RETURN(g.delta, NumberField(privacy, "delta"));
  DPEM_ASSIGN_OR_RETURN(g.target_epsilon, NumberField(privacy, "target_epsilon"));
  DPEM_ASSIGN_OR_RETURN(g.target_delta, NumberField(privacy, "target_delta"));
  DPEM_ASSIGN_OR_RETURN(const std::string accountant, StringField(privacy, "accountant"));
  DPEM_ASSIGN_OR_RETURN(g.accountant, ParseAccountantKind(accountant));
  DPEM_ASSIGN_OR_RETURN(const std::string mechanisms, StringField(privacy, "mechanisms"));
  DPEM_ASSIGN_OR_RETURN(g.mechanisms, ParseGmmMechanisms(mechanisms));
  DPEM_ASSIGN_OR_RETURN(g.per_release_epsilon, NumberField(privacy, "per_release_epsilon"));
  if (privacy.contains("component_frame_radius")) {  // Absent from older files.
    DPEM_ASSIGN_OR_RETURN(g.frame_radius, NumberField(privacy, "component_frame_radius"));
    if (!(g.frame_radius >= 0.0 && std::isfinite(g.frame_radius))) {
      return InvalidArgumentError("privacy.component_frame_radius must be finite and >= 0");
    }
  }
  DPEM_ASSIGN_OR_RETURN(const json* z, Field(privacy, "noise_multipliers"));
  DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd zv, VectorFrom(*z, "noise_multipliers"));
  g.noise_multipliers.assign(zv.data(), zv.data() + zv.size());
  DPEM_ASSIGN_OR_RETURN(const json* releases, Field(privacy, "releases"));
  DPEM_ASSIGN_OR_RETURN(g.ledger, LedgerFrom(*releases));
  return OkStatus();
}

StatusOr<GmmGuarantee> GuaranteeFrom(const json& model, std::optional<std::uint64_t>& seed) {
  DPEM_ASSIGN_OR_RETURN(const json* privacy, Field(model, "privacy"));
  GmmGuarantee g;
  DPEM_ASSIGN_OR_RETURN(g.is_private, BoolField(*privacy, "private"));
  DPEM_ASSIGN_OR_RETURN(g.guarantee_void, BoolField(*privacy, "guarantee_void"));
  DPEM_ASSIGN_OR_RETURN(const json* reasons, Field(*privacy, "void_reasons"));
  if (!reasons->is_array()) return InvalidArgumentError("void_reasons must be an array");
  for (const json& r : *reasons) {
    if (!r.is_string()) return InvalidArgumentError("void_reasons must hold strings");
    g.void_reasons.push_back(r.get<std::string>());
  }
  auto s = privacy->find("seed");
  if (s != privacy->end()) {
    if (!s->is_number_unsigned()) return InvalidArgumentError("seed must be a whole number");
    seed = s->get<std::uint64_t>();
  }
  if (g.is_private) DPEM_RETURN_IF_ERROR(PrivateFieldsFrom(*privacy, g));
  return g;
}

// The start the fit used; files written before the field existed started
// from random points (the only start then).
StatusOr<GmmInit> InitFrom(const json& model) {
  if (!model.contains("init")) return GmmInit::kRandom;
  DPEM_ASSIGN_OR_RETURN(const std::string name, StringField(model, "init"));
  return ParseGmmInit(name);
}

StatusOr<GmmFit> FitFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const std::string format, StringField(model, "format"));
  if (format != kGmmModelFormat) {
    return InvalidArgumentError("not a dpem Gaussian-mixture model (format '" + format + "')");
  }
  DPEM_ASSIGN_OR_RETURN(const double version, NumberField(model, "version"));
  if (version != kGmmModelVersion) {
    return InvalidArgumentError("unsupported model version " + std::to_string(version));
  }
  GmmFit fit;
  DPEM_ASSIGN_OR_RETURN(fit.parameters, ParametersFrom(model));
  DPEM_ASSIGN_OR_RETURN(fit.domain, DomainFrom(model, fit.parameters.dimension()));
  DPEM_ASSIGN_OR_RETURN(const std::string estimator, StringField(model, "estimator"));
  DPEM_ASSIGN_OR_RETURN(fit.estimator, ParseEstimator(estimator));
  DPEM_ASSIGN_OR_RETURN(fit.n, WholeNumberField(model, "n", kMaxRecords));
  DPEM_ASSIGN_OR_RETURN(fit.iterations, WholeNumberField(model, "iterations", kMaxIterations));
  DPEM_ASSIGN_OR_RETURN(fit.init, InitFrom(model));
  DPEM_ASSIGN_OR_RETURN(fit.guarantee, GuaranteeFrom(model, fit.seed));
  const std::size_t per_iteration =
      fit.guarantee.mechanisms == GmmMechanisms::kJoint
          ? 1
          : static_cast<std::size_t>(2 * fit.parameters.components() + 1);
  // Releases of a domain released inside the fit (--data-norm auto) are
  // listed first, each labelled with kBoundsLabelPrefix.
  const std::size_t bounds_releases =
      internal::CountReleasesLabelled(fit.guarantee.ledger, kBoundsLabelPrefix);
  // The private start's releases follow them (models/start/private_start.h).
  if (fit.guarantee.is_private) {
    DPEM_RETURN_IF_ERROR(internal::CheckStartInLedger(fit.guarantee.ledger,
                                                      fit.init == GmmInit::kPrivate));
  }
  const std::size_t start_releases =
      fit.init == GmmInit::kPrivate ? internal::kPrivateStartReleases : 0;
  const std::size_t expected = static_cast<std::size_t>(fit.iterations) * per_iteration +
                               bounds_releases + start_releases;
  if (fit.guarantee.is_private && fit.guarantee.ledger.size() != expected) {
    return InvalidArgumentError("a private model of " + std::to_string(fit.iterations) +
                                " iterations must list " + std::to_string(expected) +
                                " releases");
  }
  return fit;
}

}  // namespace

StatusOr<GmmFit> GmmModelFromJson(const std::string& text) {
  const json model = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (model.is_discarded()) return InvalidArgumentError("not valid JSON");
  return FitFrom(model);
}

}  // namespace dpem
