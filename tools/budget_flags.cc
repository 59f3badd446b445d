#include "budget_flags.h"

#include <cmath>

#include "cli_common.h"
#include "dpem/pipeline/fit_pipeline.h"

namespace dpem::cli {

void AddBudgetFlags(CLI::App* app, BudgetFlags* flags) {
  app->add_option("--budget-file", flags->file,
                  "Privacy-budget ledger (SQLite, see dpem budget): the fit's (epsilon, delta) "
                  "is charged to it before the data is read, and the fit refused if the data "
                  "set's total would be exceeded");
  app->add_option("--dataset", flags->dataset,
                  "Data set ID in the budget file (default: the BLAKE2b hash of the input "
                  "file's bytes, so a renamed copy shares the budget but a file with one "
                  "record changed, or the same records re-serialised, is a different data "
                  "set, with a fresh budget once it is initialised; give an ID where that "
                  "matters)");
}

Status CheckBudgetFlags(const BudgetFlags& flags, double epsilon) {
  if (flags.file.empty()) {
    if (flags.dataset.empty()) return OkStatus();
    return InvalidArgumentError("--dataset: only meaningful with --budget-file");
  }
  if (!std::isfinite(epsilon)) {
    return InvalidArgumentError("--budget-file: a non-private fit (--epsilon inf) cannot be "
                                "charged to a privacy budget");
  }
  return OkStatus();
}

Status ChargeBudget(const BudgetFlags& flags, const std::string& input, double epsilon,
                    double delta, const std::string& command) {
  DPEM_RETURN_IF_ERROR(CheckBudgetFlags(flags, epsilon));
  return ChargePrivacyBudget(flags.file, flags.dataset, input, epsilon, delta, command);
}

}  // namespace dpem::cli
