// The flags of the model-using commands (score, predict, sample, transform)
// and the per-format handlers they dispatch to. A handler is defined beside
// the fit command of its model; model_commands.cc reads the model file's
// "format" field and calls the handler of that format, or reports that the
// command does not apply to that kind of model.
#ifndef DPEM_TOOLS_MODEL_COMMANDS_H_
#define DPEM_TOOLS_MODEL_COMMANDS_H_

#include <functional>
#include <optional>
#include <string>

#include "dpem/data/matrix.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::cli {

// Every flag of the model-using commands; each command sets the ones it has.
struct ModelCommandFlags {
  std::string model;                // --model: the model file.
  std::string input;                // --input: data (score, predict, transform).
  std::string output;               // --output: .csv/.npy (sample, transform,
                                    // optionally predict).
  bool json = false;                // --json (score).
  bool proba = false;               // --proba (predict).
  long long count = 0;              // -n (sample).
  std::optional<std::string> seed;  // --seed (sample).
};

// The data of --input, checked against a model read from --model whose
// records have `dimension` columns (its dimension; for a gradient EM
// regression, the columns of its fit's layout): InvalidArgument naming both
// files if the columns differ.
StatusOr<DataMatrix> ReadDataForModel(const ModelCommandFlags& flags, Eigen::Index dimension);

// The score command's body for a model of `dimension`: reads --input
// (ReadDataForModel), computes `score` of it and prints {"<key>": value, "n":
// N} with --json, else "<text>: <value> (N records, original units)".
Status ScoreData(const ModelCommandFlags& flags, Eigen::Index dimension, const char* key,
                 const char* text, const std::function<StatusOr<double>(const DataMatrix&)>& score);

// ScoreData for a model with a density: prints its mean log-likelihood per
// record, `score` of the data ("mean_log_likelihood" with --json).
Status ScoreLogLikelihood(const ModelCommandFlags& flags, Eigen::Index dimension,
                          const std::function<StatusOr<double>(const DataMatrix&)>& score);

// The sample command's body: draws -n records with `sample` (called as
// sample(n, generator)) from the generator of --seed and writes them to
// --output.
Status WriteSample(
    const ModelCommandFlags& flags,
    const std::function<StatusOr<DataMatrix>(Eigen::Index, Generator&)>& sample);

// The body of predict and transform for a model of `dimension`: reads
// --input (ReadDataForModel), computes `per_record` of it (a row per record)
// and gathers every rank's rows, in rank order, to rank 0, which passes them
// to `write` (under dpem-mpi the other ranks write nothing).
Status WritePerRecord(const ModelCommandFlags& flags, Eigen::Index dimension,
                      const std::function<StatusOr<DataMatrix>(const DataMatrix&)>& per_record,
                      const std::function<Status(const DataMatrix&)>& write);

// Handlers for factor-analysis models ("dpem-fa"), in fit_fa_command.cc.
Status ScoreFaModel(const ModelCommandFlags& flags);
Status SampleFaModel(const ModelCommandFlags& flags);
Status TransformFaModel(const ModelCommandFlags& flags);

// Handlers for k-means models ("dpem-kmeans"), in fit_kmeans_command.cc.
// Score prints {"nicv": ...} with --json.
Status ScoreKmeansModel(const ModelCommandFlags& flags);
Status PredictKmeansModel(const ModelCommandFlags& flags);

// Handler for gradient EM models ("dpem-gradient-em"), in
// gradient_em_command.cc: the mean log-likelihood of records in the fit's
// layout (gmm: log p(y); mrm, rmc: log p(y | x), the response y in the
// first column).
Status ScoreGradientEmModel(const ModelCommandFlags& flags);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_MODEL_COMMANDS_H_
