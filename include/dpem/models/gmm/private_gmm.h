// Differentially private Gaussian mixtures by moment perturbation: DP-EM of
// park2016 and park2017 (Sec. 4-5), corrected as ../shared/privacy-notes.md
// requires.
//
// The fit, for a fixed number J of iterations:
//   1. Records are clipped to the public ball ||x - c|| <= R and mapped to the
//      unit ball (data/domain.h). R has no default.
//   2. The starting point (GmmFitOptions::init, docs/gmm.md "Starting
//      points"): for a private fit by default the private start
//      (models/start/private_start.h: two Gaussian releases of noisy counts and
//      sums of Voronoi cells, the second's cells placed from the first's
//      release, clustered by weighted k-means++), which takes 20% of the
//      budget; or, with kRandom, drawn from the generator independently of the data (means
//      uniform in the unit ball, equal weights, covariances I / (d + 2)); for
//      plain EM by default k-means++ and Lloyd on the unit-ball records, as
//      scikit-learn's GaussianMixture(init_params="kmeans") does.
//   3. Each iteration: E-step -> sufficient statistics (counts N_k, sums
//      A_k, second moments B_k); their release: by default all of them as one
//      joint Gaussian mechanism (mechanisms/joint_release.h); in the papers'
//      scenarios one release of the K noisy counts and, per component, one of
//      A_k and one of B_k (2K + 1 releases); then the M-step (MLE or MAP) as
//      post-processing of the noisy statistics. Releasing statistics instead of parameters means no
//      sensitivity depends on N_k (true or noisy); the papers' noise on
//      mu_k = A_k / N~_k is exactly noise on A_k divided by N~_k.
//   4. The noise is calibrated once from (epsilon, delta, J, K) by the chosen
//      accountant (accounting/calibration.h); the releases are recorded in
//      the fit's ledger as they happen, and the ledger is re-accounted at the
//      end: the reported epsilon is the accountant's for what was released.
//
// Sensitivities under replace-one neighbours, records in the unit ball, soft
// responsibilities summing to one (derivations in docs/gmm.md):
//   counts (vector of K):      L2 sqrt(2), L1 2
//   sums A_k (d-vector):       L2 2,       L1 2 sqrt(d)
//   second moments B_k:        full: Frobenius sqrt(2) (Analyze Gauss);
//                              diagonal: L2 sqrt(2); spherical (trace): 1.
//
// Thread safety: FitGmm is reentrant; it uses only its arguments.
#ifndef DPEM_MODELS_GMM_PRIVATE_GMM_H_
#define DPEM_MODELS_GMM_PRIVATE_GMM_H_

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dpem/accounting/guarantee.h"
#include "dpem/accounting/accountant.h"
#include "dpem/accounting/calibration.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Which mechanisms release (counts, sums, second moments) each iteration:
// kJoint (the default): all statistics of all components as ONE Gaussian
// mechanism per iteration, with the joint sensitivity of
// mechanisms/joint_release.h (docs/privacy.md); or park2017's per-parameter
// scenarios GGG (2K + 1 Gaussian releases) and LLG (Laplace, Laplace,
// Gaussian), kept to reproduce the papers.
enum class GmmMechanisms { kJoint, kGgg, kLlg };
std::string_view GmmMechanismsName(GmmMechanisms m);  // "joint", "GGG", "LLG"
StatusOr<GmmMechanisms> ParseGmmMechanisms(std::string_view name);

