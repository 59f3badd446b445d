// The release plan of a private Gaussian-mixture fit: see
// models/gmm/gmm_release_plan.h.
#include "models/gmm/gmm_release_plan.h"

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "dpem/models/fit_defaults.h"
#include "models/gmm/gmm_adaptive.h"

namespace dpem::internal {
namespace {

// The joint release of every statistic with multiplier `z`, its blocks split
// by DefaultJointNoiseSplit.
GmmReleasePlan JointIterationPlan(const GmmFitOptions& o, double z, Eigen::Index d) {
  GmmReleasePlan plan;
  plan.joint = true;
  plan.split = DefaultJointNoiseSplit(o.covariance, d, o.components);
  plan.joint_multiplier = z;
  plan.joint_sampling = o.noise_sampling;
  return plan;
}

// park2017's per-parameter releases (GGG or LLG) with the multipliers `z` of
// (counts, sums, second moments).
GmmReleasePlan PerParameterIterationPlan(const GmmFitOptions& o, const std::vector<double>& z,
                                         Eigen::Index d) {
  const bool laplace = o.mechanisms == GmmMechanisms::kLlg;
  const MechanismKind wm = laplace ? MechanismKind::kLaplace : MechanismKind::kGaussian;
  GmmReleasePlan plan;
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

// The iterations' releases of `o` with the calibrated multipliers `z`.
GmmReleasePlan MakeIterationPlan(const GmmFitOptions& o, const std::vector<double>& z,
                                 Eigen::Index d) {
  if (o.mechanisms == GmmMechanisms::kJoint) return JointIterationPlan(o, z[0], d);
  return PerParameterIterationPlan(o, z, d);
}

}  // namespace

GmmReleasePlan GmmReleasePlan::ForIteration(int it) const {
  if (iteration_weights.empty()) return *this;
  return ForWeight(IterationWeight(it));
}

GmmReleasePlan GmmReleasePlan::ForWeight(double weight) const {
  GmmReleasePlan plan = *this;
  const double scale = 1.0 / std::sqrt(weight);
  plan.joint_multiplier *= scale;
  for (NoiseSpec* spec : {&plan.counts, &plan.sums, &plan.second}) spec->noise_multiplier *= scale;
  return plan;
}

std::vector<double> GmmIterationWeights(const GmmFitOptions& o, Eigen::Index d,
                                        IterationSchedule schedule) {
  if (schedule == IterationSchedule::kAdaptive) {
    GmmFitOptions head = o;
    head.iterations = kAdaptiveHeadIterations;
    return AdaptiveIterationWeights(GmmIterationWeights(head, d), o.iterations);
  }
  const int j = o.ResolvedIterations();
  const CovarianceType first = o.FirstIterationCovariance(d);
  // Only a lighter first iteration (which needs J >= 2) has a schedule.
  if (!o.budget_schedule || first == o.covariance) return {};
  const bool spherical = first == CovarianceType::kSpherical;
  const double lightest = spherical ? kSphericalIterationWeight : kDiagonalIterationWeight;
  const double last = spherical ? kFinalIterationWeight : kDiagonalFinalIterationWeight;
  if (j == 2) return {lightest, 2.0 - lightest};
  const double middle = (j - lightest - last) / (j - 2);
  std::vector<double> w(static_cast<size_t>(j), middle);
  w.front() = lightest;
  w.back() = last;
  return w;
}

Status CheckGmmIterationWeights(const std::vector<double>& weights, int iterations) {
  if (weights.empty()) return OkStatus();
  if (weights.size() != static_cast<std::size_t>(iterations)) {
    return InvalidArgumentError("privacy.iteration_weights must have one weight per iteration (" +
                                std::to_string(iterations) + "), not " +
                                std::to_string(weights.size()));
  }
  double sum = 0.0;
  for (double w : weights) {
    if (!(std::isfinite(w) && w > 0.0)) {
      return InvalidArgumentError("privacy.iteration_weights must be finite and > 0");
    }
    sum += w;
  }
  if (!(std::fabs(sum - iterations) <= kIterationWeightsSumTolerance * iterations)) {
    return InvalidArgumentError("privacy.iteration_weights must sum to the number of "
                                "iterations, " + std::to_string(iterations) + ", not " +
                                std::to_string(sum));
  }
  return OkStatus();
}

StatusOr<CalibrationResult> CalibrateGmmFit(const GmmFitOptions& o, Eigen::Index d,
                                            IterationSchedule schedule) {
  CalibrationOptions c;
  c.epsilon = o.epsilon;
  c.delta = o.delta;
  c.iterations = o.iterations;
  c.iteration_weights = GmmIterationWeights(o, d, schedule);
  c.accountant = o.accountant;
  c.per_release_delta = o.per_release_delta;
  if (o.ResolvedInit() == GmmInit::kPrivate) {
    c.start = PrivateStartPattern(o.noise_sampling);
    c.start_share = kPrivateStartShare;
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

StatusOr<GmmReleasePlan> MakeGmmReleasePlan(const GmmFitOptions& o,
                                            const CalibrationResult& cal, Eigen::Index n,
                                            Eigen::Index d) {
  GmmReleasePlan plan = MakeIterationPlan(o, cal.noise_multipliers, d);
  plan.iteration_weights = cal.iteration_weights;
  if (!cal.start_noise_multipliers.empty()) {
    DPEM_ASSIGN_OR_RETURN(plan.start, MakePrivateStartPlan(o.noise_sampling,
                                                           cal.start_noise_multipliers,
                                                           o.components, n, o.start_cell_frames));
  }
  return plan;
}

StatusOr<GmmFitPlan> PlanGmmFit(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d,
                                IterationSchedule schedule) {
  GmmFitPlan p;
  DPEM_ASSIGN_OR_RETURN(p.cal, CalibrateGmmFit(o, d, schedule));
  DPEM_ASSIGN_OR_RETURN(p.plan, MakeGmmReleasePlan(o, p.cal, n, d));
  p.plan.adaptive = schedule == IterationSchedule::kAdaptive;
  DPEM_RETURN_IF_ERROR(CheckGmmReleases(o, p.plan, d));
  return p;
}

namespace {

// Whether the noise of a private fit with options `o` on n records in d
// dimensions is small for the data: r = CentreNoiseRatio(sigma_1, d, K, n)
// < kQuietCentreRatio, sigma_1 the noise on a sum's coordinate were the
// iterations' whole budget spent on one release (a J = 1 plan).
StatusOr<bool> NoiseIsQuiet(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d) {
  GmmFitOptions one = o;
  one.iterations = 1;
  DPEM_ASSIGN_OR_RETURN(const CalibrationResult cal, CalibrateGmmFit(one, d));
  DPEM_ASSIGN_OR_RETURN(const GmmReleasePlan plan, MakeGmmReleasePlan(one, cal, n, d));
  return CentreNoiseRatio(plan.SumsNoiseStddev(), d, o.components, n) < kQuietCentreRatio;
}

// Whether a fit with options `o` at J = `iterations` on `schedule` is valid
// (J x K within bounds) and plans.
bool Plans(const GmmFitOptions& o, int iterations, IterationSchedule schedule, Eigen::Index n,
           Eigen::Index d) {
  GmmFitOptions at = o;
  at.iterations = iterations;
  return at.Validate().ok() && PlanGmmFit(at, n, d, schedule).ok();
}

}  // namespace

StatusOr<DefaultIterations> DefaultPrivateStartIterations(const GmmFitOptions& o,
                                                          Eigen::Index n, Eigen::Index d) {
  DPEM_ASSIGN_OR_RETURN(const bool quiet_noise, NoiseIsQuiet(o, n, d));
  if (quiet_noise) {
    // The quiet J only if a fit at it is valid and plans.
    if (Plans(o, kQuietPrivateStartIterations, IterationSchedule::kFixed, n, d)) {
      return DefaultIterations{kQuietPrivateStartIterations, IterationSchedule::kFixed};
    }
    return DefaultIterations{};
  }
  const bool adaptive = o.adaptive_iterations && o.mechanisms == GmmMechanisms::kJoint &&
                        o.component_frames && !o.unsafe_paper_mechanisms &&
                        Plans(o, kAdaptiveIterations, IterationSchedule::kAdaptive, n, d);
  if (!adaptive) return DefaultIterations{};
  return DefaultIterations{kAdaptiveIterations, IterationSchedule::kAdaptive};
}

IterationRelease PlanOfIteration(const GmmFitOptions& o, const GmmReleasePlan& plan, int it,
                                 Eigen::Index d) {
  IterationRelease r{it == 1 ? o.FirstIterationCovariance(d) : o.covariance,
                     plan.ForIteration(it)};
  if (r.type != o.covariance) r.plan.split = DefaultJointNoiseSplit(r.type, d, o.components);
  return r;
}

Status CheckGmmReleases(const GmmFitOptions& o, const GmmReleasePlan& plan, Eigen::Index d) {
  if (plan.start) DPEM_RETURN_IF_ERROR(CheckPrivateStart(*plan.start, d));
  if (plan.joint) {
    // Each iteration's own multiplier (a schedule), the first's lighter
    // split if it has one.
    for (int it = 1; it <= o.iterations; ++it) {
      const IterationRelease r = PlanOfIteration(o, plan, it, d);
      DPEM_RETURN_IF_ERROR(CheckJointRelease(r.type, r.plan.split, r.plan.joint_multiplier,
                                             o.components, d, r.plan.joint_sampling));
    }
    return OkStatus();
  }
  DPEM_RETURN_IF_ERROR(CheckRelease(plan.counts, o.components));
  DPEM_RETURN_IF_ERROR(CheckRelease(plan.sums, d));
  if (o.unsafe_paper_mechanisms) return OkStatus();
  const Eigen::Index second = o.covariance == CovarianceType::kFull ? d * (d + 1) / 2
                              : o.covariance == CovarianceType::kDiagonal ? d
                                                                          : 1;
  return CheckRelease(plan.second, second);
}

int AveragedIterationsOfJ(int iterations) {
  return static_cast<int>(iterations * kAveragedIterationShare);
}

StatusOr<int> AveragedIterations(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d) {
  const int averaged = AveragedIterationsOfJ(o.ResolvedIterations());
  if (!o.iterate_averaging || !o.IsPrivate() || o.ResolvedInit() != GmmInit::kPrivate ||
      averaged < 2) {
    return 1;
  }
  DPEM_ASSIGN_OR_RETURN(const bool quiet_noise, NoiseIsQuiet(o, n, d));
  return quiet_noise ? 1 : averaged;
}

double AveragedIterateWeight(const GmmReleasePlan& plan, int it, int iterations, int averaged) {
  const double position = it - (iterations - averaged);
  return position * plan.IterationWeight(it);
}

}  // namespace dpem::internal
