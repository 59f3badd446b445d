// dpem fit fa: fit a (private) factor analysis model and write a model file;
// and the score / sample / transform handlers of "dpem-fa" model files.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "budget_flags.h"
#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/factor_analysis/fa_model_io.h"
#include "dpem/models/factor_analysis/factor_analysis.h"
#include "internal/file_util.h"
#include "model_commands.h"

namespace dpem::cli {
namespace {

struct FitFaFlags {
  std::string input;
  std::string output;
  long long factors = 0;
  long long iterations = 100;
  std::string epsilon_text;
  double delta = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> data_norm;
  std::vector<double> data_center;
  bool data_norm_from_data = false;
  double eigenvalue_floor = 1e-6;
  std::string eigenvalue_repair = "floor";
  double variance_floor = 1e-6;
  std::optional<std::string> seed;
  bool quiet = false;
  BudgetFlags budget;
  int threads = 0;
};

Status DomainFlagsInto(const FitFaFlags& f, FaFitOptions& o) {
  if (f.data_norm) DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--data-norm", *f.data_norm));
  if (f.data_norm) o.domain.data_norm = *f.data_norm;
  o.domain.from_data = f.data_norm_from_data;
  if (f.data_norm && f.data_norm_from_data) {
    return InvalidArgumentError("--data-norm and --data-norm-from-data exclude each other");
  }
  if (!f.data_center.empty()) {
    o.domain.center = Eigen::Map<const Eigen::VectorXd>(
        f.data_center.data(), static_cast<Eigen::Index>(f.data_center.size()));
  }
  if (!o.IsPrivate()) return OkStatus();
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", f.delta));
  o.delta = f.delta;
  if (!f.data_norm && !f.data_norm_from_data) {
    return InvalidArgumentError(
        "--data-norm: a private fit needs the public bound R on the records' norm (or "
        "--data-norm-from-data, which voids the guarantee)");
  }
  return OkStatus();
}

StatusOr<FaFitOptions> OptionsFromFlags(const FitFaFlags& f) {
  FaFitOptions o;
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--factors", f.factors, 1));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", f.iterations, 1));
  if (f.iterations > 1000000 || f.factors > 100000) {
    return InvalidArgumentError("--iterations: must be <= 1000000; --factors: <= 100000");
  }
  o.em.factors = static_cast<int>(f.factors);
  o.em.iterations = static_cast<int>(f.iterations);
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--variance-floor", f.variance_floor));
  o.em.variance_floor = f.variance_floor;
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--eigenvalue-floor", f.eigenvalue_floor));
  o.eigenvalue_floor = f.eigenvalue_floor;
  o.eigenvalue_repair = f.eigenvalue_repair == "floor" ? FaEigenvalueRepair::kFloor
                                                       : FaEigenvalueRepair::kShift;
  DPEM_ASSIGN_OR_RETURN(o.epsilon, ParseEpsilonFlag("--epsilon", f.epsilon_text));
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromThreadsFlag(f.threads));
  DPEM_RETURN_IF_ERROR(DomainFlagsInto(f, o));
  return o;
}

// "dpem fit fa: iteration 3/10" rewritten in place on a terminal. The
// log-likelihood shown is of the released (noisy) matrix: post-processing.
std::function<void(int, double)> ProgressLine(bool quiet, int iterations) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [iterations](int it, double ll) {
    std::cerr << "\rdpem fit fa: iteration " << it << "/" << iterations
              << ", mean log-likelihood of the (released) second moment, unit ball " << ll
              << (it == iterations ? "\n" : "") << std::flush;
  };
}

void WarnAboutGuarantee(const FaFit& fit, bool quiet) {
  if (quiet) return;
  // One line per reason, a seeded private fit's among them (said once).
  for (const std::string& reason : fit.guarantee.void_reasons) {
    std::cerr << "dpem fit fa: warning: the privacy guarantee is VOID: " << reason << "\n";
  }
}

Status RunFitFa(const FitFaFlags& f) {
  DPEM_ASSIGN_OR_RETURN(FaFitOptions options, OptionsFromFlags(f));
  DPEM_RETURN_IF_ERROR(options.Validate());
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_RETURN_IF_ERROR(
      ChargeBudget(f.budget, f.input, options.epsilon, options.delta, "dpem fit fa"));
  DPEM_ASSIGN_OR_RETURN(const std::unique_ptr<RowSource> x, OpenRowSource(f.input));
  if (options.em.factors > x->cols()) {
    return InvalidArgumentError("--factors: L = " + std::to_string(options.em.factors) +
                                " exceeds the number of columns d = " +
                                std::to_string(x->cols()) + " of " + f.input);
  }
  options.em.progress = ProgressLine(f.quiet, options.em.iterations);
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  StatusOr<FaFit> fit = FitFactorAnalysis(*x, options, gen);
  if (!fit.ok()) return Status(fit.status().code(), f.input + ": " + fit.status().message());
  WarnAboutGuarantee(*fit, f.quiet);
  return WriteFaModel(f.output, *fit);
}