// How a fit chooses its starting parameters (docs/gmm.md, "Starting points"):
//   kRandom:         from the generator only, never the data: means uniform
//                    in the unit ball, equal weights, covariances I / (d + 2).
//   kKmeansPlusPlus: k-means++ seeding (greedy, 2 + floor(log K) trials) and
//                    Lloyd's algorithm on the unit-ball records, then one
//                    M-step from the hard assignment. It reads the data
//                    WITHOUT noise, so only non-private fits accept it.
//   kPrivate:        the private start (docs/privacy.md, "The private
//                    start"): two noisy releases of counts and sums of
//                    Voronoi cells (the second's cells placed from the
//                    first's release), clustered by weighted k-means++
//                    (post-processing). It takes 20% of the budget, recorded
//                    in the ledger as "start / ...". Private fits of at most
//                    kMaxPrivateStartComponents components only.
enum class GmmInit { kRandom, kKmeansPlusPlus, kPrivate };
std::string_view GmmInitName(GmmInit init);  // "random", "kmeans++", "private"
StatusOr<GmmInit> ParseGmmInit(std::string_view name);

// Sensitivities of the released statistics (see the file comment).
inline constexpr double kCountsL2Sensitivity = 1.4142135623730951;   // sqrt(2)
inline constexpr double kCountsL1Sensitivity = 2.0;
inline constexpr double kSumsL2Sensitivity = 2.0;
inline constexpr double kSecondMomentL2Sensitivity = 1.4142135623730951;  // full, diag
inline constexpr double kTraceSensitivity = 1.0;                          // spherical
// Largest J x K a fit accepts: its ledger holds J (2K + 1) releases.
inline constexpr long long kMaxIterationsTimesComponents = 1000000;
// The smallest covariance floor a fit accepts (GmmFitOptions::Validate), in
// unit-ball units. Every covariance the E-step sees has its eigenvalues in
// [floor, 1], so for a unit-ball record and a mean in the ball the
// Mahalanobis distance is at most 4 / floor = 4e10 and the log-determinant
// at least d log(floor) = -23 d: every log-density stays finite, about 300
// orders of magnitude from overflow. It also bounds the rounding of the
// full-covariance E-step (about F 2^-53 / floor in a log-density, F = d(d+1)/2
// + d + 1: below 1 up to d = 1300) and keeps a covariance reassembled from
// its clamped eigenvalues numerically positive definite (rounding about
// d 2^-53 < floor). A subnormal floor let far records' log-densities overflow
// to -infinity in every component (NaN responsibilities).
inline constexpr double kMinCovarianceFloor = 1e-10;

// L1 sensitivity of a sum A_k in d dimensions: 2 sqrt(d).
double SumsL1Sensitivity(Eigen::Index dimension);

// What one iteration reports to a progress callback. It carries no
// data-dependent value of a private fit: the progress line must not leak.
struct GmmIterationReport {
  int iteration = 0;  // 1-based.
  int iterations = 0;
  // Mean log-likelihood of the (unit-ball) training data before this
  // iteration's M-step; only for non-private fits (NaN for private ones).
  double mean_log_likelihood = std::numeric_limits<double>::quiet_NaN();
  // The covariance type of this iteration's statistics: the fit's, or
  // kSpherical in the spherical first iteration of a private fit
  // (GmmFitOptions::spherical_first_iteration). Public: set by the options.
  CovarianceType released_covariance = CovarianceType::kFull;
};

// The least dimension in which a private fit's first iteration releases
// lighter statistics, diagonal or spherical (GmmFitOptions::
// diagonal_first_iteration, spherical_first_iteration). Below it a
// covariance has at most 10 entries, the release saves little noise, and the
// shape a lighter iteration ignores costs more: measured for the spherical
// one in docs/gmm.md, "The spherical first iteration" (a loss on Gowalla,
// d = 2, and on a 10-component mixture in d = 4; gains in d = 5, 8 and 10);
// the diagonal one uses the same rule.
inline constexpr Eigen::Index kSphericalFirstIterationMinDimension = 5;

