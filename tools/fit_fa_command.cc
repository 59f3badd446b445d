// dpem fit fa, and the score / sample / transform handlers of factor-analysis
// model files. (Placeholder: being implemented.)
#include "commands.h"
#include "model_commands.h"

namespace dpem::cli {

Command AddFitFaCommand(CLI::App& fit) {
  CLI::App* app = fit.add_subcommand("fa", "Fit a factor analysis model (not yet available).");
  return {app, [] { return FailedPreconditionError("dpem fit fa is not implemented yet"); }};
}

Status ScoreFaModel(const ModelCommandFlags&) {
  return FailedPreconditionError("factor analysis models are not supported yet");
}
Status SampleFaModel(const ModelCommandFlags&) {
  return FailedPreconditionError("factor analysis models are not supported yet");
}
Status TransformFaModel(const ModelCommandFlags&) {
  return FailedPreconditionError("factor analysis models are not supported yet");
}

}  // namespace dpem::cli