void AddOptions(CLI::App* app, FitFaFlags& f) {
  app->add_option("--input", f.input, "Data: .csv (one record per row) or .npy")->required();
  app->add_option("--output", f.output, "Model file to write (JSON)")->required();
  app->add_option("--factors", f.factors, "Number of factors L (1 <= L <= d)")->required();
  app->add_option("--iterations", f.iterations,
                  "EM iterations J on the released second moment (default 100; free of "
                  "privacy cost)");
  app->add_option("--epsilon", f.epsilon_text,
                  "Privacy budget epsilon (> 0) of the one release, or inf for plain EM")
      ->required();
  app->add_option("--delta", f.delta, "delta, in (0, 1); required for private fits");
  app->add_option("--data-norm", f.data_norm,
                  "Public bound R on the L2 norm of a record (after --data-center); records "
                  "beyond it are clipped. Required for private fits; no default");
  app->add_option("--data-center", f.data_center,
                  "Public centre c of the domain and mean of the model, comma-separated "
                  "(default: the origin)")
      ->delimiter(',');
  app->add_flag("--data-norm-from-data", f.data_norm_from_data,
                "Take R from the data's largest norm. This reveals the largest record: the "
                "model is marked as having NO valid privacy guarantee");
  app->add_option("--eigenvalue-floor", f.eigenvalue_floor,
                  "Floor of the eigenvalues of the released second moment / N, unit-ball "
                  "units (default 1e-6)");
  app->add_option("--eigenvalue-repair", f.eigenvalue_repair,
                  "How a private fit raises the released second moment's eigenvalues to the "
                  "floor: floor (default: raise those below it, the best likelihood; needs "
                  "every eigenpair, O(d^3) when any is below) or shift (add a multiple of the "
                  "identity: needs the extreme eigenvalues only, much faster for large d, "
                  "lower likelihood)")
      ->check(CLI::IsMember({"shift", "floor"}));
  app->add_option("--variance-floor", f.variance_floor,
                  "Floor of the noise variances Psi, unit-ball units (default 1e-6)");
  app->add_option("--seed", f.seed,
                  "Seed a reproducible generator (tests and experiments only; recorded in "
                  "the model). The noise is then reproducible from the seed, so a private "
                  "fit's guarantee is VOID. Default: a CSPRNG keyed by the operating system");
  app->add_flag("--quiet", f.quiet, "No progress line or warnings on stderr");
}

struct FaModelAndData {
  FaFit fit;
  DataMatrix x;
};

StatusOr<FaModelAndData> LoadFa(const ModelCommandFlags& f) {
  FaModelAndData md;
  DPEM_ASSIGN_OR_RETURN(md.fit, ReadFaModel(f.model));
  DPEM_ASSIGN_OR_RETURN(md.x, ReadMatrix(f.input));
  if (md.x.cols() != md.fit.parameters.dimension()) {
    return InvalidArgumentError(f.input + ": the data has " + std::to_string(md.x.cols()) +
                                " columns but the model " + f.model + " has dimension " +
                                std::to_string(md.fit.parameters.dimension()));
  }
  return md;
}

}  // namespace

Command AddFitFaCommand(CLI::App& fit) {
  auto f = std::make_shared<FitFaFlags>();
  CLI::App* app = fit.add_subcommand(
      "fa", "Fit factor analysis x = c + W z + e (one private release of the second "
            "moment, then EM) and write a model file.");
  AddOptions(app, *f);
  AddThreadsOption(app, &f->threads);
  AddBudgetFlags(app, &f->budget);
  return {app, [f] { return RunFitFa(*f); }};
}

Status ScoreFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaModelAndData md, LoadFa(f));
  DPEM_ASSIGN_OR_RETURN(const double ll, FaMeanLogLikelihood(md.fit.parameters, md.x));
  if (f.json) {
    PrintJson({{"mean_log_likelihood", ll}, {"n", md.x.rows()}});
  } else {
    std::cout << "mean log-likelihood per record: " << FormatNumber(ll) << " (" << md.x.rows()
              << " records, original units)\n";
  }
  return OkStatus();
}

Status SampleFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaFit fit, ReadFaModel(f.model));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix synth, FaSample(fit.parameters, f.count, gen));
  return WriteMatrix(f.output, synth);
}

Status TransformFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaModelAndData md, LoadFa(f));
  DPEM_ASSIGN_OR_RETURN(const DataMatrix z, FaTransform(md.fit.parameters, md.x));
  return WriteMatrix(f.output, z);
}

}  // namespace dpem::cli
