// dpem fit kmeans: (private) k-means and the DPLloyd baselines; and the
// score / predict handlers of k-means model files ("dpem-kmeans").
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dpem/data/io.h"
#include "dpem/models/kmeans/kmeans_fit_task.h"
#include "dpem/models/kmeans/kmeans_model_io.h"
#include "fit_flags.h"
#include "internal/file_util.h"
#include "model_commands.h"
#include "shard_input.h"

namespace dpem::cli {
namespace {

struct FitKmeansFlags {
  FitFlags fit;
  std::string method;
  long long components = 0;
  std::optional<long long> iterations;  // Unset: KmeansFitOptions::ResolvedIterations().
  std::optional<std::string> init;      // Unset: KmeansFitOptions::ResolvedInit().
};

// fit kmeans's line in dpem fit --help, and the help of the shared flags
// whose meaning is its own; no --data-norm-from-data.
FitFlagTable Table() {
  return {.description =
              "Fit k-means by (differentially private) Lloyd iterations and write "
              "a model file (park2016 Sec. 6; DPLloyd of Su et al. 2016).",
          .epsilon_help = "Total privacy budget epsilon (> 0), or inf for plain Lloyd",
          .delta_help =
              "Total delta in (0, 1): required by cdp-gauss, cdp-laplace and "
              "dplloyd-zcdp; not used by dplloyd (pure epsilon-DP)",
          .accountant_help = "Composition of cdp-gauss and cdp-laplace: " + AccountantNameList() +
                             " (default rdp)",
          .data_norm_from_data = false};
}

Status PrivacyFlagsInto(FitKmeansFlags& f, KmeansFitOptions& o) {
  DPEM_RETURN_IF_ERROR(DomainFromFlags(f.fit, o.IsPrivate(), o.epsilon, o.domain));
  if (f.fit.accountant) {
    if (o.method == KmeansMethod::kDplloyd || o.method == KmeansMethod::kDplloydZcdp) {
      return InvalidArgumentError("--accountant: the DPLloyd methods fix their composition "
                                  "(dplloyd: linear, dplloyd-zcdp: zcdp)");
    }
    DPEM_ASSIGN_OR_RETURN(o.accountant, AccountantFromFlags(f.fit, o.accountant));
  }
  if (!o.IsPrivate()) return OkStatus();
  const std::optional<double>& delta = f.fit.delta;
  if (delta) DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", *delta));
  if (KmeansMethodNeedsDelta(o.method) && !delta) {
    return InvalidArgumentError("--delta: required by --method " +
                                std::string(KmeansMethodName(o.method)));
  }
  if (delta) o.delta = *delta;
  return OkStatus();
}

StatusOr<KmeansFitOptions> OptionsFromFlags(FitKmeansFlags& f) {
  KmeansFitOptions o;
  DPEM_ASSIGN_OR_RETURN(o.method, ParseFlag("--method", f.method, ParseKmeansMethod));
  DPEM_RETURN_IF_ERROR(
      ComponentsAndIterationsInto(f.components, f.iterations, o.components, o.iterations));
  DPEM_ASSIGN_OR_RETURN(o.epsilon, EpsilonFromFlags(f.fit));
  if (f.init) {
    DPEM_ASSIGN_OR_RETURN(o.init, ParseFlag("--init", *f.init, ParseKmeansInit));
  }
  DPEM_ASSIGN_OR_RETURN(o.engine, EngineFromFlags(f.fit));
  DPEM_RETURN_IF_ERROR(PrivacyFlagsInto(f, o));
  return o;
}

// A note that dplloyd does not use --delta, and the fit's progress line:
// each iteration's NICV.
void Prepare(const FitFlagTable& table, const FitKmeansFlags& f, KmeansFitOptions& o, FitRequest&) {
  if (!f.fit.quiet && o.method == KmeansMethod::kDplloyd && f.fit.delta && o.IsPrivate()) {
    std::cerr << "dpem fit kmeans: note: dplloyd is pure epsilon-DP; --delta is not used\n";
  }
  o.progress = ReportPrinter(table, f.fit, "NICV (unit ball)", &KmeansIterationReport::nicv);
}

// The options of fit kmeans besides the shared ones.
void AddOptions(CLI::App* app, FitKmeansFlags& f) {
  app->add_option("--method", f.method,
                  "cdp-gauss (counts and sums as one Gaussian release), cdp-laplace (Laplace, "
                  "tight composition), dplloyd (Su et al., linear composition, pure DP) or "
                  "dplloyd-zcdp (park2017's zCDP variant)")
      ->required();
  app->add_option("--components", f.components, "Number of clusters K (>= 1, <= N)")
      ->required();
  app->add_option("--iterations", f.iterations,
                  "Number of Lloyd iterations J (>= 1), fixed. Default: from the private "
                  "start, 1 if the centres' noise is large (few records per cluster, small "
                  "epsilon) and 3 otherwise; 10 from the random start (the DPLloyd "
                  "baselines); 100 for --epsilon inf (docs/kmeans.md, \"Choosing J\")");
  app->add_option("--init", f.init,
                  "Seeding: private (the default for private cdp-gauss and cdp-laplace fits: "
                  "two noisy releases of counts and sums of a data-adaptive partition of the "
                  "domain, clustered by weighted k-means++; it takes 20% of the budget, "
                  "docs/kmeans.md), kmeans++ (greedy k-means++ on the records, as "
                  "scikit-learn's KMeans; the default for --epsilon inf; it reads the data "
                  "without noise, so a private fit refuses it) or random (uniform in the "
                  "domain's ball, never the data; the default of the DPLloyd baselines)");
}

}  // namespace

Status ScoreKmeansModel(const ModelCommandFlags& f) {
  DPEM_ASSIGN_OR_RETURN(const KmeansFit fit, KmeansModelIo::Read(f.model));
  return ScoreData(f, fit.centres.cols(), "nicv", "normalised intra-cluster variance (NICV)",
                   [&](const DataMatrix& x) { return Nicv(fit.centres, x, fit.domain.center); });
}

Status PredictKmeansModel(const ModelCommandFlags& f) {
  if (f.proba) return InvalidArgumentError("--proba: does not apply to k-means models");
  if (!f.output.empty() && IsCliRank0()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  DPEM_ASSIGN_OR_RETURN(const KmeansFit fit, KmeansModelIo::Read(f.model));
  const auto per_record = [&](const DataMatrix& x) -> StatusOr<DataMatrix> {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXi local, NearestCentreLabels(fit.centres, x));
    return DataMatrix(local.cast<double>());
  };
  return WritePerRecord(f, fit.centres.cols(), per_record, [&](const DataMatrix& all) {
    const Eigen::VectorXi labels = all.col(0).cast<int>();
    if (!f.output.empty()) return WriteMatrix(f.output, DataMatrix(labels.cast<double>()));
    std::string out;
    for (Eigen::Index i = 0; i < labels.size(); ++i) out += std::to_string(labels(i)) + "\n";
    std::cout << out;
    return OkStatus();
  });
}

Command AddFitKmeansCommand(CLI::App& fit) {
  return AddModelFitCommand(fit, "kmeans", Table(), AddOptions, OptionsFromFlags, Prepare,
                            MakeKmeansFitTask);
}

}  // namespace dpem::cli
