// dpem fit fa: fit a (private) factor analysis model and write a model file;
// and the score / sample / transform handlers of "dpem-fa" model files.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/factor_analysis/fa_model_io.h"
#include "dpem/models/factor_analysis/fa_fit_task.h"
#include "fit_flags.h"
#include "internal/file_util.h"
#include "model_commands.h"
#include "shard_input.h"

namespace dpem::cli {
namespace {

struct FitFaFlags {
  FitFlags fit;
  long long factors = 0;
  long long iterations = 100;
  double eigenvalue_floor = 1e-6;
  std::string eigenvalue_repair = "shift-back";
  double variance_floor = 1e-6;
  double variance_noise_floor = kFaVarianceNoiseFloor;
  double tolerance = kFaEmTolerance;
  std::string approximate_start = "on";
};

// fit fa's line in dpem fit --help, and the help of the shared flags whose
// meaning is its own; no --accountant (one release, certified by its exact
// profile: no choice).
FitFlagTable Table() {
  return {.description =
              "Fit factor analysis x = c + W z + e (one private release of the "
              "second moment, then EM) and write a model file.",
          .epsilon_help = "Privacy budget epsilon (> 0) of the one release, or inf for plain EM",
          .delta_help = "delta, in (0, 1); required for private fits"};
}

StatusOr<FaFitOptions> OptionsFromFlags(FitFaFlags& f) {
  FaFitOptions o;
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--factors", f.factors, 1));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", f.iterations, 1));
  if (f.iterations > 1000000 || f.factors > 100000) {
    return InvalidArgumentError("--iterations: must be <= 1000000; --factors: <= 100000");
  }
  o.em.factors = static_cast<int>(f.factors);
  o.em.iterations = static_cast<int>(f.iterations);
  DPEM_RETURN_IF_ERROR(RequireNonNegativeFinite("--tolerance", f.tolerance));
  o.em.tolerance = f.tolerance;
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--variance-floor", f.variance_floor));
  o.em.variance_floor = f.variance_floor;
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--eigenvalue-floor", f.eigenvalue_floor));
  o.eigenvalue_floor = f.eigenvalue_floor;
  o.eigenvalue_repair = f.eigenvalue_repair == "floor"   ? FaEigenvalueRepair::kFloor
                        : f.eigenvalue_repair == "shift" ? FaEigenvalueRepair::kShift
                                                         : FaEigenvalueRepair::kShiftBack;
  DPEM_RETURN_IF_ERROR(RequireNonNegativeFinite("--variance-noise-floor",
                                               f.variance_noise_floor));
  o.variance_noise_floor = f.variance_noise_floor;
  DPEM_ASSIGN_OR_RETURN(o.approximate_start, OnOff("--approximate-start", f.approximate_start));
  DPEM_ASSIGN_OR_RETURN(o.epsilon, EpsilonFromFlags(f.fit));
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromFlags(f.fit));
  DPEM_RETURN_IF_ERROR(DomainFromFlags(f.fit, o.IsPrivate(), o.epsilon, o.domain));
  DPEM_ASSIGN_OR_RETURN(o.delta, DeltaFromFlags(f.fit, o.IsPrivate()));
  return o;
}

// "dpem fit fa: iteration 3/10, ..." on a terminal. The log-likelihood shown
// is of the released (noisy) matrix: post-processing.
std::function<void(int, double)> ProgressLine(const FitFlagTable& table, const FitFaFlags& f,
                                              int iterations) {
  auto print = ProgressPrinter(table, f.fit,
                               "mean log-likelihood of the (released) second moment, unit ball");
  if (!print) return nullptr;
  return [print, iterations](int it, double ll) { print(it, iterations, ll); };
}

// The check that L <= d, once the data's d is known, and the fit's progress
// line (ProgressLine).
void Prepare(const FitFlagTable& table, const FitFaFlags& f, FaFitOptions& o, FitRequest& request) {
  request.check_shape = [factors = o.em.factors, input = f.fit.input](Eigen::Index,
                                                                      Eigen::Index d) {
    if (factors <= d) return OkStatus();
    return InvalidArgumentError("--factors: L = " + std::to_string(factors) +
                                " exceeds the number of columns d = " + std::to_string(d) +
                                " of " + input);
  };
  o.em.progress = ProgressLine(table, f, o.em.iterations);
}

// The options of fit fa besides the shared ones.
void AddOptions(CLI::App* app, FitFaFlags& f) {
  app->add_option("--factors", f.factors, "Number of factors L (1 <= L <= d)")->required();
  app->add_option("--iterations", f.iterations,
                  "EM iterations J on the released second moment, at most (default 100; "
                  "free of privacy cost)");
  app->add_option("--tolerance", f.tolerance,
                  "Stop EM after an iteration that raised the total log-likelihood of the "
                  "(released) second moment, N times its mean per record, by less than this, "
                  "as scikit-learn's FactorAnalysis tol (default 1e-2; 0: run all J)");
  app->add_option("--eigenvalue-floor", f.eigenvalue_floor,
                  "Floor of the eigenvalues of the released second moment / N, unit-ball "
                  "units (default 1e-6)");
  app->add_option("--eigenvalue-repair", f.eigenvalue_repair,
                  "How a private fit raises the released second moment's eigenvalues to the "
                  "floor for EM: shift-back (default: add a multiple c of the identity, and "
                  "take c back out of Psi after EM; needs the extreme eigenvalues only), "
                  "shift (the same, c left in Psi: a lower likelihood) or floor (raise those "
                  "below it; needs every eigenpair, O(d^3) when any is below; a lower "
                  "likelihood). docs/factor_analysis.md, \"The eigenvalue repair\"")
      ->check(CLI::IsMember({"shift-back", "shift", "floor"}));
  app->add_option("--approximate-start", f.approximate_start,
                  "on (default): a private fit starts EM from approximate top eigenpairs "
                  "(randomized subspace iteration) for d > 128; off: Lanczos's")
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option("--variance-noise-floor", f.variance_noise_floor,
                  "With shift-back: the floor of Psi, in standard deviations of the "
                  "release's noise on a diagonal entry of the second moment (default 1; "
                  "public)");
  app->add_option("--variance-floor", f.variance_floor,
                  "Floor of the noise variances Psi, unit-ball units (default 1e-6)");
}

}  // namespace

Status ScoreFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaFit fit, FaModelIo::Read(f.model));
  return ScoreLogLikelihood(f, fit.parameters.dimension(), [&](const DataMatrix& x) {
    return FaMeanLogLikelihood(fit.parameters, x);
  });
}

Status SampleFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaFit fit, FaModelIo::Read(f.model));
  return WriteSample(f, [&](Eigen::Index n, Generator& gen) {
    return FaSample(fit.parameters, n, gen);
  });
}

Status TransformFaModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const FaFit fit, FaModelIo::Read(f.model));
  return WritePerRecord(
      f, fit.parameters.dimension(),
      [&](const DataMatrix& x) { return FaTransform(fit.parameters, x); },
      [&](const DataMatrix& z) { return WriteMatrix(f.output, z); });
}

Command AddFitFaCommand(CLI::App& fit) {
  return AddModelFitCommand(fit, "fa", Table(), AddOptions, OptionsFromFlags, Prepare,
                            MakeFaFitTask);
}

}  // namespace dpem::cli
