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
// dpem fit gmm: a (private) Gaussian mixture fit.
Command AddFitCommand(CLI::App& root);
// dpem score / predict / sample: use a fitted model file.
Command AddScoreCommand(CLI::App& root);
Command AddPredictCommand(CLI::App& root);
Command AddSampleCommand(CLI::App& root);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_COMMANDS_H_
