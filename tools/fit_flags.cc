// The shared flags of the fit commands: see fit_flags.h.
#include "fit_flags.h"

#include <unistd.h>

#include <cmath>
#include <iostream>
#include <limits>

#include "cli_common.h"
#include "dpem/accounting/budget_store.h"
#include "shard_input.h"

namespace dpem::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void AddPrivacyFlags(CLI::App* app, const FitFlagTable& t, FitFlags& f) {
  if (!t.epsilon_help.empty()) {
    CLI::Option* epsilon = app->add_option("--epsilon", f.epsilon_text, t.epsilon_help);
    if (t.epsilon_required) epsilon->required();
  }
  if (!t.delta_help.empty()) app->add_option("--delta", f.delta, t.delta_help);
  if (!t.accountant_help.empty()) app->add_option("--accountant", f.accountant, t.accountant_help);
}

}  // namespace

void AddFitFlags(CLI::App* app, const FitFlagTable& t, FitFlags& f) {
  app->add_option("--input", f.input, t.input_help)->required();
  if (t.output) app->add_option("--output", f.output, "Model file to write (JSON)")->required();
  AddPrivacyFlags(app, t, f);
  if (t.domain) AddDomainFlags(app, f.domain, t.data_norm_from_data);
  app->add_option("--seed", f.seed,
                  "Seed a reproducible generator (tests and experiments only; recorded in "
                  "the model). The noise is then reproducible from the seed, so a private "
                  "fit's guarantee is VOID. Default: a CSPRNG keyed by the operating system");
  if (t.quiet) app->add_flag("--quiet", f.quiet, "No progress line or warnings on stderr");
  AddThreadsOption(app, &f.threads);
  AddBudgetFlags(app, &f.budget);
}

StatusOr<double> EpsilonFromFlags(const FitFlags& f) {
  if (!f.epsilon_text) return std::numeric_limits<double>::infinity();
  return ParseEpsilonFlag("--epsilon", *f.epsilon_text);
}

StatusOr<AccountantKind> AccountantFromFlags(const FitFlags& f, AccountantKind fallback) {
  if (!f.accountant) return fallback;
  return ParseAccountantFlag("--accountant", *f.accountant);
}

StatusOr<double> DeltaFromFlags(const FitFlags& f, bool is_private) {
  if (!is_private) return kNaN;
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", f.delta.value_or(kNaN)));
  return *f.delta;
}

Status ComponentsAndIterationsInto(long long components, std::optional<long long> iterations,
                                   int& k, int& j) {
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--components", components, 1));
  if (iterations) DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", *iterations, 1));
  if (iterations.value_or(1) > 100000 || components > 100000) {
    return InvalidArgumentError("--iterations and --components: must be <= 100000");
  }
  k = static_cast<int>(components);
  j = static_cast<int>(iterations.value_or(0));
  return OkStatus();
}

StatusOr<EngineOptions> EngineFromFlags(const FitFlags& f) {
  return EngineFromThreadsFlag(f.threads);
}

Status DomainFromFlags(FitFlags& f, bool is_private, double epsilon, DataDomain& domain) {
  DPEM_RETURN_IF_ERROR(ParseDomainFlags(f.domain));
  return DomainFlagsInto(f.domain, is_private, epsilon, domain);
}

namespace {

// The data set a distributed fit charges when --dataset is not given: the
// hash of the one file every rank reads, as on one machine (rank 0, which
// charges, computes it); one file per rank ({rank}) has no such hash, and
// needs --dataset.
Status DefaultShardedDataset(const FitFlags& f, const Collective& c, FitRequest& r) {
  if (r.budget_file.empty() || !r.dataset.empty()) return OkStatus();
  if (f.input.find(kRankPlaceholder) != std::string::npos) {
    return InvalidArgumentError(
        "--dataset: required with --budget-file when each rank reads its own file ({rank})");
  }
  if (c.rank() != 0) return OkStatus();  // Only rank 0 charges.
  DPEM_ASSIGN_OR_RETURN(r.dataset, DatasetIdOfFile(f.input));
  return OkStatus();
}

}  // namespace

StatusOr<FitRequest> FitRequestFromFlags(const FitFlagTable& t, const FitFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const double epsilon, EpsilonFromFlags(f));
  DPEM_RETURN_IF_ERROR(CheckBudgetFlags(f.budget, epsilon));
  FitRequest r;
  r.input = f.input;
  if (t.output) r.output = f.output;
  r.budget_file = f.budget.file;
  r.dataset = f.budget.dataset;
  r.command = "dpem " + t.command;
  DPEM_ASSIGN_OR_RETURN(r.seed, ParseSeedFlag(f.seed));
  if (f.domain.data_norm_auto) r.bounds_epsilon = f.domain.bounds_epsilon;
  if (const Collective* c = CliCollective(); c != nullptr) {
    // dpem-mpi: this rank's shard of --input (docs/distributed.md).
    r.input = ShardPath(f.input, c->rank());
    if (!IsSingleProcess(c)) {
      r.collective = c;
      r.open_source = ShardOpener(f.input, *c);
      DPEM_RETURN_IF_ERROR(DefaultShardedDataset(f, *c, r));
    }
  }
  if (!f.quiet) r.warn = [](const std::string& line) { std::cerr << line << "\n"; };
  return r;
}

std::function<void(int, int, double)> ProgressPrinter(const FitFlagTable& t, const FitFlags& f,
                                                      std::string label) {
  if (f.quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [command = t.command, label](int iteration, int iterations, double value) {
    std::cerr << "\rdpem " << command << ": iteration " << iteration << "/" << iterations;
    if (std::isfinite(value)) std::cerr << ", " << label << " " << value;
    std::cerr << (iteration == iterations ? "\n" : "") << std::flush;
  };
}

}  // namespace dpem::cli