// The budget schedule of a fit with the spherical first iteration (docs/
// gmm.md, "The spherical first iteration"): relative zCDP costs of its J
// iterations, the spherical one kSphericalIterationWeight (one scale per
// component needs little), the last kFinalIterationWeight (the released
// model is made from it alone), the others equal shares of the rest, so that
// the weights sum to J (the cost of J equal iterations): J = 3 gives
// (0.25, 0.75, 2), J = 2 gives (0.25, 1.75). Calibration finds the noise of
// the whole schedule (CalibrationOptions::iteration_weights).
inline constexpr double kSphericalIterationWeight = 0.25;
inline constexpr double kFinalIterationWeight = 2.0;
// The budget schedule of a fit with the diagonal first iteration (the
// default in d >= kSphericalFirstIterationMinDimension): the diagonal one
// kDiagonalIterationWeight, the last kDiagonalFinalIterationWeight, the
// others equal shares of the rest, summing to J: (0.5, 1, 1.5) at J = 3,
// (0.5, 1.5) at J = 2. Milder than the spherical schedule, whose (0.25, ...,
// 2) made the diagonal fits' 10 x 10 gaps larger (docs/gmm.md, "The diagonal
// first iteration").
inline constexpr double kDiagonalIterationWeight = 0.5;
inline constexpr double kDiagonalFinalIterationWeight = 1.5;

struct GmmFitOptions {
  // Model. K has no default.
  int components = 0;   // K >= 1, K <= N.
  // J >= 1, or 0 for ResolvedIterations()'s default (models/fit_defaults.h:
  // 3 from the private start, 10 from the random start, 100 for plain EM).
  // From the private start, FitGmm raises the default to
  // kQuietPrivateStartIterations (10) when the noise is small for the data's
  // size (internal::DefaultPrivateStartIterations; docs/gmm.md, "Choosing
  // J"), and where the noise is large runs the adaptive schedule of
  // kAdaptiveIterations (6) releases (adaptive_iterations below);
  // GmmFit::iterations says which J ran.
  int iterations = 0;
  CovarianceType covariance = CovarianceType::kFull;
  Estimator estimator = Estimator::kMle;
  // MAP prior; empty alpha means DefaultPrior(K, d) (park2017 supplement).
  GmmPrior prior;

