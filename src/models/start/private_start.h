// The private start of a Gaussian-mixture or k-means fit (docs/privacy.md,
// "The private start"; docs/gmm.md, "Starting points"): a noisy sketch of the
// data from TWO releases, then clustering of the sketch, which is
// post-processing. Private to the library.
//
//  1. Coarse round: kStart.coarse_per_component K candidate centres drawn
//     uniformly in the unit ball from the generator (public, independent of
//     the data). One pass assigns each record to its nearest candidate and
//     releases the counts and sums of the cells as one Gaussian vector: the
//     k-means joint release (models/kmeans/kmeans.h; L2 sensitivity 2 under
//     replace-one), whatever the number of cells, because a record lies in
//     exactly one cell. (Gaussian for every fit, cdp-laplace k-means
//     included: the discrete Laplace's rounding charge grows with the number
//     of coordinates, which is large here; review finding.) The cells whose noisy
//     count reaches kStart.count_sigmas noise standard deviations (at least the
//     largest) become sketch points S~ / n~ with weights n~.
//  2. Fine round: M candidates (PrivateStartPlan::fine_candidates, a function
//     of K, N and the noise scale only) split among the coarse sketch points
//     in proportion to their weights and drawn around each (the splitting
//     step of the Linde-Buzo-Gray quantiser), so that the fine cells follow
//     the data where a uniform partition would merge clusters. With
//     PrivateStartPlan::cell_frames (on by default for GMM fits,
//     GmmFitOptions::start_cell_frames; not used by k-means), each cell gets
//     a frame (FineCellFrames: its candidate and a radius of
//     kStart.frame_reach times the distance to the nearest other candidate,
//     or none), and each record joins either its cell's frame part (count
//     and frame vector (x - c) / r) or its plain part (count and x); one
//     Gaussian vector releases [counts; sums; frame counts; frame sums]
//     (CellFrames; sensitivity still 2). A cell's sketch point (CellMean)
//     is (n_in c + r F + S) / (n_in + n_out) from the two noisy parts. The
//     cells kept (at least K) form the sketch.
//  3. Weighted k-means++ and Lloyd on the sketch, restarted kStart.restarts
//     times, give K centres (post-processing).
//
// This is a private coreset in the sense of Google's private clustering (a
// partition of the domain released as noisy counts and sums, then k-means++
// on it), with a two-level data-adaptive Voronoi partition in place of a
// hashing tree; over-seeding (many cells) costs no privacy, only noise per
// cell. scripts/private_start_experiment.py chose the constants.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_START_PRIVATE_START_H_
#define DPEM_MODELS_START_PRIVATE_START_H_

#include <Eigen/Core>

#include <vector>

#include "dpem/accounting/calibration.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::internal {

