// dpem fit gradient-em and dpem generate (wang-dp-gradient-em).
// (Placeholder: being implemented.)
#include "commands.h"

namespace dpem::cli {

Command AddFitGradientEmCommand(CLI::App& fit) {
  CLI::App* app =
      fit.add_subcommand("gradient-em", "DP gradient EM (not yet available).");
  return {app, [] { return FailedPreconditionError("dpem fit gradient-em is not implemented yet"); }};
}

Command AddGenerateCommand(CLI::App& root) {
  CLI::App* app = root.add_subcommand("generate", "Generate model data (not yet available).");
  return {app, [] { return FailedPreconditionError("dpem generate is not implemented yet"); }};
}

}  // namespace dpem::cli
