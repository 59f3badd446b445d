// The public domain's flags, shared by the fit commands (`fit gmm`, `fit
// kmeans`): --data-norm (a number, or "auto" with --bounds-epsilon, which
// releases the domain inside the fit), --data-center, --bounds (a domain
// released by `dpem bounds`) and, where the command offers it,
// --data-norm-from-data (voids the guarantee). docs/bounds.md.
#ifndef DPEM_TOOLS_DOMAIN_FLAGS_H_
#define DPEM_TOOLS_DOMAIN_FLAGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/domain.h"
#include "dpem/data/private_bounds.h"
#include "dpem/data/row_source.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::cli {

struct DomainFlags {
  std::optional<std::string> data_norm_text;
  std::optional<double> data_norm;  // Parsed from data_norm_text unless "auto".
  bool data_norm_auto = false;
  std::optional<double> bounds_epsilon;
  std::string bounds_file;
  std::vector<double> data_center;
  bool data_norm_from_data = false;
};

// Registers the flags on `app`; --data-norm-from-data only if
// `allow_from_data`.
void AddDomainFlags(CLI::App* app, DomainFlags& f, bool allow_from_data);

// Parses --data-norm (a number or "auto"), and reads --bounds into
// data_norm and data_center. InvalidArgument naming the flag otherwise.
Status ParseDomainFlags(DomainFlags& f);

// Sets `domain` from the parsed flags (with --data-norm auto, a placeholder R
// of 1 until the fit releases the domain) and checks them for a fit that is
// private or not at total `epsilon`: a private fit needs --data-norm (or auto,
// or --data-norm-from-data), auto needs a private fit and --bounds-epsilon
// below `epsilon`.
Status DomainFlagsInto(const DomainFlags& f, bool is_private, double epsilon,
                       DataDomain& domain);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_DOMAIN_FLAGS_H_
