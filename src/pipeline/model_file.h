// The parts every model file shares, written and read by one piece of code:
// the format and version, the model's name, n and the iterations, the data
// transform (the public domain) and the privacy block (the guarantee with
// its ledger, and the seed). A model's ModelFileFormat adds its parameters
// and its own privacy fields (mechanisms, noise multipliers) to what
// ModelFileToJson returns, and reads them after ModelFileFromJson; the
// functions of ModelIo (dpem/models/model_io.h) are defined here once for
// every model. Private to the library.
//
// The shared layout (keys in the file are sorted; * only in a private
// model's file, + only in a seeded fit's):
//   format, version, model, n, iterations,
//   data_transform: {data_norm, clipping, from_data, center},
//   privacy: {private, neighbour_relation, guarantee_void, void_reasons,
//             seeded, seed+, seed_warning+, epsilon*, delta*,
//             target_epsilon*, target_delta*, accountant*, releases*}
// A schema without a domain (gradient EM, whose records carry their own
// clipping) writes and reads no data_transform. The reader checks format
// and version; n (up to 2^53) and iterations (up
// to the schema's bound) are JSON integers >= 1; data_transform must pass
// ValidateModelDomain; private, guarantee_void (booleans) and void_reasons
// (strings) are required; seed, if present, is a JSON integer >= 0, and
// seeded, if present (a file written by hand may leave it out), a boolean
// that says whether seed is there; a private model's numbers, accountant
// (unless the schema fixes it) and releases are required. model, clipping,
// neighbour_relation and seed_warning are for the reader of the file and
// are not read.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_PIPELINE_MODEL_FILE_H_
#define DPEM_PIPELINE_MODEL_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/guarantee.h"
#include "dpem/data/domain.h"
#include "dpem/models/model_io.h"
#include "dpem/status.h"
#include "internal/file_util.h"
#include "internal/json_fields.h"

namespace dpem::internal {

// What tells one model's files from another's.
struct ModelFileSchema {
  const char* format;       // "dpem-gmm"
  int version;              // Files of another version are refused.
  const char* model;        // The "model" field: "gaussian_mixture".
  const char* description;  // For errors: "not a dpem <description> model".
  // The most iterations a file may state (kMaxModelIterations, or the
  // most the model's fit allows).
  std::int64_t max_iterations;
  // Set for a model whose releases are always accounted by one accountant
  // (factor analysis: the discrete Gaussian's Renyi curve): its name is
  // written whatever the guarantee says, and the field is not read.
  std::optional<AccountantKind> fixed_accountant;
  // False for a model fitted without a public domain (gradient EM): its
  // files have no data_transform, and the domain read is left empty.
  bool has_domain = true;
};

// The most iterations the GMM and k-means files may state.
inline constexpr std::int64_t kMaxModelIterations = 1000000;

// The shared fields of a model file.
struct ModelFileFields {
  Eigen::Index n = 0;
  int iterations = 0;
  DataDomain domain;
  PrivacyGuarantee guarantee;
  std::optional<std::uint64_t> seed;
};

// The shared fields of a model file as a JSON object, to which the model
// adds its own (its parameters under their keys, its own privacy fields
// under "privacy"). `domain` is not written if the schema has none.
nlohmann::json ModelFileToJson(const ModelFileSchema& schema, Eigen::Index n, int iterations,
                               const DataDomain& domain, const PrivacyGuarantee& g,
                               const std::optional<std::uint64_t>& seed);

// Reads the shared fields of `model`, a parsed model file of `schema`;
// InvalidArgument naming the first problem. The centre's length is not
// checked here: CheckCenterLength does, once the model knows its dimension.
StatusOr<ModelFileFields> ModelFileFromJson(const nlohmann::json& model,
                                            const ModelFileSchema& schema);

// InvalidArgument unless the domain's centre has `dimension` entries.
Status CheckCenterLength(const DataDomain& domain, Eigen::Index dimension);

// The shared fields of `fit` (a GmmFit, KmeansFit or FaFit) as a JSON
// object: ModelFileToJson above.
template <typename Fit>
nlohmann::json ModelFileToJson(const ModelFileSchema& schema, const Fit& fit) {
  return ModelFileToJson(schema, fit.n, fit.iterations, fit.domain, fit.guarantee, fit.seed);
}

// A model's fit (GmmFit, KmeansFit, FaFit) holding the shared fields of
// `model` (ModelFileFromJson), the guarantee's shared part included; the
// model reads its own fields into it.
template <typename Fit>
StatusOr<Fit> FitFromModelFile(const nlohmann::json& model, const ModelFileSchema& schema) {
  DPEM_ASSIGN_OR_RETURN(ModelFileFields shared, ModelFileFromJson(model, schema));
  Fit fit;
  fit.n = shared.n;
  fit.iterations = shared.iterations;
  fit.domain = std::move(shared.domain);
  static_cast<PrivacyGuarantee&>(fit.guarantee) = std::move(shared.guarantee);
  fit.seed = shared.seed;
  return fit;
}

// A model file's text: `model` indented, with a final newline.
std::string ModelFileText(const nlohmann::json& model);

// Parses `text` and reads it with `from_json` (a model's reader); a JSON
// exception, which the strict readers never raise, is turned into
// InvalidArgument as well.
template <typename Fit>
StatusOr<Fit> ModelFromText(const std::string& text,
                            StatusOr<Fit> (*from_json)(const nlohmann::json&)) {
  DPEM_ASSIGN_OR_RETURN(const nlohmann::json model, ParseJson(text));
  try {
    return from_json(model);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("malformed model file: ") + e.what());
  }
}

