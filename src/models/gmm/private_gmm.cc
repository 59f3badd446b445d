// DP-EM for Gaussian mixtures: see dpem/models/gmm/private_gmm.h.
#include "dpem/models/gmm/private_gmm.h"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/mechanisms/simplex.h"
#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
#include "dpem/mechanisms/joint_release.h"
#include "dpem/random/samplers.h"
#include "internal/linear_algebra.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_init.h"
#include "models/start/private_start.h"
#include "pipeline/fit_steps.h"

namespace dpem {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The noise of one iteration's releases: three kinds of per-parameter
// release (GGG, LLG), or the joint release with its block split.
struct ReleasePlan {
  NoiseSpec counts;
  NoiseSpec sums;
  NoiseSpec second;  // Unused with unsafe paper mechanisms.
  bool joint = false;
  // The private start's release (models/start/private_start.h), if it starts so.
  std::optional<internal::PrivateStartPlan> start;
  JointNoiseScales split;  // Joint: relative block scales, sensitivity 1.
  double joint_multiplier = 0.0;
  NoiseSampling joint_sampling = NoiseSampling::kDiscrete;

  // Standard deviation of the noise on one coordinate of a sum, and of a
  // second moment (its diagonal for full matrices).
  double SumsNoise() const { return joint ? split.sums * joint_multiplier : sums.NoiseScale(); }
  double SecondNoise() const {
    return joint ? split.second * joint_multiplier : second.NoiseScale();
  }
};

std::string IterationLabel(int iteration, const std::string& what) {
  return "iteration " + std::to_string(iteration) + " / " + what;
}

ReleasePlan MakeIterationPlan(const GmmFitOptions& o, const std::vector<double>& z,
                              Eigen::Index d) {
  if (o.mechanisms == GmmMechanisms::kJoint) {
    ReleasePlan plan;
    plan.joint = true;
    plan.split = DefaultJointNoiseSplit(o.covariance, d, o.components);
    plan.joint_multiplier = z[0];
    plan.joint_sampling = o.noise_sampling;
    return plan;
  }
  const bool laplace = o.mechanisms == GmmMechanisms::kLlg;
  const MechanismKind wm = laplace ? MechanismKind::kLaplace : MechanismKind::kGaussian;
  ReleasePlan plan;
  plan.counts = {wm, laplace ? kCountsL1Sensitivity : kCountsL2Sensitivity, z[0], "counts"};
  plan.sums = {wm, laplace ? SumsL1Sensitivity(d) : kSumsL2Sensitivity, z[1], "sums"};
  const double second = o.covariance == CovarianceType::kSpherical ? kTraceSensitivity
                                                                   : kSecondMomentL2Sensitivity;
  plan.second = {MechanismKind::kGaussian, second, z[2], "second moments"};
  for (NoiseSpec* spec : {&plan.counts, &plan.sums, &plan.second}) {
    spec->sampling = o.noise_sampling;
  }
  return plan;
}

// The plan of a calibrated fit: its iterations' releases and its start's.
StatusOr<ReleasePlan> MakePlan(const GmmFitOptions& o, const CalibrationResult& cal,
                               Eigen::Index n, Eigen::Index d) {
  ReleasePlan plan = MakeIterationPlan(o, cal.noise_multipliers, d);
  if (!cal.start_noise_multipliers.empty()) {
    DPEM_ASSIGN_OR_RETURN(plan.start, internal::MakePrivateStartPlan(
                                          o.noise_sampling, cal.start_noise_multipliers,
                                          o.components, n));
  }
  return plan;
}

NoiseSpec Labelled(NoiseSpec spec, int iteration, const std::string& what) {
  spec.label = IterationLabel(iteration, what);
  return spec;
}

// Maps released counts to N~ = n * (projection of counts / n onto the simplex).
Status ProjectCounts(GmmStatistics& s, double n) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd w, ProjectToSimplex(s.counts / n));
  s.counts = n * w;
  return OkStatus();
}

Status ReleaseCounts(GmmStatistics& s, const ReleasePlan& plan, int it, double n,
                     Generator& gen, PrivacyLedger& ledger) {
  DPEM_RETURN_IF_ERROR(ReleaseVector(s.counts, Labelled(plan.counts, it, "counts"), gen, ledger));
  return ProjectCounts(s, n);
}

