// dpem score / predict / sample / transform: use a fitted model file. These
// read only the model (already private) and, for score, predict and
// transform, data supplied by the user; they add no privacy cost. Each
// command reads the model file's "format" and dispatches to that format's
// handler (Gaussian mixtures here; the others beside their fit commands).
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/gmm/gmm_model_io.h"
#include "internal/file_util.h"
#include "model_commands.h"
#include "shard_input.h"

namespace dpem::cli {
namespace {

using Handler = std::function<Status(const ModelCommandFlags&)>;

Status RunScore(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  return ScoreData(f, fit.parameters.dimension(), "mean_log_likelihood",
                   "mean log-likelihood per record",
                   [&](const DataMatrix& x) { return MeanLogLikelihood(fit.parameters, x); });
}

Status RunPredict(const ModelCommandFlags& f) {
  if (!f.output.empty() && IsCliRank0()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix x, ReadDataForModel(f, fit.parameters.dimension()));
  DataMatrix out;
  if (f.proba) {
    DPEM_ASSIGN_OR_RETURN(out, PredictProba(fit.parameters, x));
  } else {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXi labels, Predict(fit.parameters, x));
    out = labels.cast<double>();
  }
  DPEM_ASSIGN_OR_RETURN(const std::optional<DataMatrix> all, GatherRowsToRank0(out));
  if (!all) return OkStatus();  // dpem-mpi: rank 0 writes every rank's rows.
  out = *all;
  if (!f.output.empty()) return WriteMatrix(f.output, out);
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    for (Eigen::Index j = 0; j < out.cols(); ++j) {
      std::cout << (j ? "," : "") << FormatNumber(out(i, j));
    }
    std::cout << "\n";
  }
  return OkStatus();
}

Status RunSample(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix synth, Sample(fit.parameters, f.count, gen));
  return WriteMatrix(f.output, synth);
}

// The handlers of one model format; an empty one means "does not apply".
struct FormatHandlers {
  const char* format;
  const char* description;
  Handler score, predict, sample, transform;
};

const std::vector<FormatHandlers>& AllFormats() {
  static const std::vector<FormatHandlers> formats = {
      {kGmmModelFormat, "Gaussian mixture", RunScore, RunPredict, RunSample, nullptr},
      {"dpem-fa", "factor analysis", ScoreFaModel, nullptr, SampleFaModel, TransformFaModel},
      {"dpem-kmeans", "k-means", ScoreKmeansModel, PredictKmeansModel, nullptr, nullptr},
  };
  return formats;
}

// The "format" field of a model file; InvalidArgument naming the file if it
// is not a JSON object with a string "format".
StatusOr<std::string> ReadModelFormat(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  const nlohmann::json model = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!model.is_object() || !model.contains("format") || !model["format"].is_string()) {
    return InvalidArgumentError(path + ": not a dpem model file (no \"format\" field)");
  }
  return model["format"].get<std::string>();
}

// Runs the handler `member` of the model file's format, or says why not.
Status Dispatch(const ModelCommandFlags& f, const char* command,
                Handler FormatHandlers::*member) {
  DPEM_ASSIGN_OR_RETURN(const std::string format, ReadModelFormat(f.model));
  for (const FormatHandlers& h : AllFormats()) {
    if (format != h.format) continue;
    if (!(h.*member)) {
      return InvalidArgumentError(f.model + ": '" + command + "' does not apply to " +
                                  h.description + " models");
    }
    return (h.*member)(f);
  }
  return InvalidArgumentError(f.model + ": unknown model format '" + format + "'");
}

// Checks shared by every format's sample handler, before the model is used.
Status CheckSampleFlags(const ModelCommandFlags& f) {
  DPEM_RETURN_IF_ERROR(RequireAtLeast("-n", f.count, 1));
  if (f.count > 100000000) return InvalidArgumentError("-n: must be <= 100000000");
  return internal::CheckCanCreate(f.output);
}

void AddModelAndInput(CLI::App* app, ModelCommandFlags& f) {
  app->add_option("--model", f.model, "Model file written by dpem fit")->required();
  app->add_option("--input", f.input, "Data: .csv or .npy, same columns as the fit")
      ->required();
}

}  // namespace

