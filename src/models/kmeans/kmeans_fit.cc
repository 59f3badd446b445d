// The (private) k-means fit: see dpem/models/kmeans/kmeans.h and docs/kmeans.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "dpem/accounting/calibration.h"
#include "dpem/data/row_source.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/kmeans/kmeans.h"
#include "pipeline/fit_steps.h"
#include "internal/linear_algebra.h"
#include "models/start/kmeans_plusplus.h"
#include "models/start/private_start.h"

namespace dpem {
namespace {

constexpr KmeansMethod kAllMethods[] = {KmeansMethod::kCdpGauss, KmeansMethod::kCdpLaplace,
                                        KmeansMethod::kDplloyd, KmeansMethod::kDplloydZcdp};

// Linear composition of Laplace releases does not depend on delta (each is
// (1/z, 0)-DP); ComputeEpsilon still needs some delta in (0, 1).
constexpr double kDeltaUnusedByPureDp = 0.5;

// How one iteration releases its statistics.
struct KmeansPlan {
  KmeansMethod method = KmeansMethod::kCdpGauss;
  // Noise multiplier of each release kind, in pattern order (one kind for
  // the joint releases, counts then sums for kCdpLaplace).
  std::vector<double> multipliers;
  int releases_per_iteration = 1;
  double sensitivity_joint = 0.0;  // Joint releases: L2 (Gaussian) or L1.
  // The private start's release (models/start/private_start.h), if it starts so.
  std::optional<internal::PrivateStartPlan> start;

