// The subcommands of the dpem tool. Each Add*Command registers one subcommand
// on its parent app and returns its action; dpem_main.cc runs the one parsed.
#ifndef DPEM_TOOLS_COMMANDS_H_
#define DPEM_TOOLS_COMMANDS_H_

#include <vector>

#include "cli_common.h"

namespace dpem::cli {

// dpem account: (epsilon, delta) of J compositions of one mechanism.
Command AddAccountCommand(CLI::App& root);
// dpem calibrate: per-release noise for a target (epsilon, delta) of a fit.
Command AddCalibrateCommand(CLI::App& root);
// dpem sample-noise: draws from dpem's noise samplers (for inspection).
Command AddSampleNoiseCommand(CLI::App& root);
// dpem bounds: a private domain of the data (bounds_command.cc).
Command AddBoundsCommand(CLI::App& root);
// dpem budget init / show: the privacy-budget ledger (budget_command.cc).
Command AddBudgetCommand(CLI::App& root);

// dpem fit: the parent of one subcommand per model; returns it.
CLI::App* AddFitParent(CLI::App& root);
// dpem fit gmm: a (private) Gaussian mixture fit (fit_gmm_command.cc).
Command AddFitGmmCommand(CLI::App& fit);
// dpem fit fa: a (private) factor analysis fit (fit_fa_command.cc).
Command AddFitFaCommand(CLI::App& fit);
// dpem fit kmeans: (private) k-means and the DPLloyd baselines
// (fit_kmeans_command.cc).
Command AddFitKmeansCommand(CLI::App& fit);
// dpem fit gradient-em: DP gradient EM of wang-dp-gradient-em
// (gradient_em_command.cc).
Command AddFitGradientEmCommand(CLI::App& fit);
// dpem generate: synthetic data of the gradient-EM models
// (gradient_em_command.cc).
Command AddGenerateCommand(CLI::App& root);

// dpem score / predict / sample / transform: use a fitted model file of any
// format (model_commands.cc dispatches on the file's "format").
// Returns the four commands in that order.
std::vector<Command> AddModelCommands(CLI::App& root);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_COMMANDS_H_