// The start's share of a fit's zCDP cost (CalibrationOptions::start_share):
// the named budget split of every private start (docs/gmm.md, "Starting
// points", for the experiment that chose it).
inline constexpr double kPrivateStartShare = 0.2;
// The start's design constants, all public: kStart below.
struct PrivateStartConstants {
  // The coarse round's share of the start's zCDP cost; the fine round gets
  // the rest.
  double coarse_share = 0.15;
  // Coarse candidates per component.
  int coarse_per_component = 2;
  // At most this many fine candidates per component (M <= oversampling K),
  // and at most max_fine_candidates in all (the sketch's clustering holds
  // M x K distances: 80 MB at K = kMaxPrivateStartComponents).
  int oversampling = 10;
  Eigen::Index max_fine_candidates = 10000;
  // M is also at most N / (records_per_cell_sigmas * sigma): with records
  // spread evenly, each fine cell's count would be this many standard
  // deviations sigma of the count noise.
  double records_per_cell_sigmas = 10.0;
  // The same two with cell frames (PrivateStartPlan::cell_frames), whose
  // sharper cell means make more, smaller cells pay (docs/gmm.md, "Cell
  // frames in the fine round").
  int framed_oversampling = 40;
  double framed_records_per_cell_sigmas = 2.5;
  // A cell whose noisy count is below this many noise standard deviations
  // is dropped from the sketch (its mean would be mostly noise).
  double count_sigmas = 3.0;
  // Weighted k-means++ + Lloyd runs on the sketch (post-processing: free),
  // at most; fewer for large K (StartRestarts).
  int restarts = 10;
  int lloyd_iterations = 50;
  // The point-centre distances the clustering of the sketch may evaluate in
  // all its runs (about a second of CPU): the restarts are cut to fit.
  double clustering_work = 2e8;
  // The smallest standard deviation of a fine candidate's jitter (unit-ball
  // units), and the smallest radius of a fine cell's frame.
  double min_fine_jitter = 1e-6;
  // The fine round's cell frames (FineCellFrames): a cell's radius is this
  // many times the distance from its candidate to the nearest other fine
  // candidate (below max_framed_radius, else no frame; records outside a
  // frame join the plain part, so nothing is clipped).
  double frame_reach = 2.0;
  // A fine cell whose radius would be at least this (the ball's radius)
  // gets no frame (radius 0): its framed mean, noise r in the ball's units,
  // could not be sharper than its plain mean, noise 1.
  double max_framed_radius = 1.0;
};

// The constants of every private start.
inline constexpr PrivateStartConstants kStart{};

// The restarts of the sketch's clustering for P points and K centres:
// floor(kStart.clustering_work / (P K kStart.lloyd_iterations)), clamped to
// [1, kStart.restarts]. Public values only.
int StartRestarts(Eigen::Index points, int k);

// The number of releases of the start, as ledgers and model files list them.
inline constexpr std::size_t kPrivateStartReleases = 2;

// The start's two Gaussian releases for calibration (coarse, then fine),
// with `sampling`, their noise weights in the ratio of kStart.coarse_share.
ReleasePattern PrivateStartPattern(NoiseSampling sampling);

// What the start releases, fixed before the data is read.
struct PrivateStartPlan {
  NoiseSpec coarse;  // "start / coarse counts and sums".
  NoiseSpec fine;    // "start / counts and sums".
  int components = 0;
  Eigen::Index coarse_candidates = 0;  // kStart.coarse_per_component K.
  // min(kStart.oversampling K, kStart.max_fine_candidates,
  // floor(N / (kStart.records_per_cell_sigmas sigma))), at least K, with the
  // framed_ constants if cell_frames; sigma is the standard deviation of one
  // fine count's noise.
  Eigen::Index fine_candidates = 0;
  // Whether the fine round releases its cells' frame parts as well
  // (CellFrames, FineCellFrames; GmmFitOptions::start_cell_frames).
  bool cell_frames = false;
};

// The plan for K components and N records from the calibrated multipliers
// (CalibrationResult::start_noise_multipliers, two), with or without cell
// frames. Public values only. InvalidArgument on bad arguments.
StatusOr<PrivateStartPlan> MakePrivateStartPlan(NoiseSampling sampling,
                                                const std::vector<double>& multipliers, int k,
                                                Eigen::Index n, bool cell_frames = false);

// Checks both releases on public values, drawing nothing (CheckRelease for
// the coarse round's 2K (d + 1) coordinates and the fine round's M (d + 1),
// M (2d + 2) with cell frames): called before the data is read.
Status CheckPrivateStart(const PrivateStartPlan& plan, Eigen::Index d);

// K centres of the sketch and, for each, its share of the sketch's weight
// and the weighted mean squared distance of its sketch points to it.
struct StartClusters {
  Eigen::MatrixXd centres;  // K x d, in the unit ball.
  Eigen::VectorXd weights;  // K, sum 1.
  Eigen::VectorXd spreads;  // K, >= 0.
};

// Steps 1 to 3 above on `unit` (records in the unit ball): two releases,
// recorded in `ledger`. Requires 1 <= K <= unit.rows().
StatusOr<StartClusters> PrivateStart(const RowSource& unit, const PrivateStartPlan& plan,
                                     const Engine& engine, Generator& gen,
                                     PrivacyLedger& ledger);