  // Privacy. No defaults for epsilon and delta; epsilon = +infinity fits
  // plain (non-private) EM with the same code and no releases.
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double delta = std::numeric_limits<double>::quiet_NaN();
  // The public domain (R has no default; see data/domain.h).
  DataDomain domain;
  AccountantKind accountant = kDefaultAccountant;
  GmmMechanisms mechanisms = GmmMechanisms::kJoint;
  double per_release_delta = kDefaultPerReleaseDelta;
  // How every release's noise is sampled (mechanisms/additive_noise.h,
  // "Discrete noise"): kDiscrete (default, floating-point safe; the ledger
  // records the rounding charge) or kContinuous (floating-point samples, as
  // before; e.g. to reproduce earlier results).
  NoiseSampling noise_sampling = NoiseSampling::kDiscrete;
  // Component frames (joint mechanism only; docs/gmm.md, "Component
  // frames"): from the second iteration on, each component whose Mahalanobis
  // ball of radius frame_radius (in the previous iteration's released
  // parameters) is smaller than the unit ball has its statistics computed and
  // released in that ball's coordinates, records clipped to it, so that its
  // noise shrinks with the component. Same sensitivity, same ledger.
  bool component_frames = true;
  // rho, in Mahalanobis units, the same for every component and iteration;
  // 0 (the default) means the adaptive rule: per component and iteration,
  // between sqrt(d) + 2/d (much noise for its count) and sqrt(d) + 2 (little noise,
  // which clips about 0.3% of a Gaussian component's records), from the
  // previous release's weight and the public noise scale (docs/gmm.md,
  // "Component frames"). Must be 0 or finite and > 0.
  double frame_radius = 0.0;
  // Undo the frames' clipping shrinkage of each component's mean and
  // covariance, for a component that is Gaussian in its frame (docs/gmm.md,
  // "Component frames"; post-processing of released values). Default on.
  bool frame_clip_correction = true;
  // The spherical first iteration (docs/gmm.md, "The spherical first
  // iteration"): a private fit with full or diagonal covariances in d >=
  // kSphericalFirstIterationMinDimension dimensions, the joint mechanism with
  // component frames, J >= 2 and a start whose covariances are isotropic
  // guesses (the private and random starts) releases, in its first
  // iteration, SPHERICAL second moments: one scale per component instead of
  // d(d+1)/2 (full) or d (diagonal) entries, as a Gaussian mechanism of its
  // own (sensitivity 1) at the multiplier of its share of the budget
  // schedule (budget_schedule below; equal to the others' without it), and
  // its own covariance type from the second iteration on.
  // The start's frames are much wider than its clusters, so a full release
  // there pays the noise of every entry at that width; one scale per
  // component is enough to size the next frames. Default OFF: it helps on
  // mixtures of rotated Gaussians and costs 0.8 to 1.3 nats per record on the
  // Adult census columns, whose clusters are degenerate along the axes
  // (docs/gmm.md, "The spherical first iteration"); SphericalFirstIteration(d)
  // says whether a fit uses it.
  bool spherical_first_iteration = false;
  // The diagonal first iteration: under the same conditions, a private fit
  // with FULL covariances releases DIAGONAL statistics in its first
  // iteration (d second-moment entries per component instead of d(d+1)/2),
  // at the multiplier of its share of the budget schedule (budget_schedule
  // below: kDiagonalIterationWeight), and full ones from the second on.
  // Unlike the spherical one it sees a cluster's scale along
  // each axis, which data degenerate along the axes need (docs/gmm.md, "The
  // diagonal first iteration": better than the full first iteration on the
  // Adult census columns and on the test mixtures). Default on; the
  // spherical first iteration, if asked for, takes precedence.
  bool diagonal_first_iteration = true;
  // With a lighter first iteration, spend the budget by its schedule
  // (kSphericalIterationWeight and kFinalIterationWeight for the spherical
  // one, kDiagonalIterationWeight and kDiagonalFinalIterationWeight for the
  // diagonal one; above, and docs/gmm.md) rather than equally over the J
  // iterations. Default on (the schedule of the diagonal one since
  // 2026-11-24, seventh session).
  bool budget_schedule = true;
  // The private start's cell frames (docs/gmm.md, "Cell frames in the fine
  // round"): its fine round releases the records near each cell's candidate
  // in a frame of the cell's size and the others as they are, which sharpens
  // the sketch where clusters are compact, and uses 4 times as many cells.
  // Default on (since 2026-11-24, ninth session): on well-separated Gaussian
  // mixtures it gains or ties in every mixture and seed measured (the
  // start-limited 10 x 4 one from 45-93% to 70-99% of fits at the optimum),
  // and it is within the spread on the Adult census columns, Gowalla and
  // park2016's synthetic data. Only with the private start.
  bool start_cell_frames = true;
  // Iterate averaging (docs/gmm.md, "Averaging the last iterates"): a
  // private fit from the private start whose noise is large for the data
  // (r >= kQuietCentreRatio, models/fit_defaults.h) and which runs J >= 4
  // iterations returns the weighted average of its last floor(J / 2)
  // iterates instead of the last one (how many: internal::
  // AveragedIterations): the i-th of them weighs i times its share of the
  // budget schedule (internal::AveragedIterateWeight). Post-processing of
  // released parameters: the releases and the ledger are the same either
  // way. Default on; it changes no fit whose J is the default (3 where the
  // noise is large, 10 only where it is small).
  bool iterate_averaging = true;
  // Adaptive J (docs/gmm.md, "Adaptive J"): a private fit from the private
  // start whose J is unset, whose noise is large for the data (r >=
  // kQuietCentreRatio, where J would be 3) and which releases jointly with
  // component frames (the defaults) plans kAdaptiveIterations releases on
  // the schedule of models/fit_defaults.h: the J = 3 fit's first three
  // iterations, the third holding back kAdaptiveHeldBackShare of its share
  // for three later releases. After the third, the movement of the released
  // means (internal::MeanMovement, released values only) chooses: if below
  // kSettledMovement, the later releases re-release the third iteration's
  // statistics and the fit pools the four into one M-step (with the noise
  // variance of the J = 3 fit's third release); otherwise they are three more EM
  // iterations, averaged as iterate_averaging says. The releases and their
  // noise are the same either way; GmmGuarantee says which ran. Default on:
  // Gaussian clusters that have settled lose nothing, and data whose EM
  // keeps moving gains (measured in docs/gmm.md, "Adaptive J": the Adult
  // census columns 0.4 to 0.8 nats per record at epsilon 0.1 to 1, Gowalla
  // about 0.01 at epsilon 0.5 and 1). Off: J = 3 there, as before
  // 2026-11-25.
  bool adaptive_iterations = true;
  // park2016's Gamma (spherical) and Wishart (full) covariance mechanisms.
  // They are NOT differentially private; using them voids the guarantee.
  bool unsafe_paper_mechanisms = false;

