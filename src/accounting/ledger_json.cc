#include "accounting/ledger_json.h"

#include <string>
#include <utility>

#include "internal/json_fields.h"

namespace dpem::internal {

using json = nlohmann::json;

json ReleaseToJson(const Release& r) {
  return {{"label", r.label},
          {"mechanism", MechanismName(r.mechanism)},
          {"sensitivity", r.sensitivity},
          {"sensitivity_norm", r.SensitivityNorm()},
          {"noise_scale", r.noise_scale},
          {"noise", NoiseSamplingName(r.sampling)}};
}

json LedgerToJson(const PrivacyLedger& ledger) {
  json releases = json::array();
  for (const Release& r : ledger.releases()) releases.push_back(ReleaseToJson(r));
  return releases;
}

namespace {

StatusOr<Release> ReleaseFromJson(const json& r) {
  if (!r.is_object()) return InvalidArgumentError("a release must be an object");
  for (const char* key : {"label", "mechanism"}) {
    if (!r.contains(key) || !r.at(key).is_string()) {
      return InvalidArgumentError(std::string("release field '") + key + "' must be a string");
    }
  }
  Release release;
  DPEM_ASSIGN_OR_RETURN(release.sensitivity,
                        internal::FiniteNumberField(r, "sensitivity", {}, "release"));
  DPEM_ASSIGN_OR_RETURN(release.noise_scale,
                        internal::FiniteNumberField(r, "noise_scale", {}, "release"));
  DPEM_ASSIGN_OR_RETURN(release.mechanism,
                        ParseMechanismKind(r.at("mechanism").get<std::string>()));
  release.label = r.at("label").get<std::string>();
  if (r.contains("noise")) {
    if (!r.at("noise").is_string()) return InvalidArgumentError("'noise' must be a string");
    DPEM_ASSIGN_OR_RETURN(release.sampling, ParseNoiseSampling(r.at("noise").get<std::string>()));
  }
  return release;
}

}  // namespace

StatusOr<PrivacyLedger> LedgerFromJson(const json& releases) {
  if (!releases.is_array()) return InvalidArgumentError("releases must be an array");
  PrivacyLedger ledger;
  for (const json& r : releases) {
    DPEM_ASSIGN_OR_RETURN(Release release, ReleaseFromJson(r));
    DPEM_RETURN_IF_ERROR(ledger.Record(std::move(release)));
  }
  return ledger;
}

std::size_t CountReleasesLabelled(const PrivacyLedger& ledger, std::string_view prefix) {
  std::size_t count = 0;
  for (const Release& r : ledger.releases()) count += r.label.rfind(prefix, 0) == 0 ? 1 : 0;
  return count;
}

}  // namespace dpem::internal
