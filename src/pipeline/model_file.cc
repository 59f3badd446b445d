#include "pipeline/model_file.h"

#include <limits>
#include <utility>

#include "accounting/ledger_json.h"
#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"

namespace dpem::internal {
namespace {

using nlohmann::json;

// The most records a file may state: 2^53, the largest count a double
// (a JSON reader's number) holds exactly.
constexpr std::int64_t kMaxRecords = std::int64_t{1} << 53;

json DomainToJson(const DataDomain& d) {
  return {{"data_norm", d.data_norm},
          {"clipping", "records clipped to the L2 ball of radius data_norm around center, "
                       "then mapped to the unit ball"},
          {"from_data", d.from_data},
          {"center", AsStdVector(d.center)}};
}

json PrivacyToJson(const ModelFileSchema& schema, const PrivacyGuarantee& g,
                   const std::optional<std::uint64_t>& seed) {
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
  out["accountant"] = AccountantName(schema.fixed_accountant.value_or(g.accountant));
  out["releases"] = LedgerToJson(g.ledger);
  return out;
}

Status CheckFormatAndVersion(const json& model, const ModelFileSchema& schema) {
  DPEM_ASSIGN_OR_RETURN(const std::string format, StringField(model, "format"));
  if (format != schema.format) {
    return InvalidArgumentError(std::string("not a dpem ") + schema.description +
                                " model (format '" + format + "')");
  }
  DPEM_ASSIGN_OR_RETURN(const double version, NumberField(model, "version"));
  if (version != schema.version) {
    return InvalidArgumentError("unsupported model version " + std::to_string(version));
  }
  return OkStatus();
}

StatusOr<DataDomain> DomainFrom(const json& model) {
  DPEM_ASSIGN_OR_RETURN(const json* t, Field(model, "data_transform"));
  DataDomain domain;
  DPEM_ASSIGN_OR_RETURN(domain.data_norm,
                        FiniteNumberField(*t, "data_norm", kPositiveNumber, "data_transform"));
  DPEM_ASSIGN_OR_RETURN(domain.from_data, BoolField(*t, "from_data"));
  DPEM_ASSIGN_OR_RETURN(const json* center, Field(*t, "center"));
  DPEM_ASSIGN_OR_RETURN(domain.center, VectorFrom(*center, "center"));
  DPEM_RETURN_IF_ERROR(ValidateModelDomain(domain));
  return domain;
}

// What only a private model's file states: the certified and target
// (epsilon, delta), the accountant and every release.
Status PrivateFieldsFrom(const json& privacy, const ModelFileSchema& schema,
                         PrivacyGuarantee& g) {
  constexpr NumberRange kDelta{0.0, 1.0, false, true};  // [0, 1)
  DPEM_ASSIGN_OR_RETURN(g.epsilon,
                        FiniteNumberField(privacy, "epsilon", kPositiveNumber, "privacy"));
  DPEM_ASSIGN_OR_RETURN(g.delta, FiniteNumberField(privacy, "delta", kDelta, "privacy"));
  DPEM_ASSIGN_OR_RETURN(g.target_epsilon,
                        FiniteNumberField(privacy, "target_epsilon", kPositiveNumber, "privacy"));
  DPEM_ASSIGN_OR_RETURN(g.target_delta,
                        FiniteNumberField(privacy, "target_delta", kDelta, "privacy"));
  if (!schema.fixed_accountant) {
    DPEM_ASSIGN_OR_RETURN(const std::string accountant, StringField(privacy, "accountant"));
    DPEM_ASSIGN_OR_RETURN(g.accountant, ParseAccountantKind(accountant));
  }
  DPEM_ASSIGN_OR_RETURN(const json* releases, Field(privacy, "releases"));
  DPEM_ASSIGN_OR_RETURN(g.ledger, LedgerFromJson(*releases));
  return OkStatus();
}

StatusOr<PrivacyGuarantee> GuaranteeFrom(const json& privacy, const ModelFileSchema& schema) {
  PrivacyGuarantee g;
  DPEM_ASSIGN_OR_RETURN(g.is_private, BoolField(privacy, "private"));
  DPEM_ASSIGN_OR_RETURN(g.guarantee_void, BoolField(privacy, "guarantee_void"));
  DPEM_ASSIGN_OR_RETURN(const json* reasons, Field(privacy, "void_reasons"));
  DPEM_ASSIGN_OR_RETURN(g.void_reasons, StringsFrom(*reasons, "void_reasons"));
  if (schema.fixed_accountant) g.accountant = *schema.fixed_accountant;
  if (g.is_private) DPEM_RETURN_IF_ERROR(PrivateFieldsFrom(privacy, schema, g));
  return g;
}

// The seed, if the file states one: a JSON integer >= 0. "seeded", where
// present (a file written by hand may leave it out), must agree.
StatusOr<std::optional<std::uint64_t>> SeedFrom(const json& privacy) {
  std::optional<std::uint64_t> seed;
  auto s = privacy.find("seed");
  if (s != privacy.end()) {
    seed = AsUnsigned(*s);
    if (!seed) return InvalidArgumentError("seed must be a whole number");
  }
  if (privacy.contains("seeded")) {
    DPEM_ASSIGN_OR_RETURN(const bool seeded, BoolField(privacy, "seeded"));
    if (seeded != seed.has_value()) {
      return InvalidArgumentError("privacy.seeded must be true exactly when privacy.seed is given");
    }
  }
  return seed;
}

}  // namespace

json ModelFileToJson(const ModelFileSchema& schema, Eigen::Index n, int iterations,
                     const DataDomain& domain, const PrivacyGuarantee& g,
                     const std::optional<std::uint64_t>& seed) {
  json out = {{"format", schema.format},
              {"version", schema.version},
              {"model", schema.model},
              {"n", n},
              {"iterations", iterations},
              {"privacy", PrivacyToJson(schema, g, seed)}};
  if (schema.has_domain) out["data_transform"] = DomainToJson(domain);
  return out;
}

StatusOr<ModelFileFields> ModelFileFromJson(const json& model, const ModelFileSchema& schema) {
  DPEM_RETURN_IF_ERROR(CheckFormatAndVersion(model, schema));
  ModelFileFields f;
  DPEM_ASSIGN_OR_RETURN(f.n, CountField(model, "n", kMaxRecords));
  DPEM_ASSIGN_OR_RETURN(const std::int64_t iterations,
                        CountField(model, "iterations", schema.max_iterations));
  f.iterations = static_cast<int>(iterations);
  if (schema.has_domain) {
    DPEM_ASSIGN_OR_RETURN(f.domain, DomainFrom(model));
  }
  DPEM_ASSIGN_OR_RETURN(const json* privacy, Field(model, "privacy"));
  DPEM_ASSIGN_OR_RETURN(f.guarantee, GuaranteeFrom(*privacy, schema));
  DPEM_ASSIGN_OR_RETURN(f.seed, SeedFrom(*privacy));
  return f;
}

Status CheckCenterLength(const DataDomain& domain, Eigen::Index dimension) {
  if (domain.center.size() == dimension) return OkStatus();
  return InvalidArgumentError("center must have " + std::to_string(dimension) +
                              " entries (one per dimension), not " +
                              std::to_string(domain.center.size()));
}

std::string ModelFileText(const json& model) { return model.dump(2) + "\n"; }

}  // namespace dpem::internal
