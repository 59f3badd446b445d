// The privacy-budget flags of the fit commands (--budget-file, --dataset) and
// the charge they make before a fit reads its data. See
// dpem/accounting/budget_store.h and docs/reliability.md.
#ifndef DPEM_TOOLS_BUDGET_FLAGS_H_
#define DPEM_TOOLS_BUDGET_FLAGS_H_

#include <string>

#include <CLI/CLI.hpp>

#include "dpem/status.h"

namespace dpem::cli {

// --budget-file F and --dataset ID of one fit command; both empty: no budget.
struct BudgetFlags {
  std::string file;
  std::string dataset;
};

// Adds --budget-file and --dataset to `app`, storing into `flags` (which
// must outlive the parse).
void AddBudgetFlags(CLI::App* app, BudgetFlags* flags);

// Checks the flags for a charge of `epsilon`: InvalidArgument for --dataset
// without --budget-file, or a budget file with a non-private fit (epsilon
// inf). OK without either flag.
Status CheckBudgetFlags(const BudgetFlags& flags, double epsilon);

// Charges (epsilon, delta) to the budget file, if one was given, for the data
// set named by --dataset or else by the content hash of `input`
// (DatasetIdOfFile). Call after the flags are validated and before the data
// is read. OK (and nothing done) without --budget-file; InvalidArgument for
// --dataset without --budget-file or a non-private fit (epsilon inf) with
// one; the store's errors otherwise (NotFound: no total for the data set;
// FailedPrecondition: the budget would be exceeded). `command` is recorded
// with the charge.
Status ChargeBudget(const BudgetFlags& flags, const std::string& input, double epsilon,
                    double delta, const std::string& command = "dpem fit");

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_BUDGET_FLAGS_H_