// Releases row `r` of a K x d block of statistics as one vector mechanism
// (rows of a column-major matrix are not contiguous, so through a copy).
Status ReleaseRow(Eigen::MatrixXd& block, Eigen::Index r, const NoiseSpec& spec, Generator& gen,
                  PrivacyLedger& ledger) {
  Eigen::VectorXd row = block.row(r).transpose();
  DPEM_RETURN_IF_ERROR(ReleaseVector(row, spec, gen, ledger));
  block.row(r) = row.transpose();
  return OkStatus();
}

Status ReleaseSecondMoment(GmmStatistics& s, Eigen::Index c, const ReleasePlan& plan,
                           int it, Generator& gen, PrivacyLedger& ledger) {
  const std::string what = "second moments[" + std::to_string(c) + "]";
  const NoiseSpec spec = Labelled(plan.second, it, what);
  switch (s.type) {
    case CovarianceType::kFull:
      return ReleaseSymmetric(s.second_full[c], spec, gen, ledger);
    case CovarianceType::kDiagonal:
      return ReleaseRow(s.second_diag, c, spec, gen, ledger);
    case CovarianceType::kSpherical: {
      Eigen::VectorXd one = Eigen::VectorXd::Constant(1, s.second_trace(c));
      DPEM_RETURN_IF_ERROR(ReleaseVector(one, spec, gen, ledger));
      s.second_trace(c) = one(0);
      return OkStatus();
    }
  }
  return InternalError("unhandled covariance type");
}

// Replaces the statistics by their noisy releases, recording each release.
// The exact log-likelihood is dropped: nothing downstream may see it.
Status PrivatizeStatistics(GmmStatistics& s, const ReleasePlan& plan, bool unsafe, int it,
                           double n, Generator& gen, PrivacyLedger& ledger) {
  s.log_likelihood = std::numeric_limits<double>::quiet_NaN();
  if (plan.joint) {
    DPEM_RETURN_IF_ERROR(ReleaseJointStatistics(s, plan.split, plan.joint_multiplier,
                                                IterationLabel(it, "joint statistics"), gen,
                                                ledger, plan.joint_sampling));
    return ProjectCounts(s, n);
  }
  DPEM_RETURN_IF_ERROR(ReleaseCounts(s, plan, it, n, gen, ledger));
  for (Eigen::Index c = 0; c < s.sums.rows(); ++c) {
    DPEM_RETURN_IF_ERROR(ReleaseRow(
        s.sums, c, Labelled(plan.sums, it, "sums[" + std::to_string(c) + "]"), gen, ledger));
    if (!unsafe) DPEM_RETURN_IF_ERROR(ReleaseSecondMoment(s, c, plan, it, gen, ledger));
  }
  return OkStatus();
}

StatusOr<CalibrationResult> CalibrateFit(const GmmFitOptions& o) {
  CalibrationOptions c;
  c.epsilon = o.epsilon;
  c.delta = o.delta;
  c.iterations = o.iterations;
  c.accountant = o.accountant;
  c.per_release_delta = o.per_release_delta;
  if (o.ResolvedInit() == GmmInit::kPrivate) {
    c.start = internal::PrivateStartPattern(o.noise_sampling);
    c.start_share = internal::kPrivateStartShare;
  }
  if (o.mechanisms == GmmMechanisms::kJoint) {
    c.pattern = {"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics",
                            o.noise_sampling}}};
    return Calibrate(c);
  }
  DPEM_ASSIGN_OR_RETURN(c.pattern, ScenarioPattern(GmmMechanismsName(o.mechanisms),
                                                   o.components));
  for (ReleaseSpec& spec : c.pattern.releases) spec.sampling = o.noise_sampling;
  // park2016's Gamma and Wishart mechanisms claim pure epsilon_i-DP; their
  // claimed releases are recorded with the default (conservative) sampling.
  if (o.unsafe_paper_mechanisms) {
    c.pattern.releases[2].mechanism = MechanismKind::kLaplace;
    c.pattern.releases[2].sampling = Release{}.sampling;
  }
  return Calibrate(c);
}

