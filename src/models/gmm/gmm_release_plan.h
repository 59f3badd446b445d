// The release plan of a private Gaussian-mixture fit (dpem/models/gmm/
// private_gmm.h): the calibration of its noise from (epsilon, delta, J, K),
// what each iteration releases and at which noise (the per-parameter
// releases of GGG and LLG, or the joint release with its block split), the
// private start's release, and the check of those releases on public values
// before any record is read. Private to the library.
//
// Thread safety: pure functions of their arguments.
#ifndef DPEM_MODELS_GMM_GMM_RELEASE_PLAN_H_
#define DPEM_MODELS_GMM_GMM_RELEASE_PLAN_H_

#include <Eigen/Core>
#include <cmath>

#include <optional>
#include <vector>

#include "dpem/accounting/calibration.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/status.h"
#include "models/start/private_start.h"

namespace dpem::internal {

// How a private fit spreads its iterations' budget: its options' schedule
// (GmmIterationWeights), or the adaptive schedule of a default-J fit from
// the private start where the noise is large (GmmFitOptions::
// adaptive_iterations; AdaptiveIterationWeights in models/gmm/gmm_adaptive.h).
enum class IterationSchedule { kFixed, kAdaptive };

// The noise of one iteration's releases: three kinds of per-parameter
// release (GGG, LLG), or the joint release with its block split.
struct GmmReleasePlan {
  NoiseSpec counts;
  NoiseSpec sums;
  NoiseSpec second;  // Unused with unsafe paper mechanisms.
  bool joint = false;
  // The private start's release (models/start/private_start.h), if it starts so.
  std::optional<PrivateStartPlan> start;
  JointNoiseScales split;  // Joint: relative block scales, sensitivity 1.
  double joint_multiplier = 0.0;  // Of a unit-weight iteration (ForIteration).
  NoiseSampling joint_sampling = NoiseSampling::kDiscrete;
  // The budget schedule (CalibrationOptions::iteration_weights; empty:
  // equal iterations).
  std::vector<double> iteration_weights;
  // Whether the iterations follow the adaptive schedule (RunEm then chooses
  // what its later releases release; docs/gmm.md, "Adaptive J").
  bool adaptive = false;

  // Iteration `it`'s (1-based) weight in the schedule: 1 without one.
  double IterationWeight(int it) const {
    return iteration_weights.empty() ? 1.0 : iteration_weights[static_cast<size_t>(it - 1)];
  }
  // The plan of iteration `it` (1-based): every multiplier divided by the
  // square root of its weight in the schedule (this plan if none).
  GmmReleasePlan ForIteration(int it) const;
  // The plan of a release of weight `weight` > 0 in the schedule (of the
  // pool of releases whose weights sum to it): every multiplier divided by
  // sqrt(weight).
  GmmReleasePlan ForWeight(double weight) const;

