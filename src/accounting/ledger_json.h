// The JSON form of a privacy ledger, shared by every model file and CLI
// output that lists releases: one object per release with its label,
// mechanism, sensitivity (and its norm), noise scale and noise sampling.
// Private to the library and the CLI.
#ifndef DPEM_ACCOUNTING_LEDGER_JSON_H_
#define DPEM_ACCOUNTING_LEDGER_JSON_H_

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dpem/accounting/ledger.h"
#include "dpem/status.h"

namespace dpem::internal {

// {"label", "mechanism", "sensitivity", "sensitivity_norm", "noise_scale",
//  "noise"} for one release; "noise" is "discrete" or "continuous".
nlohmann::json ReleaseToJson(const Release& release);

// The releases of `ledger`, in order, as a JSON array of ReleaseToJson.
nlohmann::json LedgerToJson(const PrivacyLedger& ledger);

// Parses an array written by LedgerToJson. A release without "noise" (files
// written before the field existed) is read as discrete, the conservative
// choice for every accountant (ledger.h). InvalidArgument on a missing or
// mistyped field or an invalid release.
StatusOr<PrivacyLedger> LedgerFromJson(const nlohmann::json& releases);

// How many releases of `ledger` have a label starting with `prefix` (e.g.
// the bounds' releases of a fit with a released domain, kBoundsLabelPrefix).
std::size_t CountReleasesLabelled(const PrivacyLedger& ledger, std::string_view prefix);

}  // namespace dpem::internal

#endif  // DPEM_ACCOUNTING_LEDGER_JSON_H_