  // The starting point; unset means DefaultInit(): kKmeansPlusPlus for a
  // non-private fit (epsilon = infinity), kPrivate for a private one
  // (kRandom for K = 1 or K > kMaxPrivateStartComponents, models/fit_defaults.h).
  // A private fit refuses kKmeansPlusPlus; a non-private one, or one of more
  // than kMaxPrivateStartComponents components, refuses kPrivate.
  std::optional<GmmInit> init;
  // Lloyd iterations of the kKmeansPlusPlus start at most (>= 1; 300 as
  // scikit-learn's KMeans); it stops earlier once the centres move by less
  // than kKmeansStartTolerance times the data's mean coordinate variance.
  int init_max_iterations = 300;

  // Numerics (unit-ball units). Added to every covariance's diagonal and
  // used as the eigenvalue floor of noisy covariances. Finite and at least
  // kMinCovarianceFloor (1e-10).
  double covariance_floor = 1e-6;
  // Mass-loss rule: a component whose (noisy) count is below this (> 0) keeps
  // its previous mean and covariance; its weight comes from the count.
  double min_component_count = 1.0;

  // Threads and block size of the fitting engine. Released statistics are
  // exact sums (engine/exact_sum.h): they do not depend on the thread count;
  // the block size changes their last bits.
  EngineOptions engine;

  // Called after each iteration, if set.
  std::function<void(const GmmIterationReport&)> progress;

  bool IsPrivate() const { return epsilon != std::numeric_limits<double>::infinity(); }
  // The start used when `init` is unset (see there).
  GmmInit DefaultInit() const {
    if (!IsPrivate()) return GmmInit::kKmeansPlusPlus;
    return PrivateStartByDefault(components) ? GmmInit::kPrivate : GmmInit::kRandom;
  }
  // `init` if set, else DefaultInit().
  GmmInit ResolvedInit() const { return init.value_or(DefaultInit()); }
  // `iterations` if set (> 0), else DefaultIterations(IsPrivate(),
  // ResolvedInit() == kPrivate): the J of the options alone (a fit from the
  // private start may raise it from the data's size; see `iterations`).
  int ResolvedIterations() const {
    return iterations > 0 ? iterations
                          : DefaultIterations(IsPrivate(), ResolvedInit() == GmmInit::kPrivate);
  }
  // Whether the first iteration of a fit on `dimension`-dimensional data
  // releases spherical statistics: as spherical_first_iteration asks, if the
  // fit meets its conditions (see there). Public values only.
  bool SphericalFirstIteration(Eigen::Index dimension) const;
  // The covariance type of the first iteration's statistics on
  // `dimension`-dimensional data: kSpherical (SphericalFirstIteration),
  // kDiagonal (diagonal_first_iteration, a full fit meeting the same
  // conditions), else the fit's own type. Public values only.
  CovarianceType FirstIterationCovariance(Eigen::Index dimension) const;
  // Checks everything that does not need the data.
  Status Validate() const;
};

