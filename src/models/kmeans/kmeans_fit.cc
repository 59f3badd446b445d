// The (private) k-means fit: see dpem/models/kmeans/kmeans.h and docs/kmeans.md.
// The fit and its iterations; the release plan and the releases
// (models/kmeans/kmeans_release_plan.h) and the options (kmeans_options.cc)
// have files of their own.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "dpem/data/row_source.h"
#include "dpem/models/kmeans/kmeans.h"
#include "pipeline/fit_steps.h"
#include "internal/linear_algebra.h"
#include "models/kmeans/kmeans_release_plan.h"
#include "models/start/kmeans_plusplus.h"
#include "models/start/private_start.h"

namespace dpem {
namespace {

// Linear composition of Laplace releases does not depend on delta (each is
// (1/z, 0)-DP); ComputeEpsilon still needs some delta in (0, 1).
constexpr double kDeltaUnusedByPureDp = 0.5;

// Post-processing: mu_k = S~_k / n~_k projected onto the unit ball (every
// record lies in it, so every true centroid does), or the previous centre if
// n~_k < threshold (the empty-cluster rule of KmeansFitOptions) or if the
// quotient overflows (so the next pass never sees a non-finite centre).
void UpdateCentres(const KmeansStatistics& s, double threshold, Eigen::MatrixXd& centres) {
  for (Eigen::Index c = 0; c < centres.rows(); ++c) {
    if (!(s.counts(c) >= threshold)) continue;
    Eigen::RowVectorXd mu = s.sums.row(c) / s.counts(c);
    if (!mu.allFinite()) continue;
    internal::ProjectOntoUnitBall(mu);
    centres.row(c) = mu;
  }
}

// The caller's public centres mapped to the unit ball and clipped to it; or
// by o.ResolvedInit(): the private start (one release through plan->start,
// recorded in `ledger`), k-means++ on the unit-ball records (plain Lloyd), or
// centres uniform in the unit ball drawn from the generator only.
StatusOr<Eigen::MatrixXd> InitialCentres(const KmeansFitOptions& o, const DataDomain& domain,
                                         const RowSource& unit,
                                         const internal::KmeansReleasePlan* plan,
                                         const Engine& engine, Generator& gen,
                                         PrivacyLedger& ledger) {
  const Eigen::Index d = unit.cols();
  if (o.initial_centres.size() != 0) {
    DPEM_ASSIGN_OR_RETURN(const DataMatrix mapped, MapToUnitBall(o.initial_centres, domain,
                                                                 nullptr));
    return Eigen::MatrixXd(mapped);
  }
  if (plan != nullptr && plan->start) {
    DPEM_ASSIGN_OR_RETURN(const internal::StartClusters clusters,
                          internal::PrivateStart(unit, *plan->start, engine, gen, ledger));
    return clusters.centres;
  }
  if (o.ResolvedInit() == KmeansInit::kKmeansPlusPlus) {
    return internal::KmeansPlusPlusSeeds(unit, o.components, engine, gen);
  }
  return internal::UniformInUnitBall(o.components, d, gen);
}

// Row sources are checked for non-finite values when they are opened.
Status ValidateFitData(const RowSource& x, const KmeansFitOptions& o) {
  DPEM_RETURN_IF_ERROR(internal::CheckComponentsFitData(x, o.components));
  if (o.initial_centres.size() != 0 && o.initial_centres.cols() != x.cols()) {
    return InvalidArgumentError("the initial centres have " +
                                std::to_string(o.initial_centres.cols()) +
                                " coordinates but the data has " + std::to_string(x.cols()) +
                                " columns");
  }
  return OkStatus();
}

// Re-accounts the fit's own ledger: exactly the budgeted releases happened
// and the accountant certifies at most the target.
Status Reaccount(const KmeansFitOptions& o, const internal::KmeansReleasePlan& plan,
                 KmeansGuarantee& g) {
  const std::size_t expected =
      static_cast<std::size_t>(o.iterations) * static_cast<std::size_t>(plan.releases_per_iteration) +
      (plan.start ? internal::kPrivateStartReleases : 0);
  const bool pure = o.method == KmeansMethod::kDplloyd;
  return internal::Reaccount(expected, pure ? kDeltaUnusedByPureDp : o.delta, g);
}

// The guarantee a fit with options `o` starts from (StartGuarantee); DPLloyd
// is pure epsilon-DP.
KmeansGuarantee NewGuarantee(const KmeansFitOptions& o) {
  KmeansGuarantee g;
  const bool pure = o.method == KmeansMethod::kDplloyd;
  StartGuarantee(o.IsPrivate(), o.epsilon, pure ? 0.0 : o.delta, o.EffectiveAccountant(), g);
  return g;
}

// Plans the releases of a private fit of n records in d dimensions
// (MakeKmeansReleasePlan), writes their noise into the guarantee `g` and
// checks them before any record is read (CheckKmeansReleases).
StatusOr<internal::KmeansReleasePlan> PlanPrivateFit(const KmeansFitOptions& o, Eigen::Index n,
                                                     Eigen::Index d, KmeansGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(internal::KmeansReleasePlan plan,
                        internal::MakeKmeansReleasePlan(o, n, d));
  g.noise_multipliers = plan.multipliers;
  DPEM_RETURN_IF_ERROR(internal::CheckKmeansReleases(plan, o.components, d));
  return plan;
}

// J Lloyd iterations on unit-ball data, releasing through `plan` if set.
Status RunIterations(const RowSource& unit, const Engine& engine, const KmeansFitOptions& o,
                     const internal::KmeansReleasePlan* plan, Generator& gen,
                     Eigen::MatrixXd& centres, PrivacyLedger& ledger) {
  const double threshold =
      plan ? std::max(o.min_cluster_count, plan->SumsNoiseStddev(unit.cols()))
           : o.min_cluster_count;
  for (int it = 1; it <= o.iterations; ++it) {
    DPEM_ASSIGN_OR_RETURN(KmeansStatistics s, ComputeKmeansStatistics(centres, unit, engine));
    KmeansIterationReport report{it, o.iterations, std::numeric_limits<double>::quiet_NaN()};
    if (plan) {
      DPEM_RETURN_IF_ERROR(internal::PrivatizeKmeansStatistics(s, *plan, it, gen, ledger));
    } else {
      report.nicv = s.sse / static_cast<double>(unit.rows());
    }
    UpdateCentres(s, threshold, centres);
    if (o.progress) o.progress(report);
  }
  return OkStatus();
}

}  // namespace

StatusOr<KmeansFit> FitKmeans(const DataMatrix& x, const KmeansFitOptions& options,
                              Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  return FitKmeans(source, options, gen);
}

StatusOr<KmeansFit> FitKmeans(const RowSource& x, const KmeansFitOptions& requested,
                              Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(KmeansFitOptions options, internal::ResolvedFitOptions(requested));
  if (requested.iterations == 0 && options.IsPrivate() && options.StartsPrivately()) {
    DPEM_ASSIGN_OR_RETURN(options.iterations,
                          internal::DefaultPrivateStartIterations(options, x.rows(), x.cols()));
  }
  DPEM_RETURN_IF_ERROR(ValidateFitData(x, options));
  KmeansFit fit;
  DPEM_ASSIGN_OR_RETURN(internal::FitStart start,
                        internal::BeginModelFit(x, options, NewGuarantee(options), gen, fit));
  const Engine& engine = start.engine;
  const UnitBallRowSource& unit = start.unit;
  std::optional<internal::KmeansReleasePlan> plan;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(plan, PlanPrivateFit(options, x.rows(), x.cols(), fit.guarantee));
  }
  const internal::KmeansReleasePlan* plan_or_null = plan ? &*plan : nullptr;
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd centres,
                        InitialCentres(options, fit.domain, unit, plan_or_null, engine, gen,
                                       fit.guarantee.ledger));
  DPEM_RETURN_IF_ERROR(RunIterations(unit, engine, options, plan_or_null, gen, centres,
                                     fit.guarantee.ledger));
  if (plan) DPEM_RETURN_IF_ERROR(Reaccount(options, *plan, fit.guarantee));
  fit.centres = MapFromUnitBall(DataMatrix(centres), fit.domain);
  fit.method = options.method;
  fit.n = x.rows();
  fit.iterations = options.iterations;
  fit.init = options.initial_centres.size() != 0 ? KmeansInit::kRandom : options.ResolvedInit();
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
