// k-means (Lloyd's algorithm with hard assignments) and its differentially
// private variants: the "k-means mode" of park2016 (Sec. 6, CDPlap / CDPgau)
// and park2017 (Sec. 7), and the DPLloyd baseline of Su, Cao, Li, Bertino and
// Jin (CODASPY 2016) with linear and with zCDP composition. docs/kmeans.md
// derives every sensitivity below and reports the Gowalla experiment.
//
// Privacy model (docs/privacy.md): neighbours differ by REPLACING one record
// (N is public); records are clipped to the public ball ||x - c|| <= R and
// mapped to the unit ball (data/domain.h). Each iteration assigns every record
// to its nearest current centre (a function of earlier RELEASED values only),
// accumulates the K counts n_k and K sums S_k, releases them with noise, and
// sets mu_k = S~_k / n~_k (post-processing). Exactly J releases per fit.
//
// Sensitivities of one iteration's (counts, sums) under replace-one, unit
// ball, hard (or any) assignments -- a record moves from cluster i to j (or
// stays in i and moves in space):
//   counts + sums jointly, L2, equal noise on every coordinate:
//     max(sqrt(1 + 1 + ||x||^2 + ||x'||^2), ||x - x'||) <= max(2, 2) = 2;
//   counts + sums jointly, L1: max(2 + ||x||_1 + ||x'||_1, ||x - x'||_1)
//     <= 2 + 2 sqrt(d)   (||x||_1 <= sqrt(d) ||x||_2);
//   counts alone, L1: 2;   sums alone, L1: 2 sqrt(d).
//
// Thread safety: the functions are pure (FitKmeans advances the Generator it
// is given); distinct calls may run concurrently on distinct Generators.
#ifndef DPEM_MODELS_KMEANS_KMEANS_H_
#define DPEM_MODELS_KMEANS_KMEANS_H_

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dpem/accounting/guarantee.h"
#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// ---------------------------------------------------------------------------
// The non-private core: nearest centres, additive statistics, NICV.

// Sufficient statistics of one assignment pass over some records. They add
// across disjoint blocks of rows (Add), so a pass can be split over threads
// or machines. `sse` is the sum over records of the squared distance to the
// nearest centre; like the exact counts it is NOT private and must never be
// released (FitKmeans drops it before any output).
struct KmeansStatistics {
  // K: records assigned to each centre (with CellFrames, below: those
  // outside their cell's frame).
  Eigen::VectorXd counts;
  // K x d: the sum of those records.
  Eigen::MatrixXd sums;
  // With CellFrames, K and K x d: the number of each centre's records inside
  // its cell's frame and the sum of their frame vectors; empty otherwise.
  Eigen::VectorXd frame_counts;
  Eigen::MatrixXd frame_sums;
  double sse = 0.0;        // sum_i min_k ||x_i - mu_k||^2.
  Eigen::Index n = 0;      // Records accumulated.

  // Zero statistics for K centres in d dimensions, without (or with) frame
  // sums.
  static KmeansStatistics Zero(Eigen::Index components, Eigen::Index dimension,
                               bool framed = false);
  // Adds the statistics of a disjoint block; InvalidArgument (this unchanged)
  // if the shapes differ.
  Status Add(const KmeansStatistics& other);
};

// Cell frames for a pass (the private start's fine round; docs/privacy.md,
// "The private start"). Cell k has a frame of radius r_k > 0 around its
// centre mu_k, or none (r_k = 0). A record x whose nearest centre is mu_k
// and whose frame vector u = (x - mu_k) / r_k has squared norm at most 1 (as
// computed) adds 1 to frame_counts(k) and u, scaled to norm at most 1 as
// computed (internal/unit_ball.h), to frame_sums.row(k); every other record
// adds 1 to counts(k) and x to sums.row(k). Either way a record adds one
// count and one vector of norm at most 1 (x lies in the unit ball), so the
// joint release of (counts, sums, frame_counts, frame_sums) has the L2
// sensitivity of the plain (counts, sums), kKmeansJointL2Sensitivity, while
// the records inside a frame carry noise r_k relative to their cell where
// the others carry 1 relative to the ball. Which part a record joins
// depends on that record alone.
struct CellFrames {
  Eigen::VectorXd radii;  // K finite values >= 0: r_k, 0 for a cell without a frame.

