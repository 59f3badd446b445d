// dpem fit kmeans, and the score / predict handlers of k-means model files.
// (Placeholder: being implemented.)
#include "commands.h"
#include "model_commands.h"

namespace dpem::cli {

Command AddFitKmeansCommand(CLI::App& fit) {
  CLI::App* app = fit.add_subcommand("kmeans", "Fit k-means (not yet available).");
  return {app, [] { return FailedPreconditionError("dpem fit kmeans is not implemented yet"); }};
}

Status ScoreKmeansModel(const ModelCommandFlags&) {
  return FailedPreconditionError("k-means models are not supported yet");
}
Status PredictKmeansModel(const ModelCommandFlags&) {
  return FailedPreconditionError("k-means models are not supported yet");
}

}  // namespace dpem::cli
