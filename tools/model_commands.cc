// dpem score / predict / sample / transform: use a fitted model file. These
// read only the model (already private) and, for score, predict and
// transform, data supplied by the user; they add no privacy cost. Each
// command reads the model file's "format" and dispatches to that format's
// handler (Gaussian mixtures here; the others beside their fit commands).
#include <cmath>
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
#include "internal/json_fields.h"
#include "model_commands.h"
#include "shard_input.h"

namespace dpem::cli {
namespace {

using Handler = std::function<Status(const ModelCommandFlags&)>;

Status RunScore(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  return ScoreLogLikelihood(f, fit.parameters.dimension(), [&](const DataMatrix& x) {
    return MeanLogLikelihood(fit.parameters, x);
  });
}

Status RunPredict(const ModelCommandFlags& f) {
  if (!f.output.empty() && IsCliRank0()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  const auto per_record = [&](const DataMatrix& x) -> StatusOr<DataMatrix> {
    if (f.proba) return PredictProba(fit.parameters, x);
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXi labels, Predict(fit.parameters, x));
    return DataMatrix(labels.cast<double>());
  };
  return WritePerRecord(f, fit.parameters.dimension(), per_record, [&](const DataMatrix& out) {
    if (!f.output.empty()) return WriteMatrix(f.output, out);
    for (Eigen::Index i = 0; i < out.rows(); ++i) {
      for (Eigen::Index j = 0; j < out.cols(); ++j) {
        std::cout << (j ? "," : "") << FormatNumber(out(i, j));
      }
      std::cout << "\n";
    }
    return OkStatus();
  });
}

Status RunSample(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const GmmFit fit, ReadGmmModel(f.model));
  return WriteSample(f, [&](Eigen::Index n, Generator& gen) {
    return Sample(fit.parameters, n, gen);
  });
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
      {"dpem-gradient-em", "gradient EM", ScoreGradientEmModel, nullptr, nullptr, nullptr},
  };
  return formats;
}

// The "format" field of a model file; InvalidArgument naming the file if it
// is not JSON (with where and why, ParseJson) or not an object with a string
// "format".
StatusOr<std::string> ReadModelFormat(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  StatusOr<nlohmann::json> parsed = internal::ParseJson(text);
  if (!parsed.ok()) return InvalidArgumentError(path + ": " + parsed.status().message());
  const nlohmann::json& model = *parsed;
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
  DPEM_RETURN_IF_ERROR(RequireAtMost("-n", f.count, 100000000));
  return internal::CheckCanCreate(f.output);
}

void AddModelAndInput(CLI::App* app, ModelCommandFlags& f) {
  app->add_option("--model", f.model, "Model file written by dpem fit")->required();
  app->add_option("--input", f.input, "Data: .csv or .npy, same columns as the fit")
      ->required();
}

// The options of score, predict, sample and transform.
void AddScoreOptions(CLI::App* app, ModelCommandFlags& f) {
  AddModelAndInput(app, f);
  app->add_flag("--json", f.json,
                "Print {\"mean_log_likelihood\": ..., \"n\": ...}; k-means models print "
                "{\"nicv\": ..., \"n\": ...}");
}

void AddPredictOptions(CLI::App* app, ModelCommandFlags& f) {
  AddModelAndInput(app, f);
  app->add_flag("--proba", f.proba, "Print the K component probabilities of each record");
  app->add_option("--output", f.output, "Write a .csv or .npy file instead of stdout");
}

void AddSampleOptions(CLI::App* app, ModelCommandFlags& f) {
  app->add_option("--model", f.model, "Model file written by dpem fit")->required();
  app->add_option("-n", f.count, "Number of records to draw (>= 1)")->required();
  app->add_option("--output", f.output, "Output .csv or .npy file")->required();
  app->add_option("--seed", f.seed,
                  "Seed a reproducible generator (default: OS-keyed CSPRNG)");
}

void AddTransformOptions(CLI::App* app, ModelCommandFlags& f) {
  AddModelAndInput(app, f);
  app->add_option("--output", f.output, "Output .csv or .npy file")->required();
}

// The transform command's check of --output before the model is read.
Status CheckTransformFlags(const ModelCommandFlags& f) {
  return f.output.empty() ? OkStatus() : internal::CheckCanCreate(f.output);
}

