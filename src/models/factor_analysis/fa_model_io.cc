// Factor analysis model files: see dpem/models/factor_analysis/fa_model_io.h.
#include "dpem/models/factor_analysis/fa_model_io.h"

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "internal/file_util.h"
#include "accounting/ledger_json.h"

namespace dpem {
namespace {

using nlohmann::json;

std::vector<double> AsVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

json ParametersToJson(const FaParameters& p) {
  json loadings = json::array();
  for (Eigen::Index i = 0; i < p.loadings.rows(); ++i) {
    loadings.push_back(AsVector(p.loadings.row(i).transpose()));
  }
  return {{"mean", AsVector(p.mean)},
          {"loadings", loadings},
          {"noise_variances", AsVector(p.noise_variances)}};
}

json PrivacyToJson(const FaGuarantee& g, const std::optional<std::uint64_t>& seed) {
  json out = {{"private", g.is_private},
              {"neighbour_relation", kNeighbourRelation},
              {"guarantee_void", g.guarantee_void},
              {"void_reasons", g.void_reasons},
              {"seeded", seed.has_value()}};
  if (seed) {
    out["seed"] = *seed;
    out["seed_warning"] = kSeededGeneratorWarning;
  }
  if (!g.is_private) return out;
  out["epsilon"] = g.epsilon;
  out["delta"] = g.delta;
  out["target_epsilon"] = g.target_epsilon;
  out["target_delta"] = g.target_delta;
  out["accountant"] = "rdp";  // The discrete Gaussian's Renyi curve.
  out["mechanism"] = "analyze-gauss";
  out["noise_multiplier"] = g.noise_multiplier;
  out["releases"] = internal::LedgerToJson(g.ledger);
  return out;
}

json DomainToJson(const DataDomain& d) {
  return {{"data_norm", d.data_norm},
          {"clipping", "records clipped to the L2 ball of radius data_norm around center, "
                       "then mapped to the unit ball"},
          {"from_data", d.from_data},
          {"center", AsVector(d.center)}};
}

Eigen::VectorXd VectorFrom(const json& v) {
  const std::vector<double> values = v.get<std::vector<double>>();
  return Eigen::Map<const Eigen::VectorXd>(values.data(),
                                           static_cast<Eigen::Index>(values.size()));
}

// The loadings: d rows of L numbers each (L taken from the first row).
StatusOr<Eigen::MatrixXd> LoadingsFrom(const json& rows) {
  if (!rows.is_array() || rows.empty() || !rows[0].is_array()) {
    return InvalidArgumentError("'loadings' must be a non-empty array of rows");
  }
  const std::size_t l = rows[0].size();
  Eigen::MatrixXd w(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(l));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].is_array() || rows[i].size() != l) {
      return InvalidArgumentError("'loadings' rows must all have the same length");
    }
    w.row(static_cast<Eigen::Index>(i)) = VectorFrom(rows[i]).transpose();
  }
  return w;
}

Status ParseLedger(const json& releases, PrivacyLedger& ledger) {
  DPEM_ASSIGN_OR_RETURN(ledger, internal::LedgerFromJson(releases));
  return OkStatus();
}

Status ParsePrivacy(const json& j, FaFit& fit) {
  FaGuarantee& g = fit.guarantee;
  g.is_private = j.at("private").get<bool>();
  g.guarantee_void = j.at("guarantee_void").get<bool>();
  g.void_reasons = j.at("void_reasons").get<std::vector<std::string>>();
  if (j.at("seeded").get<bool>()) fit.seed = j.at("seed").get<std::uint64_t>();
  if (!g.is_private) return OkStatus();
  g.epsilon = j.at("epsilon").get<double>();
  g.delta = j.at("delta").get<double>();
  g.target_epsilon = j.at("target_epsilon").get<double>();
  g.target_delta = j.at("target_delta").get<double>();
  g.noise_multiplier = j.at("noise_multiplier").get<double>();
  return ParseLedger(j.at("releases"), g.ledger);
}

// Parses a parsed document; nlohmann's type and key errors are caught by the
// caller and turned into InvalidArgument.
StatusOr<FaFit> FitFromJson(const json& j) {
  if (j.at("format").get<std::string>() != kFaModelFormat) {
    return InvalidArgumentError(std::string("not a factor analysis model (format must be '") +
                                kFaModelFormat + "')");
  }
  if (j.at("version").get<int>() != kFaModelVersion) {
    return InvalidArgumentError("unsupported model version (expected " +
                                std::to_string(kFaModelVersion) + ")");
  }
  FaFit fit;
  const json& p = j.at("parameters");
  fit.parameters.mean = VectorFrom(p.at("mean"));
  DPEM_ASSIGN_OR_RETURN(fit.parameters.loadings, LoadingsFrom(p.at("loadings")));
  fit.parameters.noise_variances = VectorFrom(p.at("noise_variances"));
  DPEM_RETURN_IF_ERROR(ValidateFaParameters(fit.parameters));
  fit.n = j.at("n").get<Eigen::Index>();
  fit.iterations = j.at("iterations").get<int>();
  const json& t = j.at("data_transform");
  fit.domain.data_norm = t.at("data_norm").get<double>();
  fit.domain.from_data = t.at("from_data").get<bool>();
  fit.domain.center = VectorFrom(t.at("center"));
  if (fit.n < 1 || fit.iterations < 1) {
    return InvalidArgumentError("fields 'n' and 'iterations' must be >= 1");
  }
  DPEM_RETURN_IF_ERROR(ValidateDomain(fit.domain));
  if (fit.domain.center.size() != fit.parameters.dimension()) {
    return InvalidArgumentError("the domain centre must have one entry per dimension");
  }
  DPEM_RETURN_IF_ERROR(ParsePrivacy(j.at("privacy"), fit));
  return fit;
}

}  // namespace

std::string FaModelToJson(const FaFit& fit) {
  const FaParameters& p = fit.parameters;
  const json model = {{"format", kFaModelFormat},
                      {"version", kFaModelVersion},
                      {"model", "factor_analysis"},
                      {"dimension", p.dimension()},
                      {"factors", p.factors()},
                      {"n", fit.n},
                      {"iterations", fit.iterations},
                      {"parameters", ParametersToJson(p)},
                      {"data_transform", DomainToJson(fit.domain)},
                      {"privacy", PrivacyToJson(fit.guarantee, fit.seed)}};
  return model.dump(2) + "\n";
}

StatusOr<FaFit> FaModelFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("the model file is not valid JSON");
  try {
    return FitFromJson(j);
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("malformed factor analysis model: ") + e.what());
  }
}

Status WriteFaModel(const std::string& path, const FaFit& fit) {
  return internal::WriteFileAtomically(path, FaModelToJson(fit));
}

StatusOr<FaFit> ReadFaModel(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  StatusOr<FaFit> fit = FaModelFromJson(text);
  if (!fit.ok()) return InvalidArgumentError(path + ": " + fit.status().message());
  return fit;
}

}  // namespace dpem