StatusOr<DataMatrix> ReadDataForModel(const ModelCommandFlags& f, Eigen::Index dimension) {
  DPEM_ASSIGN_OR_RETURN(DataMatrix x, ReadRankRows(f.input));
  Status shape = OkStatus();
  if (x.cols() != dimension) {
    shape = InvalidArgumentError(f.input + ": the data has " + std::to_string(x.cols()) +
                                 " columns but the model " + f.model + " has dimension " +
                                 std::to_string(dimension));
  }
  DPEM_RETURN_IF_ERROR(AgreeAcrossRanks(shape));
  return x;
}

Status ScoreData(const ModelCommandFlags& f, Eigen::Index dimension, const char* key,
                 const char* text, const std::function<StatusOr<double>(const DataMatrix&)>& score) {
  DPEM_ASSIGN_OR_RETURN(const DataMatrix x, ReadDataForModel(f, dimension));
  // Under dpem-mpi, a rank whose shard is empty adds nothing to the mean.
  const bool empty_shard = x.rows() == 0 && !IsSingleProcess(CliCollective());
  const StatusOr<double> local = empty_shard ? StatusOr<double>(0.0) : score(x);
  DPEM_RETURN_IF_ERROR(AgreeAcrossRanks(local.status()));
  DPEM_ASSIGN_OR_RETURN(const auto mean, MeanOverRanks(*local, x.rows()));
  const auto [value, n] = mean;
  if (f.json) {
    PrintJson({{key, value}, {"n", n}});
  } else {
    std::cout << text << ": " << FormatNumber(value) << " (" << n
              << " records, original units)\n";
  }
  return OkStatus();
}

Command AddScoreCommand(CLI::App& root) {
  auto f = std::make_shared<ModelCommandFlags>();
  CLI::App* app = root.add_subcommand(
      "score", "Print the mean log-likelihood per record of data under a model (for a "
               "k-means model: the NICV), in the data's original units.");
  AddModelAndInput(app, *f);
  app->add_flag("--json", f->json,
                "Print {\"mean_log_likelihood\": ..., \"n\": ...}; k-means models print "
                "{\"nicv\": ..., \"n\": ...}");
  return {app, [f] { return Dispatch(*f, "score", &FormatHandlers::score); }};
}

Command AddPredictCommand(CLI::App& root) {
  auto f = std::make_shared<ModelCommandFlags>();
  CLI::App* app = root.add_subcommand(
      "predict", "Print each record's most likely component (0-based), or the component "
                 "probabilities with --proba.");
  AddModelAndInput(app, *f);
  app->add_flag("--proba", f->proba, "Print the K component probabilities of each record");
  app->add_option("--output", f->output, "Write a .csv or .npy file instead of stdout");
  return {app, [f] { return Dispatch(*f, "predict", &FormatHandlers::predict); }};
}

Command AddSampleCommand(CLI::App& root) {
  auto f = std::make_shared<ModelCommandFlags>();
  CLI::App* app = root.add_subcommand(
      "sample", "Draw synthetic records from a model (no extra privacy cost: the model is "
                "already private).");
  app->add_option("--model", f->model, "Model file written by dpem fit")->required();
  app->add_option("-n", f->count, "Number of records to draw (>= 1)")->required();
  app->add_option("--output", f->output, "Output .csv or .npy file")->required();
  app->add_option("--seed", f->seed,
                  "Seed a reproducible generator (default: OS-keyed CSPRNG)");
  return {app, [f] {
            DPEM_RETURN_IF_ERROR(CheckSampleFlags(*f));
            return Dispatch(*f, "sample", &FormatHandlers::sample);
          }};
}

Command AddTransformCommand(CLI::App& root) {
  auto f = std::make_shared<ModelCommandFlags>();
  CLI::App* app = root.add_subcommand(
      "transform", "Write each record's latent representation under a model (factor "
                   "analysis: the posterior means of the factors).");
  AddModelAndInput(app, *f);
  app->add_option("--output", f->output, "Output .csv or .npy file")->required();
  return {app, [f] {
            if (!f->output.empty()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f->output));
            return Dispatch(*f, "transform", &FormatHandlers::transform);
          }};
}

}  // namespace dpem::cli
