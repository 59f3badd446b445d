// dpem fit gmm: fit a (private) Gaussian mixture and write a model file.
// The shared fit flags come from fit_flags.h; the sequence of the fit is the
// library's pipeline (dpem/pipeline/fit_pipeline.h).
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "fit_flags.h"
#include "dpem/models/gmm/gmm_fit_task.h"

namespace dpem::cli {
namespace {

struct FitGmmFlags {
  FitFlags fit;
  long long components = 0;
  std::optional<long long> iterations;  // Unset: GmmFitOptions::ResolvedIterations().
  std::string covariance = "full";
  std::string estimator = "mle";
  std::optional<std::string> init;  // Unset: GmmFitOptions::ResolvedInit().
  std::string mechanisms = "joint";
  bool unsafe_paper_mechanisms = false;
  double per_release_delta = kDefaultPerReleaseDelta;
  std::string component_frames = "on";
  double frame_radius = 0.0;
  std::string frame_clip_correction = "on";
  std::string spherical_first_iteration = "off";
  std::string diagonal_first_iteration = "on";
  std::string budget_schedule = "on";
  std::string start_cell_frames = "on";
  std::string iterate_averaging = "on";
  std::string adaptive_iterations = "on";
  double covariance_floor = 1e-6;
};

// fit gmm's line in dpem fit --help, and the help of the shared flags whose
// meaning is its own.
FitFlagTable Table() {
  return {.description =
              "Fit a Gaussian mixture by (differentially private) EM and write a model file.",
          .epsilon_help =
              "Total privacy budget epsilon (> 0), or inf to fit plain EM without privacy",
          .delta_help = "Total delta, in (0, 1); required for private fits",
          .accountant_help = "Composition method calibrating the noise: " + AccountantNameList() +
                             " (default: rdp, the tightest)"};
}

// Flags whose parser is the model's own Parse* function.
Status ParsedFlagsInto(const FitGmmFlags& f, GmmFitOptions& o) {
  DPEM_ASSIGN_OR_RETURN(o.covariance, ParseFlag("--covariance", f.covariance, ParseCovarianceType));
  DPEM_ASSIGN_OR_RETURN(o.estimator, ParseFlag("--estimator", f.estimator, ParseEstimator));
  if (f.init) {
    DPEM_ASSIGN_OR_RETURN(o.init, ParseFlag("--init", *f.init, ParseGmmInit));
  }
  DPEM_ASSIGN_OR_RETURN(o.mechanisms, ParseFlag("--mechanisms", f.mechanisms, ParseGmmMechanisms));
  return OkStatus();
}

// The release's flags: only meaningful (and then required) for private fits.
Status ReleaseFlagsInto(FitGmmFlags& f, GmmFitOptions& o) {
  o.unsafe_paper_mechanisms = f.unsafe_paper_mechanisms;
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--per-release-delta", f.per_release_delta));
  o.per_release_delta = f.per_release_delta;
  DPEM_ASSIGN_OR_RETURN(o.component_frames, OnOff("--component-frames", f.component_frames));
  if (!(f.frame_radius >= 0.0 && std::isfinite(f.frame_radius))) {
    return InvalidArgumentError("--frame-radius must be finite and >= 0 (0: the default)");
  }
  o.frame_radius = f.frame_radius;
  DPEM_ASSIGN_OR_RETURN(o.frame_clip_correction,
                        OnOff("--frame-clip-correction", f.frame_clip_correction));
  DPEM_ASSIGN_OR_RETURN(o.spherical_first_iteration,
                        OnOff("--spherical-first-iteration", f.spherical_first_iteration));
  DPEM_ASSIGN_OR_RETURN(o.diagonal_first_iteration,
                        OnOff("--diagonal-first-iteration", f.diagonal_first_iteration));
  DPEM_ASSIGN_OR_RETURN(o.budget_schedule, OnOff("--budget-schedule", f.budget_schedule));
  DPEM_ASSIGN_OR_RETURN(o.start_cell_frames,
                        OnOff("--start-cell-frames", f.start_cell_frames));
  DPEM_ASSIGN_OR_RETURN(o.iterate_averaging,
                        OnOff("--iterate-averaging", f.iterate_averaging));
  DPEM_ASSIGN_OR_RETURN(o.adaptive_iterations,
                        OnOff("--adaptive-iterations", f.adaptive_iterations));
  DPEM_ASSIGN_OR_RETURN(o.accountant, AccountantFromFlags(f.fit, kDefaultAccountant));
  DPEM_RETURN_IF_ERROR(DomainFromFlags(f.fit, o.IsPrivate(), o.epsilon, o.domain));
  DPEM_ASSIGN_OR_RETURN(o.delta, DeltaFromFlags(f.fit, o.IsPrivate()));
  return OkStatus();
}

StatusOr<GmmFitOptions> OptionsFromFlags(FitGmmFlags& f) {
  GmmFitOptions o;
  DPEM_RETURN_IF_ERROR(
      ComponentsAndIterationsInto(f.components, f.iterations, o.components, o.iterations));
  DPEM_ASSIGN_OR_RETURN(o.epsilon, EpsilonFromFlags(f.fit));
  DPEM_RETURN_IF_ERROR(ParsedFlagsInto(f, o));
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--covariance-floor", f.covariance_floor));
  o.covariance_floor = f.covariance_floor;
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromFlags(f.fit));
  DPEM_RETURN_IF_ERROR(ReleaseFlagsInto(f, o));
  return o;
}

// The fit's progress line: each iteration's mean log-likelihood.
void Prepare(const FitFlagTable& table, const FitGmmFlags& f, GmmFitOptions& o, FitRequest&) {
  o.progress = ReportPrinter(table, f.fit, "mean log-likelihood (unit ball)",
                             &GmmIterationReport::mean_log_likelihood);
}

void AddReleaseOptions(CLI::App* app, FitGmmFlags& f) {
  app->add_option("--mechanisms", f.mechanisms,
                  "How the statistics are released each iteration: joint = all of them as one "
                  "Gaussian mechanism with their joint sensitivity (default, least noise); GGG "
                  "= per parameter, Gaussian; LLG = per parameter, Laplace for weights and "
                  "means (park2017's scenarios, for reproduction)");
  app->add_option("--component-frames", f.component_frames,
                  "on (default) or off. With the joint mechanism, release each component's "
                  "statistics in a ball around it (the previous iteration's released mean and "
                  "covariance, radius --frame-radius), records clipped to it, so that the noise "
                  "shrinks with the component; same sensitivity and budget");
  app->add_option("--frame-radius", f.frame_radius,
                  "Radius of the component frames in Mahalanobis units (default 0: adaptive, "
                  "per component between sqrt(d) + 2/d and sqrt(d) + 2 by the release's noise "
                  "for its count; docs/gmm.md)");
  app->add_option("--frame-clip-correction", f.frame_clip_correction,
                  "on (default) or off. Undo the shrinkage that the frames' clipping causes in "
                  "a Gaussian component's mean and covariance (post-processing)");
  app->add_option("--spherical-first-iteration", f.spherical_first_iteration,
                  "on or off (default). With full or diagonal covariances, the joint "
                  "mechanism and frames, J >= 2 and the private or random start, the first "
                  "iteration releases one scale per component instead of its covariance (its "
                  "cost set by --budget-schedule), to size the next frames (docs/gmm.md)");
  app->add_option("--diagonal-first-iteration", f.diagonal_first_iteration,
                  "on (default) or off. Under the same conditions, a full-covariance fit's "
                  "first iteration releases each component's diagonal second moments only "
                  "(its cost set by --budget-schedule), to size the next frames along every "
                  "axis (docs/gmm.md); --spherical-first-iteration on takes precedence");
  app->add_option("--budget-schedule", f.budget_schedule,
                  "on (default) or off. With a lighter first iteration, give it less of the "
                  "budget and the last iteration more, the rest shared (the same total): "
                  "diagonal 1/2 and 3/2 of an iteration's zCDP cost, spherical 1/4 and 2; "
                  "off: equal iterations (docs/gmm.md)");
  app->add_option("--start-cell-frames", f.start_cell_frames,
                  "on (default) or off. The private start's fine round releases the records "
                  "near each cell's candidate in a frame of the cell's size (the others as "
                  "they are), with 4 times the cells: sharper cell means where clusters are "
                  "compact, the same sensitivity (docs/gmm.md, \"Cell frames in the fine "
                  "round\")");
  app->add_option("--iterate-averaging", f.iterate_averaging,
                  "on (default) or off. From the private start, when the noise is large for "
                  "the data (the rule that keeps the default J at 3), a fit of J >= 4 "
                  "iterations returns a weighted average of its last J/2 iterates, the later "
                  "ones weighing more: less noise, the same releases (docs/gmm.md, "
                  "\"Averaging the last iterates\")");
  app->add_option("--adaptive-iterations", f.adaptive_iterations,
                  "on (default) or off. From the private start with --iterations unset, where "
                  "the noise is large for the data (J would be 3): plan 6 releases, the third "
                  "holding back 70% of its budget; if the released means have settled after "
                  "it, the last three re-release its statistics (the J = 3 fit's noise), "
                  "otherwise they are three more EM iterations. The same "
                  "releases either way; the model file says which ran (docs/gmm.md, "
                  "\"Adaptive J\"). off: J = 3 there");
  app->add_flag("--unsafe-paper-mechanisms", f.unsafe_paper_mechanisms,
                "Use park2016's Gamma (spherical) or Wishart (full) covariance noise, for "
                "reproducing the paper only. They are NOT differentially private: their noise "
                "is one-sided, so the output's support depends on the data; the model is "
                "marked void");
  app->add_option("--per-release-delta", f.per_release_delta,
                  "delta_i of park2017's parametrisation of Gaussian noise (default 1e-6); "
                  "sets the Laplace/Gaussian noise ratio under LLG");
}

void AddModelOptions(CLI::App* app, FitGmmFlags& f) {
  app->add_option("--components", f.components, "Number of components K (>= 1, <= N)")
      ->required();
  app->add_option("--iterations", f.iterations,
                  "Number of EM iterations J (>= 1), fixed. Default: for a private fit "
                  "from the private start 10 when its noise is small for N, K and d "
                  "(sigma_1 sqrt(d) K / N < 0.006), else the adaptive schedule of 6 releases "
                  "(--adaptive-iterations; 3 with it off); 10 from --init random, 100 for "
                  "--epsilon inf (docs/gmm.md, \"Choosing J\"; the model file records J)");
  app->add_option("--covariance", f.covariance, "full, diag or spherical (default full)");
  app->add_option("--estimator", f.estimator,
                  "mle, or map with park2017's priors (default mle)");
  app->add_option("--init", f.init,
                  "Starting point: private (the default for private fits: two noisy releases "
                  "of counts and sums of a data-adaptive partition of the domain, clustered "
                  "by weighted k-means++; it takes 20% of the budget, docs/gmm.md), kmeans++ "
                  "(k-means++ seeding and Lloyd on the records, as scikit-learn's "
                  "GaussianMixture; the default for --epsilon inf; it reads the data without "
                  "noise, so a private fit refuses it) or random (means uniform in the "
                  "domain's ball, never the data)");
  app->add_option("--covariance-floor", f.covariance_floor,
                  "Added to every covariance's diagonal, in unit-ball units (default 1e-6; at "
                  "least 1e-10, so that every log-density stays finite)");
}

// The options of fit gmm besides the shared ones.
void AddOptions(CLI::App* app, FitGmmFlags& f) {
  AddModelOptions(app, f);
  AddReleaseOptions(app, f);
}

}  // namespace

CLI::App* AddFitParent(CLI::App& root) {
  CLI::App* fit = root.add_subcommand("fit", "Fit a model to data.");
  fit->require_subcommand(1);
  return fit;
}

Command AddFitGmmCommand(CLI::App& fit) {
  return AddModelFitCommand(fit, "gmm", Table(), AddOptions, OptionsFromFlags, Prepare,
                            MakeGmmFitTask);
}

}  // namespace dpem::cli