  // InvalidArgument unless the above hold for K centres.
  Status Validate(Eigen::Index components) const;
};

// Precomputed centres for the nearest-centre kernel
// ||x - mu||^2 = ||x||^2 - 2 x . mu + ||mu||^2, evaluated for a whole block
// of rows by one matrix product.
class NearestCentre {
 public:
  // InvalidArgument unless `centres` (K x d) is non-empty and finite.
  static StatusOr<NearestCentre> Create(const Eigen::MatrixXd& centres);

  // For each row of `block` (rows x d, finite): the index of the nearest
  // centre (ties: the lowest index) into `labels`, and its squared distance
  // (clamped at 0 against rounding) into `distances`, both resized. `scratch`
  // is reused across calls to avoid allocation.
  void Assign(const Eigen::Ref<const DataMatrix>& block, Eigen::VectorXi& labels,
              Eigen::VectorXd& distances, Eigen::MatrixXd& scratch) const;

  // The squared distance of each row of `block` to each centre, rows x K,
  // clamped at 0 against rounding: ||x||^2 - 2 (x . mu - ||mu||^2 / 2), the
  // same numbers Assign computes for the nearest centre.
  void SquaredDistances(const Eigen::Ref<const DataMatrix>& block, Eigen::MatrixXd& out) const;

  // Accumulates the block's counts, sums and sse into `stats` (which must be
  // Zero(K, d)-shaped): the per-block kernel of ComputeKmeansStatistics.
  // With `frames` (validated by the caller; stats Zero(K, d, true)-shaped),
  // each record joins its cell's frame part or its plain part (CellFrames).
  void Accumulate(const Eigen::Ref<const DataMatrix>& block, KmeansStatistics& stats,
                  Eigen::MatrixXd& scratch, const CellFrames* frames = nullptr) const;

  Eigen::Index components() const { return centres_.rows(); }
  Eigen::Index dimension() const { return centres_.cols(); }

 private:
  NearestCentre() = default;
  Eigen::MatrixXd centres_;               // K x d.
  Eigen::MatrixXd columns_;               // d x K: centres_ transposed.
  Eigen::RowVectorXd half_squared_norms_;  // 1 x K: ||mu_k||^2 / 2.
  // The compiled kernels for d (src/models/kmeans/kmeans_kernels.h), or
  // null: the assignment, and the assignment accumulated into counts and
  // sums (Accumulate without frames).
  void (*kernel_)(const double*, Eigen::Index, Eigen::Index, const double*, const double*,
                  Eigen::Index, int*, double*) = nullptr;
  double (*accumulate_kernel_)(const double*, Eigen::Index, Eigen::Index, const double*,
                               const double*, Eigen::Index, double*, double*) = nullptr;
};

// One assignment pass over `x` (N x d) in blocks of kEStepChunkRows rows
// (models/gmm/gmm.h). InvalidArgument on mismatched or non-finite input.
StatusOr<KmeansStatistics> ComputeKmeansStatistics(const Eigen::MatrixXd& centres,
                                                   const DataMatrix& x);

// The same pass over a row source on the fitting engine's threads
// (engine/engine.h): each block's counts and sums computed from zero and
// summed exactly (engine/exact_sum.h; meant for unit-ball records), so they
// do not depend on the thread count; the SSE is summed in thread order.
// InvalidArgument on mismatched shapes. With `frames`, the statistics of
// CellFrames (also summed exactly); InvalidArgument if they are invalid.
StatusOr<KmeansStatistics> ComputeKmeansStatistics(const Eigen::MatrixXd& centres,
                                                   const RowSource& x, const Engine& engine,
                                                   const CellFrames* frames = nullptr);

// The normalised intra-cluster variance of `x` under `centres`:
//   NICV = (1/N) sum_i min_k ||x_i - mu_k||^2
// (Su et al. 2016's utility measure; park2016 Fig. 3 and park2017 Fig. 4 plot
// it without defining it, and the authors' code NICV.m computes exactly this).
// Translation invariant; computed on x - shift (e.g. the domain centre) to
// limit cancellation. `shift` may be empty. Requires N >= 1.
StatusOr<double> Nicv(const Eigen::MatrixXd& centres, const DataMatrix& x,
                      const Eigen::VectorXd& shift = Eigen::VectorXd());