  // Standard deviation of the noise on one coordinate of a sum, and of a
  // second moment (its diagonal for full matrices).
  double SumsNoise() const { return joint ? split.sums * joint_multiplier : sums.NoiseScale(); }
  double SecondNoise() const {
    return joint ? split.second * joint_multiplier : second.NoiseScale();
  }
  // The standard deviation of the noise on a sum's coordinate: SumsNoise,
  // times sqrt(2) for LLG's Laplace sums (Laplace(b) has variance 2 b^2).
  double SumsNoiseStddev() const {
    const bool laplace = !joint && sums.mechanism == MechanismKind::kLaplace;
    return (laplace ? std::sqrt(2.0) : 1.0) * SumsNoise();
  }
};

// The budget schedule of a fit with options `o` on d-dimensional data:
// empty (equal iterations) unless it has a lighter first iteration
// (GmmFitOptions::FirstIterationCovariance differs from its type) and
// GmmFitOptions::budget_schedule; then the lighter iteration's weight
// (kSphericalIterationWeight or kDiagonalIterationWeight), equal shares,
// and the last's (kFinalIterationWeight or kDiagonalFinalIterationWeight),
// summing to J (private_gmm.h).
// With IterationSchedule::kAdaptive (J = o.iterations >
// kAdaptiveHeadIterations): AdaptiveIterationWeights of the schedule of the
// same options at J = kAdaptiveHeadIterations.
std::vector<double> GmmIterationWeights(const GmmFitOptions& o, Eigen::Index d,
                                        IterationSchedule schedule = IterationSchedule::kFixed);

// The relative distance within which a schedule's sum must equal J:
// GmmIterationWeights' sums are J up to a few roundings.
inline constexpr double kIterationWeightsSumTolerance = 1e-9;

// OK if `weights` has the form of GmmIterationWeights' schedules for a fit of
// `iterations` iterations: empty (equal iterations), or one finite weight
// > 0 per iteration, summing to `iterations` (to a relative
// kIterationWeightsSumTolerance). InvalidArgument naming
// privacy.iteration_weights and what is wrong otherwise (a model file's
// check).
Status CheckGmmIterationWeights(const std::vector<double>& weights, int iterations);

// Calibrates the noise of a private fit with options `o` (Validate() OK,
// iterations resolved, epsilon finite) on d-dimensional data: the
// iterations' release pattern (one joint release, or park2017's scenario
// with `o`'s sampling) and schedule (GmmIterationWeights with `schedule`),
// and the private start's pattern and share if `o` starts privately.
StatusOr<CalibrationResult> CalibrateGmmFit(
    const GmmFitOptions& o, Eigen::Index d,
    IterationSchedule schedule = IterationSchedule::kFixed);

// The plan of a fit with options `o` calibrated as `cal` (CalibrateGmmFit),
// on n records in d dimensions: its iterations' releases and its start's.
StatusOr<GmmReleasePlan> MakeGmmReleasePlan(const GmmFitOptions& o,
                                            const CalibrationResult& cal, Eigen::Index n,
                                            Eigen::Index d);

// The default J of a private fit with options `o` (Validate() OK, J
// unset) from the private start, on n records in d dimensions (docs/gmm.md,
// "Choosing J"): kQuietPrivateStartIterations if the noise on a typical
// component's mean, were the iterations' whole budget spent on one release,
// is small against the unit ball,
//   r = CentreNoiseRatio(sigma_1, d, K, n) < kQuietCentreRatio
// (sigma_1: the standard deviation of the noise on one coordinate of a
// component's sum in that release, from GmmReleasePlan::SumsNoise), and if
// a fit at that J can be made: J x K within kMaxIterationsTimesComponents,
// its calibration certifies the target and CheckGmmReleases passes (a
// review found corners where J = 3 plans and J = 10 does not: the linear
// accountant at small epsilon and very large n, discrete grids in high d);
// otherwise kDefaultPrivateStartIterations (models/fit_defaults.h). Public
// values only (n is public under replace-one neighbours); nothing is drawn.
//
// Where the noise is large and J = 3 would run, the adaptive schedule
// replaces it (docs/gmm.md, "Adaptive J") if o.adaptive_iterations, the
// release is joint with component frames (the movement statistic reads the
// frames' radius), and a fit of kAdaptiveIterations on that schedule can
// be made as above: J = kAdaptiveIterations, IterationSchedule::kAdaptive.
struct DefaultIterations {
  int iterations = kDefaultPrivateStartIterations;
  IterationSchedule schedule = IterationSchedule::kFixed;
};
StatusOr<DefaultIterations> DefaultPrivateStartIterations(const GmmFitOptions& o,
                                                          Eigen::Index n, Eigen::Index d);

// How many of its last iterates a private fit with options `o` (Validate()
// OK, J = o.iterations resolved) on n records in d dimensions averages
// (docs/gmm.md, "Averaging the last iterates"): floor(J x
// kAveragedIterationShare) if o.iterate_averaging, the fit starts privately
// and r = CentreNoiseRatio(sigma_1, d, K, n) >= kQuietCentreRatio (r and
// sigma_1 as in DefaultPrivateStartIterations); otherwise 1, the last
// iterate alone. Always 1 for plain EM and for J <= 3. Public values only;
// the average is post-processing of released parameters.
StatusOr<int> AveragedIterations(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d);

// floor(J x kAveragedIterationShare): how many last iterates a fit of J =
// `iterations` iterations averages where the rule of AveragedIterations
// applies (it averages none below 2). The one place the count is computed,
// for the fit and for the model-file reader's check.
int AveragedIterationsOfJ(int iterations);

// Iteration it's weight (unnormalised) in the average of the last
// `averaged` of J = `iterations` iterates of a fit released by `plan`
// (docs/gmm.md, "Averaging the last iterates"): its position i among them
// (1 for the oldest, `averaged` for the last), a linear ramp that halves
// the average's lag behind iterates that still move (measured on the Adult
// columns), times its share of the budget schedule (for Gaussian noise, the
// inverse of its variance; 1 without a schedule). Requires
// iterations - averaged < it <= iterations.
double AveragedIterateWeight(const GmmReleasePlan& plan, int it, int iterations, int averaged);

// A private fit's calibration and release plan.
struct GmmFitPlan {
  CalibrationResult cal;
  GmmReleasePlan plan;
};

// What a private fit with options `o` (Validate() OK, J resolved, epsilon
// finite) on n records in d dimensions does before it reads a record:
// CalibrateGmmFit, MakeGmmReleasePlan and CheckGmmReleases, on `schedule`
// (recorded in the plan: GmmReleasePlan::adaptive). Public values only;
// nothing is drawn.
StatusOr<GmmFitPlan> PlanGmmFit(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d,
                                IterationSchedule schedule = IterationSchedule::kFixed);

// What iteration `it` (1-based) of a private fit with options `o` on
// d-dimensional data releases, by `plan` (MakeGmmReleasePlan): the
// covariance type of its statistics (GmmFitOptions::FirstIterationCovariance
// for the first, the fit's own after it) and its plan (plan.ForIteration(it),
// with the block split of that type for a lighter first iteration). The fit
// (RunEm) and CheckGmmReleases both read it, so the release checked is the
// one made.
struct IterationRelease {
  CovarianceType type = CovarianceType::kFull;
  GmmReleasePlan plan;
};
IterationRelease PlanOfIteration(const GmmFitOptions& o, const GmmReleasePlan& plan, int it,
                                 Eigen::Index d);

// Checks one iteration's releases on public values alone, drawing nothing,
// before the data is read: a release that cannot be made (a discrete grid
// too fine for its coordinates) then fails there, not after a pass over the
// data (review finding). The coordinates are those PrivatizeGmmStatistics
// (models/gmm/gmm_releases.h) releases: all statistics jointly, or the
// counts, each component's sums and (unless park2016's mechanisms replace
// them) each second moment; a lighter first iteration's (spherical or
// diagonal, PlanOfIteration), if `o` has one; every iteration at its own
// multiplier of the budget schedule; and the start's release, if `plan` has
// one.
Status CheckGmmReleases(const GmmFitOptions& o, const GmmReleasePlan& plan, Eigen::Index d);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_RELEASE_PLAN_H_