// Checks a model file's ledger: with `starts_privately`, the start's two
// releases ("start / coarse counts and sums", "start / counts and sums")
// appear once each, in that order, before the first iteration's; without it,
// no release is labelled "start / ". InvalidArgument naming the problem.
Status CheckStartInLedger(const PrivacyLedger& ledger, bool starts_privately);

// For each row of `points`, the Euclidean distance to the nearest other row:
// that row found by blocks of matrix products (the expanded squared
// distances, so a near-tie may go either way), its distance computed as the
// norm of the difference; +infinity for a lone row.
Eigen::VectorXd NearestOtherDistances(const Eigen::MatrixXd& points);

// The fine round's `m` candidates around the coarse sketch `points` (weights
// > 0): step 2 above, post-processing of the coarse release. Exactly m rows,
// finite, in the unit ball.
StatusOr<Eigen::MatrixXd> FineCandidates(const Eigen::MatrixXd& points,
                                         const Eigen::VectorXd& weights, Eigen::Index m,
                                         Generator& gen);

// The fine round's cell frames for its candidates (M x d): radius
// kStart.frame_reach times NearestOtherDistances, at least
// kStart.min_fine_jitter, and 0 (no frame) where that is at least
// kStart.max_framed_radius or infinite (a lone candidate). Public values only
// (post-processing of the coarse release).
CellFrames FineCellFrames(const Eigen::MatrixXd& fine);

// The weight of cell `cell` in the sketch: its released count, plus its
// frame count if it has a frame.
double CellCount(const KmeansStatistics& noisy, Eigen::Index cell, const CellFrames* frames);

// The sketch point of cell `cell` from released statistics (`noisy`, with
// frame counts and sums if `frames` is given) and the release's noise scale
// `sigma`; post-processing. Without a frame: sum / n, or the candidate if
// n < 1 or the quotient is not finite. With a frame of radius r around
// candidate c: the mean of the cell's records estimated as
//   (n_in c + r F + S) / (n_in + n_out),
// with n_in, n_out the frame and plain counts clamped at 0, and F, S the
// frame and plain sums each projected onto the ball of radius n_in, n_out
// (the sum of n vectors of the unit ball lies in it). The plain part (S and
// n_out) is left out when its released count is below kStart.count_sigmas
// sigma and n_in >= 1: a part that small cannot be told from empty, and its
// noise would swamp the frame's; the candidate if the denominator is below
// 1 or the quotient is not finite. Projected onto the unit ball.
Eigen::RowVectorXd CellMean(const KmeansStatistics& noisy, Eigen::Index cell,
                            const Eigen::MatrixXd& candidates, const CellFrames* frames,
                            double sigma);

// M points uniform in the unit ball, drawn from the generator only (a
// normalised Gaussian direction, radius U^(1/d)): the coarse candidates of
// the private start and the random start of GMM and k-means fits.
StatusOr<Eigen::MatrixXd> UniformInUnitBall(Eigen::Index m, Eigen::Index d, Generator& gen);

// Releases (counts, sums) as one vector [counts; sums row by row]: the
// k-means joint release, shared by the start and by private k-means. With
// the frame parts (CellFrames), [counts; sums row by row; frame counts;
// frame sums row by row], also one vector.
Status ReleaseCountsAndSums(KmeansStatistics& s, const NoiseSpec& spec, Generator& gen,
                            PrivacyLedger& ledger);

// Weighted k-means on points (M x d) with weights (> 0): StartRestarts(M, K)
// runs of weighted k-means++ seeding and at most kStart.lloyd_iterations Lloyd
// steps; the run of least weighted squared error wins. Requires 1 <= K <= M.
StatusOr<StartClusters> WeightedKmeans(const Eigen::MatrixXd& points,
                                       const Eigen::VectorXd& weights, int k, Generator& gen);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_START_PRIVATE_START_H_