// A GMM fit's guarantee: the shared fields (dpem/accounting/guarantee.h;
// void reasons: a seeded generator, a data-derived R, the unsafe paper
// mechanisms) and how the statistics were released.
struct GmmGuarantee : PrivacyGuarantee {
  GmmMechanisms mechanisms = GmmMechanisms::kJoint;
  double per_release_epsilon = 0.0;
  // The component frames' radius rho (joint mechanism with frames): the fixed
  // radius, or with the adaptive rule the largest a frame may have
  // (sqrt(d) + 2); 0 if the fit used no frames. Frames change what is
  // released, not its sensitivity.
  double frame_radius = 0.0;
  // With frames: whether their radii followed the adaptive rule (frame_radius
  // is then their cap) or were fixed at frame_radius, and whether the clip
  // correction was applied (both post-processing choices, recorded so that a
  // model file says how it was made).
  bool adaptive_frames = false;
  bool frame_clip_correction = false;
  // Whether the first iteration released spherical statistics
  // (GmmFitOptions::SphericalFirstIteration; a choice of what is released,
  // made from public values, recorded in the ledger like any release).
  bool spherical_first_iteration = false;
  // Whether it released diagonal statistics (diagonal_first_iteration).
  bool diagonal_first_iteration = false;
  // Whether the private start's fine round used cell frames
  // (GmmFitOptions::start_cell_frames).
  bool start_cell_frames = false;
  // How many of its last iterates the fit's parameters average (1: the last
  // one alone; GmmFitOptions::iterate_averaging).
  int averaged_iterations = 1;
  // Whether the iterations ran the adaptive schedule (GmmFitOptions::
  // adaptive_iterations), and then whether its head had settled (the later
  // releases re-released the third iteration's statistics, pooled) and the
  // movement statistic that decided it (internal::MeanMovement; a function
  // of released values). settled and movement are unused otherwise.
  bool adaptive_iterations = false;
  bool settled = false;
  double movement = 0.0;
  // The budget schedule: each iteration's relative zCDP cost (empty: equal;
  // GmmIterationWeights, docs/gmm.md). Iteration j's multipliers are
  // noise_multipliers over sqrt(w_j); the ledger has each release's noise.
  std::vector<double> iteration_weights;
  // Noise multiplier of (counts, sums, second moments); for the joint
  // mechanism, the one multiplier of the joint release (of a unit-weight
  // iteration of the schedule).
  std::vector<double> noise_multipliers;
};

struct GmmFit {
  // The model of the data in its ORIGINAL units (unit-ball parameters mapped
  // back through the domain transform).
  GmmParameters parameters;
  DataDomain domain;
  GmmGuarantee guarantee;
  // Number of records (public under replace-one neighbours).
  Eigen::Index n = 0;
  int iterations = 0;
  Estimator estimator = Estimator::kMle;
  // The starting point the fit used.
  GmmInit init = GmmInit::kRandom;
  // The seed of the generator, if it was seeded (not for production).
  std::optional<std::uint64_t> seed;
};

// Fits a K-component mixture to `x` (original units), read block by block
// (the records are mapped into the unit ball per block, never copied whole),
// so a memory-mapped file larger than memory can be fitted. Requires
// options.Validate() OK, N >= K, d >= 1 matching the domain's centre. A
// private fit with a seeded generator runs, but its guarantee is void.
StatusOr<GmmFit> FitGmm(const RowSource& x, const GmmFitOptions& options, Generator& gen);

// The same on a matrix in memory; also InvalidArgument for a non-finite
// entry.
StatusOr<GmmFit> FitGmm(const DataMatrix& x, const GmmFitOptions& options, Generator& gen);

}  // namespace dpem

#endif  // DPEM_MODELS_GMM_PRIVATE_GMM_H_
