// The table of flags that every `dpem fit` subcommand shares, declared once
// (the idea of mlpack's single parameter table): the data and the model
// file, the privacy budget (--epsilon, --delta, --accountant), the public
// domain, the budget ledger, the seed, the threads and --quiet. A model's
// command declares only its own flags, and turns the shared ones into the
// pipeline's FitRequest (dpem/pipeline/fit_pipeline.h) and its options.
#ifndef DPEM_TOOLS_FIT_FLAGS_H_
#define DPEM_TOOLS_FIT_FLAGS_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "budget_flags.h"
#include "cli_common.h"
#include "dpem/accounting/accountant.h"
#include "dpem/engine/engine.h"
#include "dpem/pipeline/fit_pipeline.h"
#include "dpem/status.h"
#include "domain_flags.h"

namespace dpem::cli {

// The shared flags' values, as parsed.
struct FitFlags {
  std::string input;
  std::string output;
  std::optional<std::string> epsilon_text;
  std::optional<double> delta;
  std::optional<std::string> accountant;
  DomainFlags domain;
  std::optional<std::string> seed;
  bool quiet = false;
  BudgetFlags budget;
  int threads = 0;
};

// Which shared flags a subcommand offers, and the help of those whose
// meaning depends on the model. An empty help leaves the flag out.
struct FitFlagTable {
  // "fit gmm": messages read "dpem fit gmm: ..." (AddModelFitCommand fills
  // it in from the subcommand's name).
  std::string command = {};
  std::string description;    // The subcommand's line in dpem fit --help.
  std::string input_help = "Data: .csv (one record per row) or .npy";
  bool output = true;         // --output, the model file (required).
  bool quiet = true;          // --quiet.
  std::string epsilon_help;
  bool epsilon_required = true;
  std::string delta_help;
  std::string accountant_help = {};  // Empty for a model with no choice.
  bool domain = true;               // --data-norm, --data-center, --bounds...
  bool data_norm_from_data = true;  // ... and --data-norm-from-data.
};

// Registers the table's flags on `app`, storing into `f` (which must
// outlive the parse).
void AddFitFlags(CLI::App* app, const FitFlagTable& table, FitFlags& f);

// Adds the subcommand `name` of `dpem fit` (`fit`), described by
// table.description, with the table's shared flags (AddFitFlags, into
// flags.fit) followed by the model's own (add_options(app, flags)); its
// action is run(flags).
template <typename Flags, typename Run>
Command AddFitCommand(CLI::App& fit, const std::string& name, const FitFlagTable& table,
                      void (*add_options)(CLI::App*, Flags&), Run run) {
  const auto add_all = [&table, add_options](CLI::App* app, Flags& flags) {
    AddFitFlags(app, table, flags.fit);
    add_options(app, flags);
  };
  return AddSubcommand<Flags>(fit, name, table.description, add_all, run);
}

// The action of a model's fit command: the model's options from its flags
// (options_from_flags), the pipeline's request from the shared ones
// (FitRequestFromFlags), then `prepare` (the model's progress printer, and
// any note or check of the data's shape it adds to the request), then the
// pipeline's RunFit on make_task(options).
template <typename Flags, typename Options, typename Task>
Status RunModelFit(const FitFlagTable& table, Flags& flags,
                   StatusOr<Options> (*options_from_flags)(Flags&),
                   void (*prepare)(const FitFlagTable&, const Flags&, Options&, FitRequest&),
                   Task (*make_task)(Options)) {
  DPEM_ASSIGN_OR_RETURN(Options options, options_from_flags(flags));
  DPEM_ASSIGN_OR_RETURN(FitRequest request, FitRequestFromFlags(table, flags.fit));
  prepare(table, flags, options, request);
  Task task = make_task(std::move(options));
  return RunFit(task, request);
}

// The command `dpem fit <name>` of a model fitted by the pipeline:
// AddFitCommand with `table`, whose command ("fit <name>") is filled in
// here; its action is RunModelFit with these functions.
template <typename Flags, typename Options, typename Task>
Command AddModelFitCommand(CLI::App& fit, const std::string& name, FitFlagTable table,
                           void (*add_options)(CLI::App*, Flags&),
                           StatusOr<Options> (*options_from_flags)(Flags&),
                           void (*prepare)(const FitFlagTable&, const Flags&, Options&,
                                           FitRequest&),
                           Task (*make_task)(Options)) {
  table.command = "fit " + name;
  auto kept = std::make_shared<const FitFlagTable>(std::move(table));
  return AddFitCommand(fit, name, *kept, add_options,
                       [kept, options_from_flags, prepare, make_task](Flags& flags) {
                         return RunModelFit(*kept, flags, options_from_flags, prepare, make_task);
                       });
}

// The parsed --epsilon: a number >= kMinEpsilon or "inf"; +infinity when
// the flag was not given (a command whose model decides privacy otherwise).
StatusOr<double> EpsilonFromFlags(const FitFlags& f);
// The parsed --accountant, or `fallback` when not given.
StatusOr<AccountantKind> AccountantFromFlags(const FitFlags& f, AccountantKind fallback);
// --delta, required for a private fit: InvalidArgument naming the flag if it
// is missing or outside (0, 1). Unused (NaN) for a plain fit.
StatusOr<double> DeltaFromFlags(const FitFlags& f, bool is_private);

// --components K and --iterations J (0 when not given: the model's default),
// each checked to be in [1, 100000].
Status ComponentsAndIterationsInto(long long components, std::optional<long long> iterations,
                                   int& k, int& j);

// The shared flags' part of a fit's options: the engine of --threads and the
// domain of --data-norm / --data-center / --bounds (DomainFlagsInto) for a
// fit private or not at total `epsilon`. Parses the domain flags first.
StatusOr<EngineOptions> EngineFromFlags(const FitFlags& f);
Status DomainFromFlags(FitFlags& f, bool is_private, double epsilon, DataDomain& domain);

// The pipeline's request for the parsed flags: data, model file, budget,
// seed, a released domain (--data-norm auto), and warnings on stderr unless
// --quiet. InvalidArgument for a bad --seed or budget flags
// (CheckBudgetFlags).
StatusOr<FitRequest> FitRequestFromFlags(const FitFlagTable& table, const FitFlags& f);

// "dpem <command>: iteration 3/10, <label> <value>" rewritten in place on a
// terminal for each iteration (", <label> <value>" only for a finite value:
// a private fit shows none); null when --quiet or stderr is not a terminal.
std::function<void(int iteration, int iterations, double value)> ProgressPrinter(
    const FitFlagTable& table, const FitFlags& f, std::string label);

// ProgressPrinter for a model's iteration report, which has `iteration`,
// `iterations` and the shown value at `value`.
template <typename Report>
std::function<void(const Report&)> ReportPrinter(const FitFlagTable& table, const FitFlags& f,
                                                 std::string label, double Report::*value) {
  auto print = ProgressPrinter(table, f, std::move(label));
  if (!print) return nullptr;
  return [print, value](const Report& r) { print(r.iteration, r.iterations, r.*value); };
}

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_FIT_FLAGS_H_
