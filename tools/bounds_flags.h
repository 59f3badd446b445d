// The private domain of `dpem bounds` and of `dpem fit ... --data-norm auto`
// (docs/bounds.md): its JSON form, reading it back for --bounds, and the
// warning when most records fall outside it.
#ifndef DPEM_TOOLS_BOUNDS_FLAGS_H_
#define DPEM_TOOLS_BOUNDS_FLAGS_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dpem/data/domain.h"
#include "dpem/data/private_bounds.h"
#include "dpem/status.h"

namespace dpem::cli {

// {"data_center": [...], "data_norm": R, "outside_count_noisy",
//  "outside_fraction_noisy", "quantile", "privacy": {epsilon, ledger, ...}}.
nlohmann::json BoundsToJson(const PrivateBounds& bounds, const PrivateBoundsOptions& options);

// The domain of a file written by BoundsToJson (`dpem bounds --output`):
// a released, public domain. InvalidArgument naming `path` otherwise.
StatusOr<DataDomain> ReadBoundsFile(const std::string& path);

// One line on stderr ("dpem <command>: warning: ...") when the released
// outside fraction exceeds kOutsideFractionWarning.
void WarnIfMostOutside(const PrivateBounds& bounds, std::string_view command);

// WarnIfMostOutside, and one line per void reason.
void WarnAboutBounds(const PrivateBounds& bounds, std::string_view command);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_BOUNDS_FLAGS_H_
