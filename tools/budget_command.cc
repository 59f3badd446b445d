// dpem budget init / show: the privacy-budget ledger of the fit commands'
// --budget-file (dpem/accounting/budget_store.h, docs/reliability.md).
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "dpem/accounting/budget_store.h"

namespace dpem::cli {
namespace {

struct BudgetCommandFlags {
  std::string file;
  std::string dataset;
  std::string input;
  double epsilon = std::nan("");
  double delta = std::nan("");
  bool json = false;
};

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
  if (dataset.empty()) {
    DPEM_ASSIGN_OR_RETURN(dataset, DatasetIdOfFile(f.input));
  }
  DPEM_ASSIGN_OR_RETURN(BudgetStore store, BudgetStore::Open(f.file));
  DPEM_RETURN_IF_ERROR(store.Init(dataset, f.epsilon, f.delta));
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
  init->add_option("--dataset", f->dataset, "Data set ID");
  init->add_option("--input", f->input, "Data file whose content hash is the data set ID");
  init->add_option("--epsilon", f->epsilon, "Total epsilon (> 0)")->required();
  init->add_option("--delta", f->delta, "Total delta, in [0, 1)")->required();
  CLI::App* show = app->add_subcommand("show", "Print each data set's total and spent budget.");
  show->add_option("--budget-file", f->file, "Budget file")->required();
  show->add_flag("--json", f->json, "Print JSON");
  return {app, [f, init] { return init->parsed() ? RunInit(*f) : RunShow(*f); }};
}

}  // namespace dpem::cli
