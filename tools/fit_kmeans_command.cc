// dpem fit kmeans: (private) k-means and the DPLloyd baselines; and the
// score / predict handlers of k-means model files ("dpem-kmeans").
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "budget_flags.h"
#include "domain_flags.h"
#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/models/kmeans/kmeans_model_io.h"
#include "internal/file_util.h"
#include "model_commands.h"

namespace dpem::cli {
namespace {

struct FitKmeansFlags {
  std::string input;
  std::string output;
  std::string method;
  long long components = 0;
  std::optional<long long> iterations;  // Unset: KmeansFitOptions::ResolvedIterations().
  std::string epsilon_text;
  std::optional<std::string> init;  // Unset: KmeansFitOptions::ResolvedInit().
  std::optional<double> delta;
  std::optional<std::string> accountant;
  DomainFlags domain;
  std::optional<std::string> seed;
  bool quiet = false;
  BudgetFlags budget;
  int threads = 0;
};

Status PrivacyFlagsInto(const FitKmeansFlags& f, KmeansFitOptions& o) {
  DPEM_RETURN_IF_ERROR(DomainFlagsInto(f.domain, o.IsPrivate(), o.epsilon, o.domain));
  if (f.accountant) {
    if (o.method == KmeansMethod::kDplloyd || o.method == KmeansMethod::kDplloydZcdp) {
      return InvalidArgumentError("--accountant: the DPLloyd methods fix their composition "
                                  "(dplloyd: linear, dplloyd-zcdp: zcdp)");
    }
    DPEM_ASSIGN_OR_RETURN(o.accountant, ParseAccountantFlag("--accountant", *f.accountant));
  }
  if (!o.IsPrivate()) return OkStatus();
  if (f.delta) DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", *f.delta));
  if (KmeansMethodNeedsDelta(o.method) && !f.delta) {
    return InvalidArgumentError("--delta: required by --method " +
                                std::string(KmeansMethodName(o.method)));
  }
  if (f.delta) o.delta = *f.delta;
  return OkStatus();
}

StatusOr<KmeansFitOptions> OptionsFromFlags(FitKmeansFlags& f) {
  KmeansFitOptions o;
  DPEM_RETURN_IF_ERROR(ParseDomainFlags(f.domain));
  StatusOr<KmeansMethod> m = ParseKmeansMethod(f.method);
  if (!m.ok()) return InvalidArgumentError("--method: " + m.status().message());
  o.method = *m;
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--components", f.components, 1));
  if (f.iterations) DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", *f.iterations, 1));
  if (f.iterations.value_or(1) > 100000 || f.components > 100000) {
    return InvalidArgumentError("--iterations and --components: must be <= 100000");
  }
  o.components = static_cast<int>(f.components);
  o.iterations = static_cast<int>(f.iterations.value_or(0));
  DPEM_ASSIGN_OR_RETURN(o.epsilon, ParseEpsilonFlag("--epsilon", f.epsilon_text));
  if (f.init) {
    StatusOr<KmeansInit> init = ParseKmeansInit(*f.init);
    if (!init.ok()) return InvalidArgumentError("--init: " + init.status().message());
    o.init = *init;
  }
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromThreadsFlag(f.threads));
  DPEM_RETURN_IF_ERROR(PrivacyFlagsInto(f, o));
  return o;
}

// "dpem fit kmeans: iteration 3/10" rewritten in place on a terminal.
std::function<void(const KmeansIterationReport&)> ProgressLine(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [](const KmeansIterationReport& r) {
    std::cerr << "\rdpem fit kmeans: iteration " << r.iteration << "/" << r.iterations;
    if (std::isfinite(r.nicv)) std::cerr << ", NICV (unit ball) " << r.nicv;
    std::cerr << (r.iteration == r.iterations ? "\n" : "") << std::flush;
  };
}

void Warn(const FitKmeansFlags& f, const KmeansFit& fit) {
  if (f.quiet) return;
  if (fit.method == KmeansMethod::kDplloyd && f.delta && fit.guarantee.is_private) {
    std::cerr << "dpem fit kmeans: note: dplloyd is pure epsilon-DP; --delta is not used\n";
  }
  // One line per reason, a seeded private fit's among them (said once).
  for (const std::string& reason : fit.guarantee.void_reasons) {
    std::cerr << "dpem fit kmeans: warning: the privacy guarantee is VOID: " << reason << "\n";
  }
}

Status RunFitKmeans(FitKmeansFlags& f) {
  DPEM_ASSIGN_OR_RETURN(KmeansFitOptions options, OptionsFromFlags(f));
  DPEM_RETURN_IF_ERROR(options.Validate());
  DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  // dplloyd is pure epsilon-DP: it spends no delta even when --delta is given.
  const double delta = KmeansMethodNeedsDelta(options.method) ? options.delta : 0.0;
  DPEM_RETURN_IF_ERROR(ChargeBudget(f.budget, f.input, options.epsilon, delta,
                                    "dpem fit kmeans"));
  DPEM_ASSIGN_OR_RETURN(const std::unique_ptr<RowSource> x, OpenRowSource(f.input));
  options.progress = ProgressLine(f.quiet);
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  DPEM_ASSIGN_OR_RETURN(const std::optional<PrivateBounds> bounds,
                        ReleaseAutoDomain(f.domain, *x, f.quiet, "fit kmeans", gen, options.domain,
                                          options.epsilon));
  StatusOr<KmeansFit> fit = FitKmeans(*x, options, gen);
  if (!fit.ok()) return Status(fit.status().code(), f.input + ": " + fit.status().message());
  KmeansGuarantee& g = fit->guarantee;
  DPEM_RETURN_IF_ERROR(ComposeBoundsInto(bounds, g.delta, g.accountant, g.ledger, g.epsilon,
                                         g.target_epsilon));
  Warn(f, *fit);
  return WriteKmeansModel(f.output, *fit);
}

struct ModelAndData {
  KmeansFit fit;
  DataMatrix x;
};

StatusOr<ModelAndData> Load(const ModelCommandFlags& f) {
  ModelAndData md;
  DPEM_ASSIGN_OR_RETURN(md.fit, ReadKmeansModel(f.model));
  DPEM_ASSIGN_OR_RETURN(md.x, ReadMatrix(f.input));
  if (md.x.cols() != md.fit.centres.cols()) {
    return InvalidArgumentError(f.input + ": the data has " + std::to_string(md.x.cols()) +
                                " columns but the model " + f.model + " has dimension " +
                                std::to_string(md.fit.centres.cols()));
  }
  return md;
}

}  // namespace