// park2016 Sec. 4: Gamma noise on spherical variances, Wishart noise on full
// covariances, each at the per-release budget epsilon_i, with the sensitivity
// the paper gives (1/(d N~_k) for a variance, 1/N~_k for a covariance).
Status ApplyUnsafeMechanisms(GmmParameters& p, const GmmStatistics& noisy, double eps_i,
                             int it, Generator& gen, PrivacyLedger& ledger) {
  for (Eigen::Index c = 0; c < p.components(); ++c) {
    const double n_k = std::max(noisy.counts(c), 1.0);
    const std::string label = IterationLabel(it, "covariance[" + std::to_string(c) + "]");
    if (p.type == CovarianceType::kSpherical) {
      double var = p.covariances[c](0, 0);
      const double sens = 1.0 / (static_cast<double>(p.dimension()) * n_k);
      DPEM_RETURN_IF_ERROR(ReleaseVarianceGammaUnsafe(var, sens, eps_i, gen, ledger, true, label));
      p.covariances[c] = Eigen::MatrixXd::Identity(p.dimension(), p.dimension()) * var;
    } else {
      DPEM_RETURN_IF_ERROR(ReleaseCovarianceWishartUnsafe(p.covariances[c], 1.0 / n_k, eps_i,
                                                          gen, ledger, true, label));
    }
  }
  return OkStatus();
}

// Post-processing of a private M-step that uses only the public domain: every
// record lies in the unit ball, so a mixture fitted to them has its means in
// the ball and no variance above 1. Noisy statistics can break both; project
// the means onto the ball and the covariances' eigenvalues into
// [floor, kMaxUnitBallVariance]. A full covariance reassembled from clamped
// eigenvalues that still fails its Cholesky factorisation (rounding) is
// replaced by its clamped diagonal, so that the next E-step never refuses the
// parameters (a repair of released values, never an error).
constexpr double kMaxUnitBallVariance = 1.0;

Status ProjectToDomain(GmmParameters& p, const Eigen::VectorXd& floors) {
  for (Eigen::Index c = 0; c < p.components(); ++c) {
    const double floor = floors(c);
    internal::ProjectOntoUnitBall(p.means.row(c));
    Eigen::MatrixXd& cov = p.covariances[c];
    if (p.type == CovarianceType::kFull) {
      DPEM_ASSIGN_OR_RETURN(cov, internal::ClampEigenvalues(cov, floor, kMaxUnitBallVariance));
      if (Eigen::LLT<Eigen::MatrixXd>(cov).info() == Eigen::Success) continue;
    }
    // Diagonal and spherical (and the fallback): eigenvalues = diagonal.
    const Eigen::VectorXd diagonal = cov.diagonal().cwiseMax(floor).cwiseMin(kMaxUnitBallVariance);
    cov = diagonal.asDiagonal();
  }
  return OkStatus();
}

// The eigenvalue floor of each private covariance: the standard deviation of
// the noise its released second moment carries per entry, divided by the
// noisy count (and by d for a spherical trace), times sqrt(d) for a full
// matrix (the order of the noise matrix's spectral norm). Eigenvalues below it
// are indistinguishable from noise. Post-processing of released values only.
Eigen::VectorXd NoiseAwareFloors(const GmmStatistics& noisy, const ReleasePlan& plan,
                                 const GmmFitOptions& o) {
  const double d = static_cast<double>(noisy.sums.cols());
  const double per_entry = plan.SecondNoise();
  double factor = 1.0;
  if (o.covariance == CovarianceType::kFull) factor = std::sqrt(d);
  if (o.covariance == CovarianceType::kSpherical) factor = 1.0 / d;
  Eigen::VectorXd floors(noisy.counts.size());
  for (Eigen::Index c = 0; c < floors.size(); ++c) {
    const double n_k = std::max(noisy.counts(c), 1.0);
    floors(c) = std::max(o.covariance_floor, factor * per_entry / n_k);
  }
  return floors;
}

struct EmState {
  GmmParameters params;
  PrivacyLedger ledger;
};

// The M-step's options, the same in every iteration.
MStepOptions MStepOptionsFor(const GmmFitOptions& o, Eigen::Index d, const ReleasePlan* plan) {
  MStepOptions m;
  m.estimator = o.estimator;
  m.prior = o.prior.alpha.size() ? o.prior : DefaultPrior(o.components, d);
  m.covariance_floor = o.covariance_floor;
  m.min_count = o.min_component_count;
  // A mean from a count below its sum's noise scale is mostly noise (its
  // noise standard deviation exceeds the unit ball's radius): keep the
  // previous one. Post-processing of released values only.
  if (plan != nullptr) m.min_count = std::max(m.min_count, plan->SumsNoise());
  return m;
}

// The component frames' radius of a private fit in d dimensions; 0 if it
// uses none (not private, not joint, or frames off).
double FrameRadius(const GmmFitOptions& o, Eigen::Index d) {
  if (!o.IsPrivate() || o.mechanisms != GmmMechanisms::kJoint || !o.component_frames) return 0.0;
  return o.frame_radius > 0.0 ? o.frame_radius : internal::DefaultFrameRadius(d);
}