// The index (0-based) of each record's nearest centre.
StatusOr<Eigen::VectorXi> NearestCentreLabels(const Eigen::MatrixXd& centres,
                                              const DataMatrix& x);

// ---------------------------------------------------------------------------
// The private fit.

// Which mechanism releases each iteration's (counts, sums), and how the
// releases are composed:
//   kCdpGauss:    all counts and sums as ONE Gaussian vector, equal noise on
//                 every coordinate, L2 sensitivity 2 (see the file comment);
//                 accountant: options.accountant (default rdp).
//   kCdpLaplace:  counts (L1 2) and sums (L1 2 sqrt(d)) as two Laplace
//                 releases with equal scale; accountant: options.accountant.
//   kDplloyd:     Su et al.'s DPLloyd exactly as published: Laplace of equal
//                 scale on every count and sum coordinate, budget eps/J per
//                 iteration by linear composition, scale Delta_1 J / eps with
//                 Delta_1 = 2 + 2 sqrt(d) for dpem's domain and neighbours
//                 (the paper's d + 1 is for add/remove in [-1, 1]^d). Pure
//                 eps-DP: delta is not used.
//   kDplloydZcdp: the same release, composed by zCDP with the papers'
//                 conversion (park2017 Sec. 7).
enum class KmeansMethod { kCdpGauss, kCdpLaplace, kDplloyd, kDplloydZcdp };
// "cdp-gauss", "cdp-laplace", "dplloyd", "dplloyd-zcdp".
std::string_view KmeansMethodName(KmeansMethod method);
// The inverse; InvalidArgument listing the accepted names otherwise.
StatusOr<KmeansMethod> ParseKmeansMethod(std::string_view name);
// True for the methods that need a delta (Gaussian noise or zCDP).
bool KmeansMethodNeedsDelta(KmeansMethod method);

// L2 sensitivity of the joint (counts, sums) vector, equal noise per
// coordinate: max(sqrt(2 + 2), 2) = 2.
inline constexpr double kKmeansJointL2Sensitivity = 2.0;
// L1 sensitivity of the K counts: 2.
inline constexpr double kKmeansCountsL1Sensitivity = 2.0;
// L1 sensitivity of the K x d sums: 2 sqrt(d).
double KmeansSumsL1Sensitivity(Eigen::Index dimension);
// L1 sensitivity of the joint (counts, sums) vector: 2 + 2 sqrt(d).
double KmeansJointL1Sensitivity(Eigen::Index dimension);

// DPLloyd's noise multiplier is J / eps, raised by this relative margin so
// that the accountant's conservative rounding (a relative 1e-12 plus an ulp)
// still certifies at most the target epsilon.
inline constexpr double kDplloydRoundingMargin = 1e-9;

// Where the centres start (unless KmeansFitOptions::initial_centres are
// given): kRandom, uniform in the domain's ball from the generator, never the
// data; kKmeansPlusPlus, greedy k-means++ seeding on the records (as
// scikit-learn's KMeans), which reads the data without noise: plain Lloyd
// only; kPrivate, the private start (docs/privacy.md, "The private start":
// two Gaussian releases of noisy counts and sums of Voronoi cells, the
// second's placed from the first's release, clustered by weighted
// k-means++), which takes 20% of the budget: private cdp-gauss and
// cdp-laplace fits of at most kMaxPrivateStartComponents centres only.
enum class KmeansInit { kRandom, kKmeansPlusPlus, kPrivate };
std::string_view KmeansInitName(KmeansInit init);  // "random", "kmeans++", "private"
StatusOr<KmeansInit> ParseKmeansInit(std::string_view name);
// True for the methods that accept the private start (cdp-gauss and
// cdp-laplace; the DPLloyd methods are the published baseline, kept as
// published with their random start).
bool KmeansMethodHasPrivateStart(KmeansMethod method);

// What one iteration reports to a progress callback: no data-dependent value
// of a private fit.
struct KmeansIterationReport {
  int iteration = 0;  // 1-based.
  int iterations = 0;
  // NICV (unit-ball units) of the centres used in this iteration; only for
  // non-private fits (NaN for private ones).
  double nicv = std::numeric_limits<double>::quiet_NaN();
};