  // Standard deviation of the noise on one coordinate of a sum.
  double SumsNoiseStddev(Eigen::Index d) const {
    if (method == KmeansMethod::kCdpGauss) return multipliers[0] * sensitivity_joint;
    const double b = method == KmeansMethod::kCdpLaplace
                         ? multipliers[1] * KmeansSumsL1Sensitivity(d)
                         : multipliers[0] * sensitivity_joint;
    return std::sqrt(2.0) * b;  // Laplace(b) has variance 2 b^2.
  }
};

std::string IterationLabel(int iteration, const std::string& what) {
  return "iteration " + std::to_string(iteration) + " / " + what;
}

// cdp-laplace: equal Laplace scale b on counts and sums, i.e. noise
// multipliers in the ratio of the inverse sensitivities: counts sqrt(d),
// sums 1 (times 1/eps_i). At a fixed zCDP cost ((2/b_n)^2 + (2 sqrt(d)/b_1)^2)/2
// the centre's noise d b_1^2 + ||mu||^2 b_n^2 is smallest at
// b_n = b_1 / ||mu||^(1/2); equal scales are optimal for the worst case
// ||mu|| = 1 (docs/kmeans.md).
ReleasePattern LaplacePattern(Eigen::Index d) {
  return {"kmeans-laplace",
          {{MechanismKind::kLaplace, 1, std::sqrt(static_cast<double>(d)), "counts"},
           {MechanismKind::kLaplace, 1, 1.0, "sums"}}};
}

StatusOr<KmeansPlan> MakePlan(const KmeansFitOptions& o, Eigen::Index n, Eigen::Index d) {
  KmeansPlan plan;
  plan.method = o.method;
  if (o.method == KmeansMethod::kDplloyd) {
    // Su et al. 2016 (DPLloyd): each of the J iterations gets eps/J (linear
    // composition), noise Lap(Delta_1 J / eps) on every count and sum
    // coordinate (park2016 Sec. 6: Lap((d+1)J/eps) for their domain).
    plan.sensitivity_joint = KmeansJointL1Sensitivity(d);
    plan.multipliers = {static_cast<double>(o.iterations) / o.epsilon *
                        (1.0 + kDplloydRoundingMargin)};
    return plan;
  }
  CalibrationOptions c;
  c.epsilon = o.epsilon;
  c.delta = o.delta;
  c.iterations = o.iterations;
  c.accountant = o.EffectiveAccountant();
  const bool private_start = o.initial_centres.size() == 0 &&
                             o.ResolvedInit() == KmeansInit::kPrivate;
  if (private_start) {
    c.start = internal::PrivateStartPattern(NoiseSampling::kDiscrete);
    c.start_share = internal::kPrivateStartShare;
  }
  if (o.method == KmeansMethod::kCdpLaplace) {
    c.pattern = LaplacePattern(d);
    plan.releases_per_iteration = 2;
  } else {
    const MechanismKind m = o.method == KmeansMethod::kCdpGauss ? MechanismKind::kGaussian
                                                                : MechanismKind::kLaplace;
    c.pattern = {"kmeans-joint", {{m, 1, 1.0, "counts and sums"}}};
    plan.sensitivity_joint = o.method == KmeansMethod::kCdpGauss
                                 ? kKmeansJointL2Sensitivity
                                 : KmeansJointL1Sensitivity(d);
  }
  DPEM_ASSIGN_OR_RETURN(const CalibrationResult cal, Calibrate(c));
  plan.multipliers = cal.noise_multipliers;
  if (private_start) {
    DPEM_ASSIGN_OR_RETURN(plan.start, internal::MakePrivateStartPlan(
                                          NoiseSampling::kDiscrete, cal.start_noise_multipliers,
                                          o.components, n));
  }
  return plan;
}

// Replaces the exact statistics by their release; drops the exact sse.
// The releases of iteration `it` in d dimensions: cdp-laplace's counts and
// sums, or one joint release of both.
NoiseSpec CountsSpec(const KmeansPlan& plan, int it) {
  return {MechanismKind::kLaplace, kKmeansCountsL1Sensitivity, plan.multipliers[0],
          IterationLabel(it, "counts")};
}
NoiseSpec SumsSpec(const KmeansPlan& plan, int it, Eigen::Index d) {
  return {MechanismKind::kLaplace, KmeansSumsL1Sensitivity(d), plan.multipliers[1],
          IterationLabel(it, "sums")};
}
NoiseSpec JointSpec(const KmeansPlan& plan, int it) {
  const MechanismKind m = plan.method == KmeansMethod::kCdpGauss ? MechanismKind::kGaussian
                                                                 : MechanismKind::kLaplace;
  return {m, plan.sensitivity_joint, plan.multipliers[0], IterationLabel(it, "counts and sums")};
}

Status Privatize(KmeansStatistics& s, const KmeansPlan& plan, int it, Generator& gen,
                 PrivacyLedger& ledger) {
  s.sse = std::numeric_limits<double>::quiet_NaN();
  if (plan.method == KmeansMethod::kCdpLaplace) {
    DPEM_RETURN_IF_ERROR(ReleaseVector(s.counts, CountsSpec(plan, it), gen, ledger));
    return ReleaseMatrix(s.sums, SumsSpec(plan, it, s.sums.cols()), gen, ledger);
  }
  return internal::ReleaseCountsAndSums(s, JointSpec(plan, it), gen, ledger);
}

// Checks one iteration's releases for K centres in d dimensions on public
// values alone, drawing nothing, before the data is read: a release that
// cannot be made fails there, not after a pass (review finding).
Status CheckReleases(const KmeansPlan& plan, Eigen::Index k, Eigen::Index d) {
  if (plan.start) DPEM_RETURN_IF_ERROR(internal::CheckPrivateStart(*plan.start, d));
  if (plan.method == KmeansMethod::kCdpLaplace) {
    DPEM_RETURN_IF_ERROR(CheckRelease(CountsSpec(plan, 1), k));
    return CheckRelease(SumsSpec(plan, 1, d), k * d);
  }
  return CheckRelease(JointSpec(plan, 1), k + k * d);
}

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
                                         const RowSource& unit, const KmeansPlan* plan,
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
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (x.rows() < o.components) {
    return InvalidArgumentError("components K = " + std::to_string(o.components) +
                                " exceeds the number of records N = " +
                                std::to_string(x.rows()));
  }
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
Status Reaccount(const KmeansFitOptions& o, const KmeansPlan& plan, KmeansGuarantee& g) {
  const std::size_t expected =
      static_cast<std::size_t>(o.iterations) * static_cast<std::size_t>(plan.releases_per_iteration) +
      (plan.start ? internal::kPrivateStartReleases : 0);
  const bool pure = o.method == KmeansMethod::kDplloyd;
  return internal::Reaccount(expected, pure ? kDeltaUnusedByPureDp : o.delta, g);
}

KmeansGuarantee NewGuarantee(const KmeansFitOptions& o) {
  KmeansGuarantee g;
  const bool pure = o.method == KmeansMethod::kDplloyd;
  StartGuarantee(o.IsPrivate(), o.epsilon, pure ? 0.0 : o.delta, o.EffectiveAccountant(), g);
  return g;
}

// J Lloyd iterations on unit-ball data, releasing through `plan` if set.
Status RunIterations(const RowSource& unit, const Engine& engine, const KmeansFitOptions& o,
                     const KmeansPlan* plan, Generator& gen, Eigen::MatrixXd& centres,
                     PrivacyLedger& ledger) {
  const double threshold =
      plan ? std::max(o.min_cluster_count, plan->SumsNoiseStddev(unit.cols()))
           : o.min_cluster_count;
  for (int it = 1; it <= o.iterations; ++it) {
    DPEM_ASSIGN_OR_RETURN(KmeansStatistics s, ComputeKmeansStatistics(centres, unit, engine));
    KmeansIterationReport report{it, o.iterations, std::numeric_limits<double>::quiet_NaN()};
    if (plan) {
      DPEM_RETURN_IF_ERROR(Privatize(s, *plan, it, gen, ledger));
    } else {
      report.nicv = s.sse / static_cast<double>(unit.rows());
    }
    UpdateCentres(s, threshold, centres);
    if (o.progress) o.progress(report);
  }
  return OkStatus();
}

}  // namespace

std::string_view KmeansMethodName(KmeansMethod method) {
  switch (method) {
    case KmeansMethod::kCdpGauss: return "cdp-gauss";
    case KmeansMethod::kCdpLaplace: return "cdp-laplace";
    case KmeansMethod::kDplloyd: return "dplloyd";
    case KmeansMethod::kDplloydZcdp: return "dplloyd-zcdp";
  }
  return "unknown";
}

StatusOr<KmeansMethod> ParseKmeansMethod(std::string_view name) {
  for (KmeansMethod m : kAllMethods) {
    if (name == KmeansMethodName(m)) return m;
  }
  return InvalidArgumentError("unknown k-means method '" + std::string(name) +
                              "' (accepted: cdp-laplace, cdp-gauss, dplloyd, dplloyd-zcdp)");
}

bool KmeansMethodNeedsDelta(KmeansMethod method) { return method != KmeansMethod::kDplloyd; }

double KmeansSumsL1Sensitivity(Eigen::Index dimension) {
  return 2.0 * std::sqrt(static_cast<double>(dimension));
}

double KmeansJointL1Sensitivity(Eigen::Index dimension) {
  return kKmeansCountsL1Sensitivity + KmeansSumsL1Sensitivity(dimension);
}

AccountantKind KmeansFitOptions::EffectiveAccountant() const {
  if (method == KmeansMethod::kDplloyd) return AccountantKind::kLinear;
  if (method == KmeansMethod::kDplloydZcdp) return AccountantKind::kZcdp;
  return accountant;
}

std::string_view KmeansInitName(KmeansInit init) {
  switch (init) {
    case KmeansInit::kRandom: return "random";
    case KmeansInit::kKmeansPlusPlus: return "kmeans++";
    case KmeansInit::kPrivate: return "private";
  }
  return "unknown";
}

StatusOr<KmeansInit> ParseKmeansInit(std::string_view name) {
  for (KmeansInit i : {KmeansInit::kRandom, KmeansInit::kKmeansPlusPlus, KmeansInit::kPrivate}) {
    if (name == KmeansInitName(i)) return i;
  }
  return InvalidArgumentError("unknown seeding '" + std::string(name) +
                              "' (accepted: random, kmeans++, private)");
}

bool KmeansMethodHasPrivateStart(KmeansMethod method) {
  return method == KmeansMethod::kCdpGauss || method == KmeansMethod::kCdpLaplace;
}

int KmeansFitOptions::ResolvedIterations() const {
  if (iterations > 0) return iterations;
  return DefaultIterations(IsPrivate(),
                           initial_centres.size() == 0 && ResolvedInit() == KmeansInit::kPrivate);
}

KmeansInit KmeansFitOptions::ResolvedInit() const {
  if (init) return *init;
  if (!IsPrivate()) return KmeansInit::kKmeansPlusPlus;
  return KmeansMethodHasPrivateStart(method) && PrivateStartByDefault(components)
             ? KmeansInit::kPrivate
             : KmeansInit::kRandom;
}

Status KmeansFitOptions::Validate() const {
  if (components < 1) return InvalidArgumentError("components K must be >= 1");
  if (iterations < 0) {
    return InvalidArgumentError("iterations J must be >= 1 (or 0 for the default)");
  }
  if (!(epsilon > 0.0)) {
    return InvalidArgumentError("epsilon must be > 0 (or infinity for non-private Lloyd)");
  }
  if (!(min_cluster_count > 0.0 && std::isfinite(min_cluster_count))) {
    return InvalidArgumentError("minimum cluster count must be finite and > 0");
  }
  if (initial_centres.size() != 0 &&
      (initial_centres.rows() != components || !initial_centres.allFinite())) {
    return InvalidArgumentError("initial centres must be K finite rows");
  }
  if (init == KmeansInit::kPrivate && !IsPrivate()) {
    return InvalidArgumentError(
        "the private start needs a private fit (a finite epsilon); plain Lloyd seeds by "
        "k-means++");
  }
  if (!IsPrivate()) return OkStatus();
  if (init == KmeansInit::kPrivate && !KmeansMethodHasPrivateStart(method)) {
    return InvalidArgumentError("method " + std::string(KmeansMethodName(method)) +
                                " is the published DPLloyd baseline, which starts at random: "
                                "the private start is for cdp-gauss and cdp-laplace");
  }
  if (init == KmeansInit::kPrivate && initial_centres.size() != 0) {
    return InvalidArgumentError("give either initial centres or the private start, not both");
  }
  if (init == KmeansInit::kPrivate && components > kMaxPrivateStartComponents) {
    return InvalidArgumentError("the private start serves at most " +
                                std::to_string(kMaxPrivateStartComponents) +
                                " components (use the random start)");
  }
  if (init == KmeansInit::kKmeansPlusPlus) {
    return InvalidArgumentError(
        "a private fit cannot seed by k-means++: it reads the data without noise (use the "
        "random seeding)");
  }
  if (KmeansMethodNeedsDelta(method) && !(delta > 0.0 && delta < 1.0)) {
    return InvalidArgumentError("delta must be in (0, 1) for method " +
                                std::string(KmeansMethodName(method)));
  }
  if (domain.from_data && !std::isfinite(domain.data_norm)) return OkStatus();
  return ValidateDomain(domain);
}

StatusOr<KmeansFit> FitKmeans(const DataMatrix& x, const KmeansFitOptions& options,
                              Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  return FitKmeans(source, options, gen);
}

StatusOr<KmeansFit> FitKmeans(const RowSource& x, const KmeansFitOptions& requested,
                              Generator& gen) {
  DPEM_RETURN_IF_ERROR(requested.Validate());
  KmeansFitOptions options = requested;  // With J resolved: every step below sees it.
  options.iterations = requested.ResolvedIterations();
  DPEM_RETURN_IF_ERROR(ValidateFitData(x, options));
  KmeansFit fit;
  fit.guarantee = NewGuarantee(options);
  DPEM_ASSIGN_OR_RETURN(internal::FitStart start,
                        internal::BeginFit(x, options.domain, options.engine, gen, fit.guarantee));
  fit.domain = start.domain;
  const Engine& engine = start.engine;
  const UnitBallRowSource& unit = start.unit;
  std::optional<KmeansPlan> plan;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(plan, MakePlan(options, x.rows(), x.cols()));
    fit.guarantee.noise_multipliers = plan->multipliers;
    DPEM_RETURN_IF_ERROR(CheckReleases(*plan, options.components, x.cols()));
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd centres,
                        InitialCentres(options, fit.domain, unit, plan ? &*plan : nullptr,
                                       engine, gen, fit.guarantee.ledger));
  DPEM_RETURN_IF_ERROR(RunIterations(unit, engine, options, plan ? &*plan : nullptr, gen,
                                     centres, fit.guarantee.ledger));
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