// The frames of the next E-step; none (the plain pass) without frames.
StatusOr<std::vector<internal::ComponentFrame>> FramesFor(const GmmFitOptions& o,
                                                          const GmmParameters& params) {
  const double radius = FrameRadius(o, params.dimension());
  if (radius == 0.0) return std::vector<internal::ComponentFrame>{};
  return internal::ChooseFrames(params, radius);
}

// The private M-step's post-processing: covariances floored at the noise
// level in the frame their statistics were released in, then projected onto
// the domain.
Status PostProcess(GmmParameters& p, const GmmStatistics& noisy, const ReleasePlan& plan,
                   const GmmFitOptions& o, const std::vector<internal::ComponentFrame>& frames) {
  Eigen::VectorXd floors = NoiseAwareFloors(noisy, plan, o);
  if (!frames.empty()) {
    DPEM_RETURN_IF_ERROR(internal::FloorInFrames(p, frames, floors));
    for (Eigen::Index c = 0; c < floors.size(); ++c) {
      if (frames[static_cast<size_t>(c)].local) floors(c) = o.covariance_floor;
    }
  }
  return ProjectToDomain(p, floors);
}

// One EM iteration on unit-ball data: E-step, releases (private fits), M-step.
Status Iterate(const RowSource& unit, const Engine& engine, const GmmFitOptions& o,
               const MStepOptions& m, const ReleasePlan* plan, double eps_i, int it,
               Generator& gen, EmState& state) {
  const double n = static_cast<double>(unit.rows());
  DPEM_ASSIGN_OR_RETURN(const std::vector<internal::ComponentFrame> frames,
                        FramesFor(o, state.params));
  GmmStatistics s;
  if (frames.empty()) {
    DPEM_ASSIGN_OR_RETURN(s, ComputeStatistics(state.params, unit, engine));
  } else {
    DPEM_ASSIGN_OR_RETURN(s, internal::ComputeFramedStatistics(state.params, frames, unit,
                                                               engine));
  }
  GmmIterationReport report{it, o.iterations, std::numeric_limits<double>::quiet_NaN()};
  if (plan != nullptr) {
    DPEM_RETURN_IF_ERROR(PrivatizeStatistics(s, *plan, o.unsafe_paper_mechanisms, it, n, gen,
                                             state.ledger));
  } else {
    report.mean_log_likelihood = s.log_likelihood / n;
  }
  const GmmStatistics global = frames.empty() ? s : internal::FramedToGlobal(s, frames);
  DPEM_ASSIGN_OR_RETURN(state.params, MStep(global, state.params, n, m));
  if (plan != nullptr && o.unsafe_paper_mechanisms) {
    DPEM_RETURN_IF_ERROR(ApplyUnsafeMechanisms(state.params, s, eps_i, it, gen, state.ledger));
  }
  if (plan != nullptr) DPEM_RETURN_IF_ERROR(PostProcess(state.params, s, *plan, o, frames));
  if (o.progress) o.progress(report);
  return OkStatus();
}

// Checks one iteration's releases on public values alone, drawing nothing,
// before the data is read: a release that cannot be made (a discrete grid
// too fine for its coordinates) then fails there, not after a pass over the
// data (review finding). The coordinates are those PrivatizeStatistics
// releases: all statistics jointly, or the counts, each component's sums and
// (unless park2016's mechanisms replace them) each second moment.
Status CheckReleases(const GmmFitOptions& o, const ReleasePlan& plan, Eigen::Index d) {
  if (plan.start) DPEM_RETURN_IF_ERROR(internal::CheckPrivateStart(*plan.start, d));
  if (plan.joint) {
    return CheckJointRelease(o.covariance, plan.split, plan.joint_multiplier, o.components, d,
                             plan.joint_sampling);
  }
  DPEM_RETURN_IF_ERROR(CheckRelease(plan.counts, o.components));
  DPEM_RETURN_IF_ERROR(CheckRelease(plan.sums, d));
  if (o.unsafe_paper_mechanisms) return OkStatus();
  const Eigen::Index second = o.covariance == CovarianceType::kFull ? d * (d + 1) / 2
                              : o.covariance == CovarianceType::kDiagonal ? d
                                                                          : 1;
  return CheckRelease(plan.second, second);
}