// Reads the model file at `path` with `from_text` (ModelIo<Fit>::FromJson);
// NotFound / IoError, or InvalidArgument naming the path.
template <typename Fit>
StatusOr<Fit> ReadModelFile(const std::string& path,
                            StatusOr<Fit> (*from_text)(const std::string&)) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(path));
  StatusOr<Fit> fit = from_text(text);
  if (!fit.ok()) return InvalidArgumentError(path + ": " + fit.status().message());
  return fit;
}

// What a model adds to the shared parts of its files: each model defines
// the three members for its Fit in its _model_io.cc, before instantiating
// ModelIo<Fit> there.
template <typename Fit>
struct ModelFileFormat {
  // The model's schema.
  static const ModelFileSchema kSchema;
  // Adds the model's own fields (its parameters under their keys, its own
  // privacy fields under "privacy") to `model`, which holds the shared ones.
  static void AddFields(const Fit& fit, nlohmann::json& model);
  // Reads and checks the model's own fields of `model` into `fit`, which
  // holds the shared ones; InvalidArgument naming the first problem.
  static Status ReadFields(const nlohmann::json& model, Fit& fit);
};

// Reads a parsed model file of the model whose fits are of type Fit: the
// shared fields (FitFromModelFile), then the model's own.
template <typename Fit>
StatusOr<Fit> FitFromModelJson(const nlohmann::json& model) {
  using Format = ModelFileFormat<Fit>;
  DPEM_ASSIGN_OR_RETURN(Fit fit, FitFromModelFile<Fit>(model, Format::kSchema));
  DPEM_RETURN_IF_ERROR(Format::ReadFields(model, fit));
  return fit;
}

}  // namespace dpem::internal

namespace dpem {

// The functions of ModelIo<Fit> (dpem/models/model_io.h), the same for every
// model: a model's _model_io.cc defines ModelFileFormat<Fit>, then
// instantiates ModelIo<Fit> from these.

template <typename Fit>
std::string ModelIo<Fit>::ToJson(const Fit& fit) {
  using Format = internal::ModelFileFormat<Fit>;
  nlohmann::json model = internal::ModelFileToJson(Format::kSchema, fit);
  Format::AddFields(fit, model);
  return internal::ModelFileText(model);
}

template <typename Fit>
StatusOr<Fit> ModelIo<Fit>::FromJson(const std::string& text) {
  return internal::ModelFromText(text, &internal::FitFromModelJson<Fit>);
}

template <typename Fit>
Status ModelIo<Fit>::Write(const std::string& path, const Fit& fit) {
  return internal::WriteFileAtomically(path, ToJson(fit));
}

template <typename Fit>
StatusOr<Fit> ModelIo<Fit>::Read(const std::string& path) {
  return internal::ReadModelFile(path, &FromJson);
}

}  // namespace dpem

#endif  // DPEM_PIPELINE_MODEL_FILE_H_