struct KmeansFitOptions {
  // K >= 1 (<= N): no default.
  int components = 0;
  // J >= 1, or 0 for ResolvedIterations()'s default (models/fit_defaults.h:
  // 3 from the private start, 10 from the random start, 100 for plain Lloyd).
  int iterations = 0;
  KmeansMethod method = KmeansMethod::kCdpGauss;
  // Total privacy. No defaults; epsilon = +infinity runs plain Lloyd with the
  // same code and no releases. delta in (0, 1) is required by
  // KmeansMethodNeedsDelta methods and ignored by kDplloyd.
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double delta = std::numeric_limits<double>::quiet_NaN();
  // The public domain (R has no default; data/domain.h).
  DataDomain domain;
  // Accountant of kCdpGauss and kCdpLaplace (the DPLloyd methods fix theirs:
  // linear, zcdp).
  AccountantKind accountant = kDefaultAccountant;
  // Empty-cluster rule: a centre whose noisy count is below
  //   max(min_cluster_count, standard deviation of one sum coordinate's noise)
  // keeps its previous position (its noisy mean would be mostly noise). The
  // rule reads released counts and public noise scales only. > 0.
  double min_cluster_count = 1.0;
  // Optional public initial centres in ORIGINAL units (K x d), e.g. to start
  // several methods from the same centres; empty: drawn uniformly in the
  // domain's ball from the generator, independent of the data.
  Eigen::MatrixXd initial_centres;
  // Without initial centres: the seeding; unset means kKmeansPlusPlus for
  // plain Lloyd (epsilon = infinity), kPrivate for a private fit whose method
  // has it (KmeansMethodHasPrivateStart) and kRandom for the DPLloyd methods.
  // A private fit refuses kKmeansPlusPlus; plain Lloyd refuses kPrivate.
  std::optional<KmeansInit> init;
  // Threads and block size of the fitting engine. Released statistics are
  // exact sums (engine/exact_sum.h): they do not depend on the thread count;
  // the block size changes their last bits.
  EngineOptions engine;
  // Called after each iteration, if set.
  std::function<void(const KmeansIterationReport&)> progress;

  bool IsPrivate() const { return epsilon != std::numeric_limits<double>::infinity(); }
  // The accountant that certifies this method's ledger.
  AccountantKind EffectiveAccountant() const;
  // `init` if set, else the default (see there).
  KmeansInit ResolvedInit() const;
  // Whether the fit starts by the private start: no public centres given and
  // ResolvedInit() is kPrivate.
  bool StartsPrivately() const;
  // `iterations` if set (> 0), else DefaultIterations(IsPrivate(),
  // StartsPrivately()); a private fit from the private start may then take
  // fewer from the number of records (FitKmeans, docs/kmeans.md).
  int ResolvedIterations() const;
  // Checks everything that does not need the data.
  Status Validate() const;
};

// A k-means fit's guarantee: the shared fields (dpem/accounting/guarantee.h;
// target_delta is 0 for kDplloyd, pure DP) and the noise multipliers.
struct KmeansGuarantee : PrivacyGuarantee {
  // Noise scale / sensitivity of each release kind of one iteration.
  std::vector<double> noise_multipliers;
};

struct KmeansFit {
  Eigen::MatrixXd centres;  // K x d, ORIGINAL units.
  DataDomain domain;
  KmeansMethod method = KmeansMethod::kCdpGauss;
  KmeansGuarantee guarantee;
  Eigen::Index n = 0;  // Public under replace-one.
  int iterations = 0;
  // The seeding used; kRandom also when initial centres were given.
  KmeansInit init = KmeansInit::kRandom;
  std::optional<std::uint64_t> seed;
};

// Fits K centres to `x` (original units), read block by block through the
// public domain (never copied whole; a memory-mapped file larger than memory
// streams), on the fitting engine. Requires options.Validate() OK, N >= K,
// columns matching the domain centre and the initial centres. A private fit
// with a seeded generator runs, but its guarantee is void.
StatusOr<KmeansFit> FitKmeans(const RowSource& x, const KmeansFitOptions& options,
                              Generator& gen);

// The same on a matrix in memory; also InvalidArgument for non-finite data.
StatusOr<KmeansFit> FitKmeans(const DataMatrix& x, const KmeansFitOptions& options,
                              Generator& gen);

}  // namespace dpem

#endif  // DPEM_MODELS_KMEANS_KMEANS_H_
