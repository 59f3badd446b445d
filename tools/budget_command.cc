// dpem budget init / show: the privacy-budget ledger of the fit commands'
// --budget-file (dpem/accounting/budget_store.h, docs/reliability.md).
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "commands.h"
#include "dpem/accounting/budget_store.h"
#include "dpem/data/io.h"

namespace dpem::cli {
namespace {

namespace fs = std::filesystem;

struct BudgetCommandFlags {
  std::string file;
  std::string dataset;
  std::string input;
  double epsilon = std::nan("");
  double delta = std::nan("");
  bool json = false;
};

// The source recorded with a data set named by --input's hash: the file's
// absolute path (symbolic links resolved) and, if it reads as a data file,
// its rows and columns (budget init hashes any file; others get no shape).
DatasetSource SourceOf(const std::string& input) {
  DatasetSource source;
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::path(input), error);
  source.path = error ? input : canonical.string();
  const StatusOr<std::unique_ptr<RowSource>> rows = OpenRowSource(input);
  if (rows.ok()) {
    source.rows = (*rows)->rows();
    source.columns = (*rows)->cols();
  }
  return source;
}

// One stderr line if `dataset` (new to the store) has the path or the shape
// of data sets the store already knows: an edited or re-serialised file has a
// new hash, so it would start a fresh budget.
void WarnAboutSimilar(const std::string& dataset, const DatasetSource& source,
                      const std::vector<SimilarDataset>& similar) {
  if (similar.empty()) return;
  const SimilarDataset& first = similar.front();
  const std::string shape = "the same shape (" + std::to_string(source.rows) + " rows, " +
                            std::to_string(source.columns) + " columns)";
  std::string how = first.same_path ? "was initialised from the same path" : "has " + shape;
  if (first.same_path && first.same_shape) how += ", with " + shape;
  const std::string others =
      similar.size() > 1 ? " (and " + std::to_string(similar.size() - 1) + " more)" : "";
  std::cerr << "dpem budget init: warning: data set " << dataset
            << " is new, but data set " << first.dataset << others << " " << how
            << ": if this file is an edited or re-serialised copy of the same records, it "
               "now has a fresh budget of its own; name data sets with --dataset to share "
               "one\n";
}

Status RunInit(const BudgetCommandFlags& f) {
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--epsilon", f.epsilon));
  if (!(f.delta >= 0.0 && f.delta < 1.0)) {
    return InvalidArgumentError("--delta: must be in [0, 1), got " + FormatNumber(f.delta));
  }
  if (f.dataset.empty() == f.input.empty()) {
    return InvalidArgumentError("--dataset or --input: give exactly one (--input names the "
                                "data set by the hash of the file's bytes)");
  }
  std::string dataset = f.dataset;
  DatasetSource source;
  if (dataset.empty()) {
    DPEM_ASSIGN_OR_RETURN(dataset, DatasetIdOfFile(f.input));
    source = SourceOf(f.input);
  }
  DPEM_ASSIGN_OR_RETURN(BudgetStore store, BudgetStore::Open(f.file));
  std::vector<SimilarDataset> similar;
  const StatusOr<BudgetAccount> existing = store.Get(dataset);
  if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  if (!existing.ok() && !f.input.empty()) {
    DPEM_ASSIGN_OR_RETURN(similar, store.FindSimilar(dataset, source));
  }
  DPEM_RETURN_IF_ERROR(store.Init(dataset, f.epsilon, f.delta, source));
  WarnAboutSimilar(dataset, source, similar);
  std::cout << "data set " << dataset << ": total (epsilon " << FormatNumber(f.epsilon)
            << ", delta " << FormatNumber(f.delta) << ")\n";
  return OkStatus();
}

Status RunShow(const BudgetCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(BudgetStore store, BudgetStore::Open(f.file, /*create=*/false));
  DPEM_RETURN_IF_ERROR(store.CheckIntegrity());
  DPEM_ASSIGN_OR_RETURN(const std::vector<BudgetAccount> accounts, store.List());
  nlohmann::json all = nlohmann::json::array();
  for (const BudgetAccount& a : accounts) {
    if (f.json) {
      all.push_back({{"dataset", a.dataset},
                     {"total_epsilon", a.total_epsilon},
                     {"total_delta", a.total_delta},
                     {"spent_epsilon", a.spent_epsilon},
                     {"spent_delta", a.spent_delta},
                     {"charges", a.charges}});
    } else {
      std::cout << a.dataset << ": spent epsilon " << FormatNumber(a.spent_epsilon) << " of "
                << FormatNumber(a.total_epsilon) << ", delta " << FormatNumber(a.spent_delta)
                << " of " << FormatNumber(a.total_delta) << " (" << a.charges << " fits)\n";
    }
  }
  if (f.json) PrintJson({{"composition", "basic"}, {"datasets", all}});
  return OkStatus();
}

}  // namespace

Command AddBudgetCommand(CLI::App& root) {
  auto f = std::make_shared<BudgetCommandFlags>();
  CLI::App* app = root.add_subcommand(
      "budget", "Privacy-budget ledger of --budget-file: a total (epsilon, delta) per data "
                "set, charged by fits (basic composition: sums of epsilons and deltas).");
  app->require_subcommand(1);
  CLI::App* init = app->add_subcommand(
      "init", "Set a data set's total budget (totals cannot be changed afterwards).");
  init->add_option("--budget-file", f->file, "Budget file (created if missing)")->required();
  init->add_option("--dataset", f->dataset,
                   "Data set ID (use one where the same records may be written to more "
                   "than one file)");
  init->add_option("--input", f->input,
                   "Data file whose content hash is the data set ID. The hash is of the "
                   "bytes: an edited or re-serialised file is a new data set with a fresh "
                   "budget (a warning says so when its path or shape is already known)");
  init->add_option("--epsilon", f->epsilon, "Total epsilon (> 0)")->required();
  init->add_option("--delta", f->delta, "Total delta, in [0, 1)")->required();
  CLI::App* show = app->add_subcommand("show", "Print each data set's total and spent budget.");
  show->add_option("--budget-file", f->file, "Budget file")->required();
  show->add_flag("--json", f->json, "Print JSON");
  return {app, [f, init] { return init->parsed() ? RunInit(*f) : RunShow(*f); }};
}

}  // namespace dpem::cli
