// dpem score / predict / sample: use a fitted model file. These read only the
// model (already private) and, for score and predict, data supplied by the
// user; they add no privacy cost.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/gmm_model_io.h"
#include "internal/file_util.h"

namespace dpem::cli {
namespace {

struct ModelDataFlags {
  std::string model;
  std::string input;
  std::string output;
  bool json = false;
  bool proba = false;
};

struct SampleFlags {
  std::string model;
  std::string output;
  long long count = 0;
  std::optional<std::string> seed;
};

// The model and data, with their dimensions checked against each other.
struct ModelAndData {
  GmmFit fit;
  DataMatrix x;
};

StatusOr<ModelAndData> Load(const ModelDataFlags& f) {
  ModelAndData md;
  DPEM_ASSIGN_OR_RETURN(md.fit, ReadGmmModel(f.model));
  DPEM_ASSIGN_OR_RETURN(md.x, ReadMatrix(f.input));
  if (md.x.cols() != md.fit.parameters.dimension()) {
    return InvalidArgumentError(f.input + ": the data has " + std::to_string(md.x.cols()) +
                                " columns but the model " + f.model + " has dimension " +
                                std::to_string(md.fit.parameters.dimension()));
  }
  return md;
}

Status RunScore(const ModelDataFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const ModelAndData md, Load(f));
  DPEM_ASSIGN_OR_RETURN(const double ll, MeanLogLikelihood(md.fit.parameters, md.x));
  if (f.json) {
    PrintJson({{"mean_log_likelihood", ll}, {"n", md.x.rows()}});
  } else {
    std::cout << "mean log-likelihood per record: " << FormatNumber(ll) << " (" << md.x.rows()
              << " records, original units)\n";
  }
  return OkStatus();
}

Status RunPredict(const ModelDataFlags& f) {
  if (!f.output.empty()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const ModelAndData md, Load(f));
  DataMatrix out;
  if (f.proba) {
    DPEM_ASSIGN_OR_RETURN(out, PredictProba(md.fit.parameters, md.x));
  } else {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXi labels, Predict(md.fit.parameters, md.x));
    out = labels.cast<double>();
  }
  if (!f.output.empty()) return WriteMatrix(f.output, out);
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      std::cout << (j ? "," : "") << FormatNumber(out(i, j));
    }
    std::cout << "\n";
  }
  return OkStatus();
}

Status RunSample(const SampleFlags& f) {
  DPEM_RETURN_IF_ERROR(RequireAtLeast("-n", f.count, 1));
  if (f.count > 100000000) return InvalidArgumentError("-n: must be <= 100000000");
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix synth, Sample(fit.parameters, f.count, gen));
  return WriteMatrix(f.output, synth);
}

void AddModelAndInput(CLI::App* app, ModelDataFlags& f) {
  app->add_option("--model", f.model, "Model file written by dpem fit")->required();
  app->add_option("--input", f.input, "Data: .csv or .npy, same columns as the fit")
      ->required();
}

}  // namespace

Command AddScoreCommand(CLI::App& root) {
  auto f = std::make_shared<ModelDataFlags>();
  CLI::App* app = root.add_subcommand(
      "score", "Print the mean log-likelihood per record of data under a model, in the "
               "data's original units.");
  AddModelAndInput(app, *f);
  app->add_flag("--json", f->json, "Print {\"mean_log_likelihood\": ...}");
  return {app, [f] { return RunScore(*f); }};
}

Command AddPredictCommand(CLI::App& root) {
  auto f = std::make_shared<ModelDataFlags>();
  CLI::App* app = root.add_subcommand(
      "predict", "Print each record's most likely component (0-based), or the component "
                 "probabilities with --proba.");
  AddModelAndInput(app, *f);
  app->add_flag("--proba", f->proba, "Print the K component probabilities of each record");
  app->add_option("--output", f->output, "Write a .csv or .npy file instead of stdout");
  return {app, [f] { return RunPredict(*f); }};
}

Command AddSampleCommand(CLI::App& root) {
  auto f = std::make_shared<SampleFlags>();
  CLI::App* app = root.add_subcommand(
      "sample", "Draw synthetic records from a model (no extra privacy cost: the model is "
                "already private).");
  app->add_option("--model", f->model, "Model file written by dpem fit")->required();
  app->add_option("-n", f->count, "Number of records to draw (>= 1)")->required();
  app->add_option("--output", f->output, "Output .csv or .npy file")->required();
  app->add_option("--seed", f->seed,
                  "Seed a reproducible generator (default: OS-keyed CSPRNG)");
  return {app, [f] { return RunSample(*f); }};
}

}  // namespace dpem::cli
