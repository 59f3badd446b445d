// DP-EM for Gaussian mixtures: see dpem/models/gmm/private_gmm.h. The fit
// and its iterations; the release plan (models/gmm/gmm_release_plan.h), the
// releases (models/gmm/gmm_releases.h), the post-processing
// (models/gmm/gmm_post_process.h) and the options (gmm_options.cc) have
// files of their own.
#include "dpem/models/gmm/private_gmm.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
#include "models/gmm/gmm_adaptive.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_init.h"
#include "models/gmm/gmm_kernels.h"
#include "models/gmm/gmm_post_process.h"
#include "models/gmm/gmm_release_plan.h"
#include "models/gmm/gmm_releases.h"
#include "models/start/private_start.h"
#include "pipeline/fit_steps.h"

namespace dpem {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// What a private fit decides before it reads a record: its calibration and
// the release plan made from it.
using PrivateRun = internal::GmmFitPlan;

// The parameters and the ledger of a fit as its iterations go, and, for
// the adaptive schedule, its head's movement and whether it had settled.
struct EmState {
  GmmParameters params;
  PrivacyLedger ledger;
  double movement = 0.0;
  bool settled = false;
};

// What an adaptive fit keeps of its head's last iteration
// (kAdaptiveHeadIterations; docs/gmm.md, "Adaptive J"): the parameters it
// started from, its frames and exact statistics (which a settled fit
// releases again; never output) and its release before post-processing.
struct HeadIteration {
  GmmParameters before;
  std::vector<internal::ComponentFrame> frames;
  GmmStatistics exact;
  GmmStatistics released;
};

// The M-step's options, the same in every iteration.
MStepOptions MStepOptionsFor(const GmmFitOptions& o, Eigen::Index d,
                             const internal::GmmReleasePlan* plan) {
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

// The frames of the next E-step on n records; none (the plain pass) without
// frames. Their radii: o.frame_radius if set, else the adaptive rule on the
// released weights and the plan's public noise scale.
StatusOr<std::vector<internal::ComponentFrame>> FramesFor(const GmmFitOptions& o,
                                                          const GmmParameters& params,
                                                          const internal::GmmReleasePlan* plan,
                                                          double n) {
  const double radius = FrameRadius(o, params.dimension());
  if (radius == 0.0 || plan == nullptr) return std::vector<internal::ComponentFrame>{};
  if (o.frame_radius > 0.0) return internal::ChooseFrames(params, radius);
  return internal::ChooseFrames(params, internal::AdaptiveFrameRadii(params.weights, n,
                                                                     plan->SecondNoise(),
                                                                     params.dimension()));
}

// The statistics of one E-step at `params` on `unit`: in the component
// frames `frames` (models/gmm/gmm_frames.h), else the plain pass; a plain
// fit's (`plain`) takes the settled-record shortcut, which a release must
// not (models/gmm/gmm_settled_rows.h).
StatusOr<GmmStatistics> EStep(const RowSource& unit, const Engine& engine,
                              const GmmParameters& params,
                              const std::vector<internal::ComponentFrame>& frames, bool plain) {
  if (!frames.empty()) return internal::ComputeFramedStatistics(params, frames, unit, engine);
  if (plain) return internal::ComputePlainFitStatistics(params, unit, engine);
  return ComputeStatistics(params, unit, engine);
}

// The M-step of iteration `it` from its statistics `s` (released by `plan`
// if set, in `frames`) and, for a private fit, its post-processing.
Status Update(const GmmStatistics& s, const std::vector<internal::ComponentFrame>& frames,
              const GmmFitOptions& o, const MStepOptions& m, const internal::GmmReleasePlan* plan,
              double eps_i, int it, double n, Generator& gen, EmState& state) {
  const GmmStatistics global = frames.empty() ? s : internal::FramedToGlobal(s, frames);
  DPEM_ASSIGN_OR_RETURN(state.params, MStep(global, state.params, n, m));
  if (plan != nullptr && o.unsafe_paper_mechanisms) {
    DPEM_RETURN_IF_ERROR(
        internal::ApplyUnsafeGmmMechanisms(state.params, s, eps_i, it, gen, state.ledger));
  }
  if (plan == nullptr) return OkStatus();
  return internal::PostProcessGmm(state.params, s, *plan, o, frames);
}

// One EM iteration on unit-ball data: E-step, releases (private fits), M-step.
// With `head` set (an adaptive fit's kAdaptiveHeadIterations-th iteration),
// its frames are sized for `frame_plan`'s noise and it keeps what a settled
// fit releases again.
Status Iterate(const RowSource& unit, const Engine& engine, const GmmFitOptions& o,
               const MStepOptions& m, const internal::GmmReleasePlan* plan, double eps_i, int it,
               Generator& gen, EmState& state, HeadIteration* head = nullptr,
               const internal::GmmReleasePlan* frame_plan = nullptr) {
  const double n = static_cast<double>(unit.rows());
  DPEM_ASSIGN_OR_RETURN(std::vector<internal::ComponentFrame> frames,
                        FramesFor(o, state.params, frame_plan ? frame_plan : plan, n));
  const bool plain = !o.IsPrivate() && plan == nullptr;
  DPEM_ASSIGN_OR_RETURN(GmmStatistics s, EStep(unit, engine, state.params, frames, plain));
  if (head != nullptr) *head = {state.params, frames, s, {}};
  GmmIterationReport report{it, o.iterations, std::numeric_limits<double>::quiet_NaN(),
                            o.covariance};
  if (plan != nullptr) {
    DPEM_RETURN_IF_ERROR(internal::ReleaseIterationStatistics(
        s, *plan, frames, o.frame_clip_correction, o.unsafe_paper_mechanisms, it, n, gen,
        state.ledger, head ? &head->released : nullptr));
  } else {
    report.mean_log_likelihood = s.log_likelihood / n;
  }
  DPEM_RETURN_IF_ERROR(Update(s, frames, o, m, plan, eps_i, it, n, gen, state));
  if (o.progress) o.progress(report);
  return OkStatus();
}

// A lighter first iteration (GmmFitOptions::FirstIterationCovariance: a
// spherical or diagonal one, `first`, released by `first.plan`): iteration 1
// of a private fit with `o`'s covariance type run as a fit of type
// `first.type` from the start read as one (StartReadAs); its covariances
// (sigma^2 I, or diagonal) are then read as `o`'s type, which they also are.
Status RunLighterFirstIteration(const RowSource& unit, const Engine& engine,
                                const GmmFitOptions& o, const internal::IterationRelease& first,
                                double eps_i, Generator& gen, EmState& state) {
  GmmFitOptions lighter = o;
  lighter.covariance = first.type;
  state.params = internal::StartReadAs(std::move(state.params), first.type);
  DPEM_RETURN_IF_ERROR(Iterate(unit, engine, lighter,
                               MStepOptionsFor(lighter, unit.cols(), &first.plan), &first.plan,
                               eps_i, 1, gen, state));
  state.params.type = o.covariance;
  return OkStatus();
}

// The sum of the schedule's weights of iterations `first`..J of `plan`
// (J - first + 1 without a schedule): the weight of their pooled release.
double WeightFrom(const internal::GmmReleasePlan& plan, int first, int iterations) {
  double w = 0.0;
  for (int it = first; it <= iterations; ++it) w += plan.IterationWeight(it);
  return w;
}

// The adaptive schedule's choice after its head (docs/gmm.md, "Adaptive
// J"): the movement of the released means from the head's input to its
// output (internal::MeanMovement, released values and public noise only);
// if below kSettledMovement the head has settled, and its release is the
// first of the pool.
void DecideAfterHead(const GmmFitOptions& o, const internal::GmmReleasePlan& plan,
                     const HeadIteration& head, double n, internal::ReleasePool& pool,
                     EmState& state) {
  constexpr int kHead = kAdaptiveHeadIterations;
  const double before = plan.ForIteration(kHead - 1).SumsNoiseStddev();
  const double after = plan.ForIteration(kHead).SumsNoiseStddev();
  state.movement = internal::MeanMovement(head.before, state.params, before, after,
                                          FrameRadius(o, state.params.dimension()), n);
  state.settled = state.movement < kSettledMovement;
  if (state.settled) pool.Add(head.released, plan.IterationWeight(kHead));
}

// Iteration `it` of a settled adaptive fit: the head's exact statistics
// released again by `r` (the same sensitivity: the same records, frames and
// clipping), recorded in the ledger as iteration `it`'s release, added to
// the pool with its weight.
Status ReleaseAgain(const GmmFitOptions& o, const internal::GmmReleasePlan& plan,
                    const internal::IterationRelease& r, const HeadIteration& head, int it,
                    Generator& gen, internal::ReleasePool& pool, EmState& state) {
  GmmStatistics s = head.exact;
  DPEM_RETURN_IF_ERROR(internal::AddReleaseNoise(s, r.plan, false, it, gen, state.ledger));
  pool.Add(s, plan.IterationWeight(it));
  if (o.progress) {
    o.progress({it, o.iterations, std::numeric_limits<double>::quiet_NaN(), o.covariance});
  }
  return OkStatus();
}

// A settled adaptive fit's parameters: the head's M-step, from its input,
// on the pool of its releases, post-processed at the pool's noise.
Status UpdateFromPool(const GmmFitOptions& o, const internal::GmmReleasePlan& plan,
                      const HeadIteration& head, const internal::ReleasePool& pool, double n,
                      double eps_i, Generator& gen, EmState& state) {
  GmmStatistics s = pool.Result();
  DPEM_RETURN_IF_ERROR(internal::FinishRelease(s, head.frames, o.frame_clip_correction, n));
  const internal::GmmReleasePlan pooled = plan.ForWeight(pool.weight());
  state.params = head.before;
  return Update(s, head.frames, o, MStepOptionsFor(o, state.params.dimension(), &pooled),
                &pooled, eps_i, kAdaptiveHeadIterations, n, gen, state);
}

// One iteration of a private fit by `plan` (its share of the budget
// schedule, and a lighter type in the first iteration if the fit has one);
// `head` as Iterate's, with frames sized for the pool of an adaptive fit.
Status PrivateIteration(const RowSource& unit, const Engine& engine, const GmmFitOptions& o,
                        const internal::GmmReleasePlan& plan,
                        const internal::IterationRelease& r, double eps_i, int it,
                        Generator& gen, EmState& state, HeadIteration* head) {
  const Eigen::Index d = unit.cols();
  if (r.type != o.covariance) {
    return RunLighterFirstIteration(unit, engine, o, r, eps_i, gen, state);
  }
  if (head == nullptr) {
    return Iterate(unit, engine, o, MStepOptionsFor(o, d, &r.plan), &r.plan, eps_i, it, gen,
                   state);
  }
  const internal::GmmReleasePlan pool = plan.ForWeight(WeightFrom(plan, it, o.iterations));
  return Iterate(unit, engine, o, MStepOptionsFor(o, d, &r.plan), &r.plan, eps_i, it, gen, state,
                 head, &pool);
}

// The start and the J iterations of EM on the unit-ball records `unit`,
// releasing by `run`'s plan if set (a private fit), not at all otherwise;
// the parameters are the weighted average of the last `averaged` iterates
// (internal::AveragedIterations; 1 for the last alone), or, for a settled
// adaptive fit, its pooled head (docs/gmm.md, "Adaptive J").
StatusOr<EmState> RunEm(const RowSource& unit, const Engine& engine, const GmmFitOptions& o,
                        const PrivateRun* run, int averaged, Generator& gen) {
  EmState state;
  const internal::GmmReleasePlan* plan = run ? &run->plan : nullptr;
  const internal::PrivateStartPlan* start_plan = plan && plan->start ? &*plan->start : nullptr;
  DPEM_ASSIGN_OR_RETURN(state.params, internal::InitialGmmParameters(unit, o, start_plan,
                                                                     engine, gen,
                                                                     &state.ledger));
  const double eps_i = run ? run->cal.per_release_epsilon : kInfinity;
  const Eigen::Index d = unit.cols();
  const double n = static_cast<double>(unit.rows());
  internal::IterateAverage average;
  HeadIteration head;
  internal::ReleasePool pool;
  for (int it = 1; it <= o.iterations; ++it) {
    if (plan == nullptr) {
      DPEM_RETURN_IF_ERROR(
          Iterate(unit, engine, o, MStepOptionsFor(o, d, nullptr), nullptr, eps_i, it, gen, state));
      continue;
    }
    const internal::IterationRelease r = internal::PlanOfIteration(o, *plan, it, d);
    if (state.settled) {
      DPEM_RETURN_IF_ERROR(ReleaseAgain(o, *plan, r, head, it, gen, pool, state));
      continue;
    }
    const bool at_head = plan->adaptive && it == kAdaptiveHeadIterations;
    DPEM_RETURN_IF_ERROR(PrivateIteration(unit, engine, o, *plan, r, eps_i, it, gen, state,
                                          at_head ? &head : nullptr));
    if (at_head) DecideAfterHead(o, *plan, head, n, pool, state);
    if (averaged > 1 && it > o.iterations - averaged) {
      average.Add(state.params,
                  internal::AveragedIterateWeight(*plan, it, o.iterations, averaged));
    }
  }
  if (state.settled) {
    DPEM_RETURN_IF_ERROR(UpdateFromPool(o, *plan, head, pool, n, eps_i, gen, state));
  } else if (!average.empty()) {
    state.params = average.Result();
  }
  return state;
}

// Calibrates a private fit of n records in d dimensions, makes its plan and
// checks its releases before any record is read (CheckGmmReleases), and
// writes the calibration's noise into the guarantee `g`.
StatusOr<PrivateRun> PlanPrivateFit(const GmmFitOptions& o, Eigen::Index n, Eigen::Index d,
                                    internal::IterationSchedule schedule, GmmGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(PrivateRun run, internal::PlanGmmFit(o, n, d, schedule));
  g.per_release_epsilon = run.cal.per_release_epsilon;
  g.noise_multipliers = run.cal.noise_multipliers;
  g.frame_radius = FrameRadius(o, d);
  g.adaptive_frames = g.frame_radius > 0.0 && o.frame_radius == 0.0;
  g.frame_clip_correction = g.frame_radius > 0.0 && o.frame_clip_correction;
  const CovarianceType first = o.FirstIterationCovariance(d);
  g.spherical_first_iteration = o.SphericalFirstIteration(d);
  g.diagonal_first_iteration = first == CovarianceType::kDiagonal && first != o.covariance;
  g.iteration_weights = run.cal.iteration_weights;
  g.start_cell_frames = run.plan.start.has_value() && run.plan.start->cell_frames;
  g.adaptive_iterations = run.plan.adaptive;
  return run;
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

// The guarantee a fit with options `o` starts from (StartGuarantee).
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
  DPEM_ASSIGN_OR_RETURN(GmmFitOptions options, internal::ResolvedFitOptions(requested));
  internal::IterationSchedule schedule = internal::IterationSchedule::kFixed;
  if (requested.iterations == 0 && options.IsPrivate() &&
      options.ResolvedInit() == GmmInit::kPrivate) {
    DPEM_ASSIGN_OR_RETURN(const internal::DefaultIterations j,
                          internal::DefaultPrivateStartIterations(options, x.rows(), x.cols()));
    options.iterations = j.iterations;
    schedule = j.schedule;
  }
  DPEM_RETURN_IF_ERROR(internal::CheckComponentsFitData(x, options.components));
  GmmFit fit;
  DPEM_ASSIGN_OR_RETURN(internal::FitStart start,
                        internal::BeginModelFit(x, options, NewGuarantee(options), gen, fit));
  const Engine& engine = start.engine;
  const UnitBallRowSource& unit = start.unit;
  std::optional<PrivateRun> run;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(run, PlanPrivateFit(options, x.rows(), x.cols(), schedule,
                                              fit.guarantee));
  }
  DPEM_ASSIGN_OR_RETURN(fit.guarantee.averaged_iterations,
                        internal::AveragedIterations(options, x.rows(), x.cols()));
  DPEM_ASSIGN_OR_RETURN(EmState state, RunEm(unit, engine, options, run ? &*run : nullptr,
                                             fit.guarantee.averaged_iterations, gen));
  fit.guarantee.ledger = std::move(state.ledger);
  fit.guarantee.movement = state.movement;
  fit.guarantee.settled = state.settled;
  if (state.settled) fit.guarantee.averaged_iterations = 1;
  if (run) DPEM_RETURN_IF_ERROR(Reaccount(options, run->cal, fit.guarantee));
  DPEM_ASSIGN_OR_RETURN(fit.parameters, ToOriginalUnits(state.params, fit.domain));
  fit.n = x.rows();
  fit.iterations = options.iterations;
  fit.estimator = options.estimator;
  fit.init = options.ResolvedInit();
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