Command AddFitKmeansCommand(CLI::App& fit) {
  auto f = std::make_shared<FitKmeansFlags>();
  CLI::App* app = fit.add_subcommand(
      "kmeans", "Fit k-means by (differentially private) Lloyd iterations and write a model "
                "file (park2016 Sec. 6; DPLloyd of Su et al. 2016).");
  app->add_option("--method", f->method,
                  "cdp-gauss (counts and sums as one Gaussian release), cdp-laplace (Laplace, "
                  "tight composition), dplloyd (Su et al., linear composition, pure DP) or "
                  "dplloyd-zcdp (park2017's zCDP variant)")
      ->required();
  app->add_option("--input", f->input, "Data: .csv (one record per row) or .npy")->required();
  app->add_option("--output", f->output, "Model file to write (JSON)")->required();
  app->add_option("--components", f->components, "Number of clusters K (>= 1, <= N)")
      ->required();
  app->add_option("--iterations", f->iterations,
                  "Number of Lloyd iterations J (>= 1), fixed. Default: 3 for a private fit "
                  "from the private start, 10 from the random start (the DPLloyd "
                  "baselines), 100 for --epsilon inf (docs/kmeans.md)");
  app->add_option("--epsilon", f->epsilon_text,
                  "Total privacy budget epsilon (> 0), or inf for plain Lloyd")
      ->required();
  app->add_option("--init", f->init,
                  "Seeding: private (the default for private cdp-gauss and cdp-laplace fits: "
                  "two noisy releases of counts and sums of a data-adaptive partition of the "
                  "domain, clustered by weighted k-means++; it takes 20% of the budget, "
                  "docs/kmeans.md), kmeans++ (greedy k-means++ on the records, as "
                  "scikit-learn's KMeans; the default for --epsilon inf; it reads the data "
                  "without noise, so a private fit refuses it) or random (uniform in the "
                  "domain's ball, never the data; the default of the DPLloyd baselines)");
  app->add_option("--delta", f->delta,
                  "Total delta in (0, 1): required by cdp-gauss, cdp-laplace and dplloyd-zcdp; "
                  "not used by dplloyd (pure epsilon-DP)");
  app->add_option("--accountant", f->accountant,
                  "Composition of cdp-gauss and cdp-laplace: " + AccountantNameList() +
                      " (default rdp)");
  AddDomainFlags(app, f->domain, /*allow_from_data=*/false);
  app->add_option("--seed", f->seed,
                  "Seed a reproducible generator (tests and experiments only; recorded in "
                  "the model). The noise is then reproducible from the seed, so a private "
                  "fit's guarantee is VOID. Default: a CSPRNG keyed by the operating system");
  app->add_flag("--quiet", f->quiet, "No progress line or warnings on stderr");
  AddThreadsOption(app, &f->threads);
  AddBudgetFlags(app, &f->budget);
  return {app, [f] { return RunFitKmeans(*f); }};
}

Status ScoreKmeansModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const ModelAndData md, Load(f));
  DPEM_ASSIGN_OR_RETURN(const double nicv, Nicv(md.fit.centres, md.x, md.fit.domain.center));
  if (f.json) {
    PrintJson({{"nicv", nicv}, {"n", md.x.rows()}});
  } else {
    std::cout << "normalised intra-cluster variance (NICV): " << FormatNumber(nicv) << " ("
              << md.x.rows() << " records, original units)\n";
  }
  return OkStatus();
}

Status PredictKmeansModel(const ModelCommandFlags& f) {
  if (f.proba) return InvalidArgumentError("--proba: does not apply to k-means models");
  if (!f.output.empty()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const ModelAndData md, Load(f));
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXi labels, NearestCentreLabels(md.fit.centres, md.x));
  if (!f.output.empty()) return WriteMatrix(f.output, DataMatrix(labels.cast<double>()));
  std::string out;
  for (Eigen::Index i = 0; i < labels.size(); ++i) out += std::to_string(labels(i)) + "\n";
  std::cout << out;
  return OkStatus();
}

}  // namespace dpem::cli