// Re-accounts the fit's own ledger against the calibration (exactly the
// budgeted releases, at most the target), and voids a guarantee that rests on
// park2016's unsafe mechanisms.
Status Reaccount(const GmmFitOptions& o, const CalibrationResult& cal, GmmGuarantee& g) {
  DPEM_RETURN_IF_ERROR(internal::Reaccount(cal.ledger.size(), o.delta, g));
  if (LedgerHasUnsafeRelease(g.ledger)) {
    g.guarantee_void = true;
    g.void_reasons.push_back(
        "park2016's Gamma/Wishart mechanisms were used (--unsafe-paper-mechanisms): their "
        "output support depends on the data, so they are not differentially private");
  }
  return OkStatus();
}

Status ValidateFitData(const RowSource& x, const GmmFitOptions& o) {
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (x.rows() < o.components) {
    return InvalidArgumentError("components K = " + std::to_string(o.components) +
                                " exceeds the number of records N = " +
                                std::to_string(x.rows()));
  }
  return OkStatus();
}

GmmGuarantee NewGuarantee(const GmmFitOptions& o) {
  GmmGuarantee g;
  StartGuarantee(o.IsPrivate(), o.epsilon, o.delta, o.accountant, g);
  g.mechanisms = o.mechanisms;
  return g;
}

// Maps unit-ball parameters to original units: x = c + R u.
StatusOr<GmmParameters> ToOriginalUnits(const GmmParameters& unit, const DataDomain& d) {
  DPEM_ASSIGN_OR_RETURN(GmmParameters p, ScaleParameters(unit, d.data_norm));
  p.means.rowwise() += d.center.transpose();
  return p;
}

}  // namespace

StatusOr<GmmFit> FitGmm(const DataMatrix& x, const GmmFitOptions& options, Generator& gen) {
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  return FitGmm(source, options, gen);
}

StatusOr<GmmFit> FitGmm(const RowSource& x, const GmmFitOptions& requested, Generator& gen) {
  DPEM_RETURN_IF_ERROR(requested.Validate());
  GmmFitOptions options = requested;  // With J resolved: every step below sees it.
  options.iterations = requested.ResolvedIterations();
  DPEM_RETURN_IF_ERROR(ValidateFitData(x, options));
  GmmFit fit;
  fit.guarantee = NewGuarantee(options);
  DPEM_ASSIGN_OR_RETURN(internal::FitStart start,
                        internal::BeginFit(x, options.domain, options.engine, gen, fit.guarantee));
  fit.domain = start.domain;
  const Engine& engine = start.engine;
  const UnitBallRowSource& unit = start.unit;
  std::optional<CalibrationResult> cal;
  std::optional<ReleasePlan> plan;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(cal, CalibrateFit(options));
    DPEM_ASSIGN_OR_RETURN(plan, MakePlan(options, *cal, x.rows(), x.cols()));
    DPEM_RETURN_IF_ERROR(CheckReleases(options, *plan, x.cols()));
    fit.guarantee.per_release_epsilon = cal->per_release_epsilon;
    fit.guarantee.noise_multipliers = cal->noise_multipliers;
    fit.guarantee.frame_radius = FrameRadius(options, x.cols());
  }
  EmState state;
  const internal::PrivateStartPlan* start_plan = plan && plan->start ? &*plan->start : nullptr;
  DPEM_ASSIGN_OR_RETURN(state.params, internal::InitialGmmParameters(unit, options, start_plan,
                                                                     engine, gen,
                                                                     &state.ledger));
  const double eps_i = cal ? cal->per_release_epsilon : kInfinity;
  const ReleasePlan* plan_or_null = plan ? &*plan : nullptr;
  const MStepOptions m_step = MStepOptionsFor(options, x.cols(), plan_or_null);
  for (int it = 1; it <= options.iterations; ++it) {
    DPEM_RETURN_IF_ERROR(
        Iterate(unit, engine, options, m_step, plan_or_null, eps_i, it, gen, state));
  }
  fit.guarantee.ledger = std::move(state.ledger);
  if (cal) DPEM_RETURN_IF_ERROR(Reaccount(options, *cal, fit.guarantee));
  DPEM_ASSIGN_OR_RETURN(fit.parameters, ToOriginalUnits(state.params, fit.domain));
  fit.n = x.rows();
  fit.iterations = options.iterations;
  fit.estimator = options.estimator;
  fit.init = options.ResolvedInit();
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