// One model-using subcommand: its name and description, its options, the
// check of its flags before the model file is read (none: null), and its
// handler in each format's FormatHandlers.
struct ModelCommand {
  const char* name;
  const char* description;
  void (*add_options)(CLI::App*, ModelCommandFlags&);
  Status (*check_flags)(const ModelCommandFlags&);
  Handler FormatHandlers::*handler;
};

// score, predict, sample and transform, in the order of dpem --help.
const ModelCommand kModelCommands[] = {
    {"score",
     "Print the mean log-likelihood per record of data under a model (for a "
     "k-means model: the NICV; for a gradient EM regression: of y given x), in "
     "the data's original units.",
     AddScoreOptions, nullptr, &FormatHandlers::score},
    {"predict",
     "Print each record's most likely component (0-based), or the component "
     "probabilities with --proba.",
     AddPredictOptions, nullptr, &FormatHandlers::predict},
    {"sample",
     "Draw synthetic records from a model (no extra privacy cost: the model is "
     "already private).",
     AddSampleOptions, CheckSampleFlags, &FormatHandlers::sample},
    {"transform",
     "Write each record's latent representation under a model (factor "
     "analysis: the posterior means of the factors).",
     AddTransformOptions, CheckTransformFlags, &FormatHandlers::transform},
};

}  // namespace

StatusOr<DataMatrix> ReadDataForModel(const ModelCommandFlags& f, Eigen::Index dimension) {
  DPEM_ASSIGN_OR_RETURN(DataMatrix x, ReadRankRows(f.input));
  Status shape = OkStatus();
  if (x.cols() != dimension) {
    shape = InvalidArgumentError(f.input + ": the data has " + std::to_string(x.cols()) +
                                 " columns but the model " + f.model + " reads " +
                                 std::to_string(dimension) + " columns");
  }
  DPEM_RETURN_IF_ERROR(AgreeAcrossRanks(shape));
  return x;
}

Status ScoreLogLikelihood(const ModelCommandFlags& f, Eigen::Index dimension,
                          const std::function<StatusOr<double>(const DataMatrix&)>& score) {
  return ScoreData(f, dimension, "mean_log_likelihood", "mean log-likelihood per record", score);
}

Status WriteSample(
    const ModelCommandFlags& f,
    const std::function<StatusOr<DataMatrix>(Eigen::Index, Generator&)>& sample) {
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix synth, sample(f.count, gen));
  return WriteMatrix(f.output, synth);
}

Status WritePerRecord(const ModelCommandFlags& f, Eigen::Index dimension,
                      const std::function<StatusOr<DataMatrix>(const DataMatrix&)>& per_record,
                      const std::function<Status(const DataMatrix&)>& write) {
  DPEM_ASSIGN_OR_RETURN(const DataMatrix x, ReadDataForModel(f, dimension));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix local, per_record(x));
  DPEM_ASSIGN_OR_RETURN(const std::optional<DataMatrix> all, GatherRowsToRank0(local));
  if (!all) return OkStatus();  // dpem-mpi: rank 0 writes every rank's rows.
  return write(*all);
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
  if (!std::isfinite(value)) {
    // JSON has no infinity or NaN: a score that overflowed is an error, not
    // a null.
    return InvalidArgumentError(f.input + ": the " + text + " is not finite (" +
                                FormatNumber(value) +
                                "): some records lie too far from the model to score");
  }
  if (f.json) {
    PrintJson({{key, value}, {"n", n}});
  } else {
    std::cout << text << ": " << FormatNumber(value) << " (" << n
              << " records, original units)\n";
  }
  return OkStatus();
}

std::vector<Command> AddModelCommands(CLI::App& root) {
  std::vector<Command> commands;
  for (const ModelCommand& c : kModelCommands) {
    const auto run = [&c](const ModelCommandFlags& f) {
      if (c.check_flags) DPEM_RETURN_IF_ERROR(c.check_flags(f));
      return Dispatch(f, c.name, c.handler);
    };
    commands.push_back(
        AddSubcommand<ModelCommandFlags>(root, c.name, c.description, c.add_options, run));
  }
  return commands;
}

}  // namespace dpem::cli
