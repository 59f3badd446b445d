// dpem fit gmm: fit a (private) Gaussian mixture and write a model file.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bounds_flags.h"
#include "domain_flags.h"
#include "budget_flags.h"
#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/gmm/gmm_model_io.h"
#include "dpem/models/gmm/private_gmm.h"
#include "internal/file_util.h"

namespace dpem::cli {
namespace {

struct FitGmmFlags {
  std::string input;
  std::string output;
  long long components = 0;
  std::optional<long long> iterations;  // Unset: GmmFitOptions::ResolvedIterations().
  std::string covariance = "full";
  std::string estimator = "mle";
  std::optional<std::string> init;  // Unset: GmmFitOptions::ResolvedInit().
  std::string epsilon_text;
  double delta = std::numeric_limits<double>::quiet_NaN();
  std::string accountant{AccountantName(kDefaultAccountant)};
  std::string mechanisms = "joint";
  DomainFlags domain;
  bool unsafe_paper_mechanisms = false;
  double per_release_delta = kDefaultPerReleaseDelta;
  std::string component_frames = "on";
  double frame_radius = 0.0;
  double covariance_floor = 1e-6;
  std::optional<std::string> seed;
  bool quiet = false;
  BudgetFlags budget;
  int threads = 0;
};

// Privacy flags: only meaningful (and then required) for private fits.
Status PrivacyFlagsInto(const FitGmmFlags& f, GmmFitOptions& o) {
  DPEM_ASSIGN_OR_RETURN(o.accountant, ParseAccountantFlag("--accountant", f.accountant));
  StatusOr<GmmMechanisms> m = ParseGmmMechanisms(f.mechanisms);
  if (!m.ok()) return InvalidArgumentError("--mechanisms: " + m.status().message());
  o.mechanisms = *m;
  o.unsafe_paper_mechanisms = f.unsafe_paper_mechanisms;
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--per-release-delta", f.per_release_delta));
  o.per_release_delta = f.per_release_delta;
  if (f.component_frames != "on" && f.component_frames != "off") {
    return InvalidArgumentError("--component-frames must be on or off");
  }
  o.component_frames = f.component_frames == "on";
  if (!(f.frame_radius >= 0.0 && std::isfinite(f.frame_radius))) {
    return InvalidArgumentError("--frame-radius must be finite and >= 0 (0: the default)");
  }
  o.frame_radius = f.frame_radius;
  DPEM_RETURN_IF_ERROR(DomainFlagsInto(f.domain, o.IsPrivate(), o.epsilon, o.domain));
  if (!o.IsPrivate()) return OkStatus();
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", f.delta));
  o.delta = f.delta;
  return OkStatus();
}

StatusOr<GmmFitOptions> OptionsFromFlags(FitGmmFlags& f) {
  GmmFitOptions o;
  DPEM_RETURN_IF_ERROR(ParseDomainFlags(f.domain));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--components", f.components, 1));
  if (f.iterations) DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", *f.iterations, 1));
  if (f.iterations.value_or(1) > 100000 || f.components > 100000) {
    return InvalidArgumentError("--iterations and --components: must be <= 100000");
  }
  o.components = static_cast<int>(f.components);
  o.iterations = static_cast<int>(f.iterations.value_or(0));
  StatusOr<CovarianceType> cov = ParseCovarianceType(f.covariance);
  if (!cov.ok()) return InvalidArgumentError("--covariance: " + cov.status().message());
  o.covariance = *cov;
  StatusOr<Estimator> est = ParseEstimator(f.estimator);
  if (!est.ok()) return InvalidArgumentError("--estimator: " + est.status().message());
  o.estimator = *est;
  DPEM_ASSIGN_OR_RETURN(o.epsilon, ParseEpsilonFlag("--epsilon", f.epsilon_text));
  if (f.init) {
    StatusOr<GmmInit> init = ParseGmmInit(*f.init);
    if (!init.ok()) return InvalidArgumentError("--init: " + init.status().message());
    o.init = *init;
  }
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--covariance-floor", f.covariance_floor));
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromThreadsFlag(f.threads));
  o.covariance_floor = f.covariance_floor;
  DPEM_RETURN_IF_ERROR(PrivacyFlagsInto(f, o));
  return o;
}

// "dpem fit gmm: iteration 3/10" rewritten in place on a terminal.
std::function<void(const GmmIterationReport&)> ProgressLine(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [](const GmmIterationReport& r) {
    std::cerr << "\rdpem fit gmm: iteration " << r.iteration << "/" << r.iterations;
    if (std::isfinite(r.mean_log_likelihood)) {
      std::cerr << ", mean log-likelihood (unit ball) " << r.mean_log_likelihood;
    }
    std::cerr << (r.iteration == r.iterations ? "\n" : "") << std::flush;
  };
}

void WarnAboutGuarantee(const GmmFit& fit, bool quiet) {
  if (quiet) return;
  // One line per reason, a seeded private fit's among them (said once).
  for (const std::string& reason : fit.guarantee.void_reasons) {
    std::cerr << "dpem fit gmm: warning: the privacy guarantee is VOID: " << reason << "\n";
  }
}

Status RunFitGmm(FitGmmFlags& f) {
  DPEM_ASSIGN_OR_RETURN(GmmFitOptions options, OptionsFromFlags(f));
  DPEM_RETURN_IF_ERROR(options.Validate());  // Refuses --init kmeans++ if private.
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_RETURN_IF_ERROR(ChargeBudget(f.budget, f.input, options.epsilon, options.delta,
                                    "dpem fit gmm"));
  DPEM_ASSIGN_OR_RETURN(const std::unique_ptr<RowSource> x, OpenRowSource(f.input));
  options.progress = ProgressLine(f.quiet);
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const std::optional<PrivateBounds> bounds,
                        ReleaseAutoDomain(f.domain, *x, f.quiet, "fit gmm", gen, options.domain,
                                          options.epsilon));
  StatusOr<GmmFit> fit = FitGmm(*x, options, gen);
  if (!fit.ok()) return Status(fit.status().code(), f.input + ": " + fit.status().message());
  GmmGuarantee& g = fit->guarantee;
  DPEM_RETURN_IF_ERROR(ComposeBoundsInto(bounds, g.delta, g.accountant, g.ledger, g.epsilon,
                                         g.target_epsilon));
  WarnAboutGuarantee(*fit, f.quiet);
  return WriteGmmModel(f.output, *fit);
}

