// The subcommands of the dpem tool; each registers itself on the root app.
#ifndef DPEM_TOOLS_COMMANDS_H_
#define DPEM_TOOLS_COMMANDS_H_

#include "cli_common.h"

namespace dpem::cli {

// dpem account: (epsilon, delta) of J compositions of one mechanism.
Command AddAccountCommand(CLI::App& root);
// dpem calibrate: per-release noise for a target (epsilon, delta) of a fit.
Command AddCalibrateCommand(CLI::App& root);
// dpem sample-noise: draws from dpem's noise samplers (for inspection).
Command AddSampleNoiseCommand(CLI::App& root);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_COMMANDS_H_