void AddPrivacyOptions(CLI::App* app, FitGmmFlags& f) {
  app->add_option("--epsilon", f.epsilon_text,
                  "Total privacy budget epsilon (> 0), or inf to fit plain EM without privacy")
      ->required();
  app->add_option("--delta", f.delta, "Total delta, in (0, 1); required for private fits");
  app->add_option("--accountant", f.accountant,
                  "Composition method calibrating the noise: " + AccountantNameList() +
                      " (default: rdp, the tightest)");
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
                  "Radius of the component frames in Mahalanobis units (default 0: sqrt(d) + 2, "
                  "which clips about 0.3% of a Gaussian component's records)");
  AddDomainFlags(app, f.domain, /*allow_from_data=*/true);
  app->add_flag("--unsafe-paper-mechanisms", f.unsafe_paper_mechanisms,
                "Use park2016's Gamma (spherical) or Wishart (full) covariance noise, for "
                "reproducing the paper only. They are NOT differentially private: their noise "
                "is one-sided, so the output's support depends on the data; the model is "
                "marked void");
  app->add_option("--per-release-delta", f.per_release_delta,
                  "delta_i of park2017's parametrisation of Gaussian noise (default 1e-6); "
                  "sets the Laplace/Gaussian noise ratio under LLG");
}

}  // namespace

CLI::App* AddFitParent(CLI::App& root) {
  CLI::App* fit = root.add_subcommand("fit", "Fit a model to data.");
  fit->require_subcommand(1);
  return fit;
}

Command AddFitGmmCommand(CLI::App& fit) {
  auto f = std::make_shared<FitGmmFlags>();
  CLI::App* app = fit.add_subcommand(
      "gmm", "Fit a Gaussian mixture by (differentially private) EM and write a model file.");
  app->add_option("--input", f->input, "Data: .csv (one record per row) or .npy")->required();
  app->add_option("--output", f->output, "Model file to write (JSON)")->required();
  app->add_option("--components", f->components, "Number of components K (>= 1, <= N)")
      ->required();
  app->add_option("--iterations", f->iterations,
                  "Number of EM iterations J (>= 1), fixed. Default: 3 for a private fit "
                  "from the private start, 10 from --init random, 100 for --epsilon inf "
                  "(docs/gmm.md, \"Choosing J\")");
  app->add_option("--covariance", f->covariance, "full, diag or spherical (default full)");
  app->add_option("--estimator", f->estimator,
                  "mle, or map with park2017's priors (default mle)");
  app->add_option("--init", f->init,
                  "Starting point: private (the default for private fits: two noisy releases "
                  "of counts and sums of a data-adaptive partition of the domain, clustered "
                  "by weighted k-means++; it takes 20% of the budget, docs/gmm.md), kmeans++ "
                  "(k-means++ seeding and Lloyd on the records, as scikit-learn's "
                  "GaussianMixture; the default for --epsilon inf; it reads the data without "
                  "noise, so a private fit refuses it) or random (means uniform in the "
                  "domain's ball, never the data)");
  AddPrivacyOptions(app, *f);
  app->add_option("--covariance-floor", f->covariance_floor,
                  "Added to every covariance's diagonal, in unit-ball units (default 1e-6; at "
                  "least 1e-10, so that every log-density stays finite)");
  app->add_option("--seed", f->seed,
                  "Seed a reproducible generator (tests and experiments only; recorded in "
                  "the model). The noise is then reproducible from the seed, so a private "
                  "fit's guarantee is VOID. Default: a CSPRNG keyed by the operating system");
  app->add_flag("--quiet", f->quiet, "No progress line or warnings on stderr");
  AddThreadsOption(app, &f->threads);
  AddBudgetFlags(app, &f->budget);
  return {app, [f] { return RunFitGmm(*f); }};
}

}  // namespace dpem::cli
