// The private start: see models/start/private_start.h.
#include "models/start/private_start.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "dpem/random/samplers.h"
#include "internal/linear_algebra.h"
#include "internal/unit_ball.h"

namespace dpem::internal {
namespace {

constexpr char kCoarseLabel[] = "coarse counts and sums";
constexpr char kFineLabel[] = "counts and sums";

// Squared distances of every point (M x d) to every centre (K x d), M x K.
Eigen::MatrixXd SquaredDistances(const Eigen::MatrixXd& points, const Eigen::MatrixXd& centres) {
  Eigen::MatrixXd d2 = (-2.0 * points * centres.transpose()).eval();
  d2.colwise() += points.rowwise().squaredNorm();
  d2.rowwise() += centres.rowwise().squaredNorm().transpose();
  return d2.cwiseMax(0.0);
}

// Draws an index with probability proportional to `mass` (>= 0, sum > 0).
Eigen::Index DrawProportional(const Eigen::VectorXd& mass, Generator& gen) {
  const double target = gen.UniformOpen01() * mass.sum();
  double cumulative = 0.0;
  for (Eigen::Index i = 0; i < mass.size(); ++i) {
    cumulative += mass(i);
    if (cumulative > target && mass(i) > 0.0) return i;
  }
  Eigen::Index last = 0;
  for (Eigen::Index i = 0; i < mass.size(); ++i) {
    if (mass(i) > 0.0) last = i;
  }
  return last;
}

// Weighted k-means++ seeding (D^2 sampling with mass w_i D_i^2).
Eigen::MatrixXd WeightedSeeds(const Eigen::MatrixXd& points, const Eigen::VectorXd& weights,
                              int k, Generator& gen) {
  Eigen::MatrixXd centres(k, points.cols());
  centres.row(0) = points.row(DrawProportional(weights, gen));
  Eigen::VectorXd nearest = SquaredDistances(points, centres.topRows(1)).col(0);
  for (int c = 1; c < k; ++c) {
    const Eigen::VectorXd mass = weights.cwiseProduct(nearest);
    const Eigen::Index pick = mass.sum() > 0.0 ? DrawProportional(mass, gen)
                                               : DrawProportional(weights, gen);
    centres.row(c) = points.row(pick);
    nearest = nearest.cwiseMin(SquaredDistances(points, centres.row(c)).col(0));
  }
  return centres;
}

// Weighted Lloyd from `clusters.centres`; fills weights and spreads and
// returns the weighted squared error.
double WeightedLloyd(const Eigen::MatrixXd& points, const Eigen::VectorXd& weights,
                     StartClusters& clusters) {
  const Eigen::Index k = clusters.centres.rows();
  Eigen::VectorXi labels = Eigen::VectorXi::Constant(points.rows(), -1);
  for (int it = 0; it < kStart.lloyd_iterations; ++it) {
    const Eigen::MatrixXd d2 = SquaredDistances(points, clusters.centres);
    bool moved = false;
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      Eigen::Index best = 0;
      d2.row(i).minCoeff(&best);
      moved = moved || labels(i) != best;
      labels(i) = static_cast<int>(best);
    }
    if (!moved) break;
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(k, points.cols());
    Eigen::VectorXd mass = Eigen::VectorXd::Zero(k);
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      sums.row(labels(i)) += weights(i) * points.row(i);
      mass(labels(i)) += weights(i);
    }
    for (Eigen::Index c = 0; c < k; ++c) {
      if (mass(c) > 0.0) clusters.centres.row(c) = sums.row(c) / mass(c);
    }
  }
  const Eigen::MatrixXd d2 = SquaredDistances(points, clusters.centres);
  clusters.weights = Eigen::VectorXd::Zero(k);
  clusters.spreads = Eigen::VectorXd::Zero(k);
  double error = 0.0;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    Eigen::Index c = 0;
    const double d = d2.row(i).minCoeff(&c);
    clusters.weights(c) += weights(i);
    clusters.spreads(c) += weights(i) * d;
    error += weights(i) * d;
  }
  for (Eigen::Index c = 0; c < k; ++c) {
    if (clusters.weights(c) > 0.0) clusters.spreads(c) /= clusters.weights(c);
  }
  clusters.weights /= clusters.weights.sum();
  return error;
}

// The sketch of released (counts, sums): the cells that pass the count
// threshold (at least the k largest counts), as points and weights.
void SketchFromRelease(const KmeansStatistics& noisy, const Eigen::MatrixXd& candidates,
                       const CellFrames* frames, Eigen::Index k, double sigma,
                       Eigen::MatrixXd& points, Eigen::VectorXd& weights) {
  const Eigen::Index m = noisy.counts.size();
  std::vector<Eigen::Index> order(static_cast<size_t>(m));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  Eigen::VectorXd counts(m);
  for (Eigen::Index j = 0; j < m; ++j) counts(j) = CellCount(noisy, j, frames);
  std::stable_sort(order.begin(), order.end(),
                   [&](Eigen::Index a, Eigen::Index b) { return counts(a) > counts(b); });
  Eigen::Index kept = 0;
  while (kept < m && (kept < k || counts(order[kept]) >= kStart.count_sigmas * sigma)) {
    ++kept;
  }
  points.resize(kept, candidates.cols());
  weights.resize(kept);
  for (Eigen::Index i = 0; i < kept; ++i) {
    const Eigen::Index cell = order[static_cast<size_t>(i)];
    points.row(i) = CellMean(noisy, cell, candidates, frames, sigma);
    weights(i) = std::max(counts(cell), 1.0);
  }
}

// Splits `total` into integer shares proportional to `weights` (> 0) by
// largest remainders: exactly `total` in all.
std::vector<Eigen::Index> Apportion(const Eigen::VectorXd& weights, Eigen::Index total) {
  const Eigen::VectorXd exact = weights / weights.sum() * static_cast<double>(total);
  std::vector<Eigen::Index> shares(static_cast<size_t>(weights.size()));
  std::vector<std::pair<double, Eigen::Index>> remainders;
  Eigen::Index given = 0;
  for (Eigen::Index i = 0; i < weights.size(); ++i) {
    shares[static_cast<size_t>(i)] = static_cast<Eigen::Index>(std::floor(exact(i)));
    given += shares[static_cast<size_t>(i)];
    remainders.emplace_back(exact(i) - std::floor(exact(i)), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t r = 0; given < total; ++r, ++given) {
    ++shares[static_cast<size_t>(remainders[r % remainders.size()].second)];
  }
  return shares;
}

// One round: the cells of `candidates` (with `frames`, if given), their
// statistics released by `spec`, and the sketch of the cells kept (at least
// `min_kept`).
Status SketchRound(const RowSource& unit, const Eigen::MatrixXd& candidates,
                   const CellFrames* frames, const NoiseSpec& spec, Eigen::Index min_kept,
                   const Engine& engine, Generator& gen, PrivacyLedger& ledger,
                   Eigen::MatrixXd& points, Eigen::VectorXd& weights) {
  DPEM_ASSIGN_OR_RETURN(KmeansStatistics s,
                        ComputeKmeansStatistics(candidates, unit, engine, frames));
  DPEM_RETURN_IF_ERROR(ReleaseCountsAndSums(s, spec, gen, ledger));
  SketchFromRelease(s, candidates, frames, min_kept, spec.NoiseScale(), points, weights);
  return OkStatus();
}

}  // namespace

int StartRestarts(Eigen::Index points, int k) {
  const double one_run = static_cast<double>(points) * k * kStart.lloyd_iterations;
  const double affordable = std::floor(kStart.clustering_work / one_run);
  return static_cast<int>(std::clamp(affordable, 1.0, static_cast<double>(kStart.restarts)));
}

ReleasePattern PrivateStartPattern(NoiseSampling sampling) {
  // Noise weights 1 / sqrt(share): zCDP cost in the ratio of the shares.
  constexpr MechanismKind kGaussian = MechanismKind::kGaussian;
  return {"private start",
          {{kGaussian, 1, 1.0 / std::sqrt(kStart.coarse_share), kCoarseLabel, sampling},
           {kGaussian, 1, 1.0 / std::sqrt(1.0 - kStart.coarse_share), kFineLabel, sampling}}};
}

StatusOr<PrivateStartPlan> MakePrivateStartPlan(NoiseSampling sampling,
                                                const std::vector<double>& multipliers, int k,
                                                Eigen::Index n, bool cell_frames) {
  if (multipliers.size() != 2) {
    return InvalidArgumentError("the private start needs two noise multipliers");
  }
  if (k < 1) return InvalidArgumentError("the private start needs K >= 1");
  constexpr double kSensitivity = kKmeansJointL2Sensitivity;
  constexpr MechanismKind kGaussian = MechanismKind::kGaussian;
  PrivateStartPlan plan;
  plan.coarse = {kGaussian, kSensitivity, multipliers[0],
                 std::string("start / ") + kCoarseLabel, sampling};
  plan.fine = {kGaussian, kSensitivity, multipliers[1], std::string("start / ") + kFineLabel,
               sampling};
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(plan.coarse));
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(plan.fine));
  plan.components = k;
  plan.coarse_candidates = static_cast<Eigen::Index>(kStart.coarse_per_component) * k;
  plan.cell_frames = cell_frames;
  const double per_cell =
      cell_frames ? kStart.framed_records_per_cell_sigmas : kStart.records_per_cell_sigmas;
  const double oversampling = cell_frames ? kStart.framed_oversampling : kStart.oversampling;
  const double by_noise =
      std::floor(static_cast<double>(n) / (per_cell * plan.fine.NoiseScale()));
  const double most =
      std::min(oversampling * k, static_cast<double>(kStart.max_fine_candidates));
  plan.fine_candidates = static_cast<Eigen::Index>(std::max<double>(k, std::min(most, by_noise)));
  return plan;
}

Status CheckPrivateStart(const PrivateStartPlan& plan, Eigen::Index d) {
  DPEM_RETURN_IF_ERROR(CheckRelease(plan.coarse, plan.coarse_candidates * (d + 1)));
  const Eigen::Index per_cell = plan.cell_frames ? 2 * (d + 1) : d + 1;
  return CheckRelease(plan.fine, plan.fine_candidates * per_cell);
}

CellFrames FineCellFrames(const Eigen::MatrixXd& fine) {
  CellFrames frames;
  const Eigen::VectorXd nearest = NearestOtherDistances(fine);
  frames.radii.resize(fine.rows());
  for (Eigen::Index j = 0; j < fine.rows(); ++j) {
    const double reach = kStart.frame_reach * nearest(j);  // +infinity for a lone one.
    frames.radii(j) =
        reach < kStart.max_framed_radius ? std::max(reach, kStart.min_fine_jitter) : 0.0;
  }
  return frames;
}

double CellCount(const KmeansStatistics& noisy, Eigen::Index cell, const CellFrames* frames) {
  const bool framed = frames != nullptr && frames->radii(cell) > 0.0;
  return noisy.counts(cell) + (framed ? noisy.frame_counts(cell) : 0.0);
}

Eigen::RowVectorXd CellMean(const KmeansStatistics& noisy, Eigen::Index cell,
                            const Eigen::MatrixXd& candidates, const CellFrames* frames,
                            double sigma) {
  const double n_out = std::max(noisy.counts(cell), 0.0);
  Eigen::RowVectorXd plain = noisy.sums.row(cell);
  double total = n_out;
  Eigen::RowVectorXd sum = plain;
  if (frames != nullptr && frames->radii(cell) > 0.0) {
    const double n_in = std::max(noisy.frame_counts(cell), 0.0);
    Eigen::RowVectorXd framed = noisy.frame_sums.row(cell);
    ProjectOntoBall(framed, n_in);
    ProjectOntoBall(plain, n_out);
    sum = n_in * candidates.row(cell) + frames->radii(cell) * framed;
    total = n_in;
    const bool plain_part_empty =
        noisy.counts(cell) < kStart.count_sigmas * sigma && n_in >= 1.0;
    if (!plain_part_empty) {
      sum += plain;
      total += n_out;
    }
  }
  // A cell kept only to reach K stands at its candidate.
  if (!(total >= 1.0)) return candidates.row(cell);
  Eigen::RowVectorXd mean = sum / total;
  if (!mean.allFinite()) return candidates.row(cell);
  ProjectOntoUnitBall(mean);
  return mean;
}

// The fine round's M candidates: each coarse sketch point gets a share of
// them proportional to its weight, drawn around it from N(point, s^2 I) with
// s = half the distance to its nearest other coarse point over sqrt(d) (the
// splitting step of Linde, Buzo and Gray's vector quantiser), projected onto
// the ball. Post-processing of the coarse release.
Eigen::VectorXd NearestOtherDistances(const Eigen::MatrixXd& points) {
  const Eigen::Index m = points.rows();
  Eigen::VectorXd nearest = Eigen::VectorXd::Constant(m, std::numeric_limits<double>::infinity());
  if (m < 2) return nearest;
  // The nearest other row found by blocks of SquaredDistances (matrix
  // products: M may be 10,000 with cell frames), its distance then computed
  // directly from the difference.
  constexpr Eigen::Index kRowsPerBlock = 256;
  for (Eigen::Index start = 0; start < m; start += kRowsPerBlock) {
    const Eigen::Index rows = std::min(kRowsPerBlock, m - start);
    Eigen::MatrixXd d2 = SquaredDistances(points.middleRows(start, rows), points);
    for (Eigen::Index i = 0; i < rows; ++i) {
      d2(i, start + i) = std::numeric_limits<double>::infinity();
      Eigen::Index other = 0;
      d2.row(i).minCoeff(&other);
      nearest(start + i) = (points.row(start + i) - points.row(other)).norm();
    }
  }
  return nearest;
}

StatusOr<Eigen::MatrixXd> FineCandidates(const Eigen::MatrixXd& points,
                                         const Eigen::VectorXd& weights, Eigen::Index m,
                                         Generator& gen) {
  const Eigen::Index d = points.cols();
  const Eigen::VectorXd nearest = NearestOtherDistances(points);
  const std::vector<Eigen::Index> shares = Apportion(weights, m);
  Eigen::MatrixXd next(m, d);
  Eigen::Index row = 0;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    // A lone point splits at the ball's scale, one whose nearest neighbour
    // coincides with it at kStart.min_fine_jitter: never a zero standard deviation
    // (review finding).
    const double reach = std::isfinite(nearest(i)) ? nearest(i) : 1.0;
    const double scale = std::max(kStart.min_fine_jitter, 0.5 * reach / std::sqrt(d));
    for (Eigen::Index c = 0; c < shares[static_cast<size_t>(i)]; ++c, ++row) {
      DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd jitter, SampleGaussianVector(gen, d, scale));
      Eigen::RowVectorXd p = points.row(i) + jitter.transpose();
      ProjectOntoUnitBall(p);
      next.row(row) = p;
    }
  }
  return next;
}

Status CheckStartInLedger(const PrivacyLedger& ledger, bool starts_privately) {
  std::vector<std::string> start;
  bool iterations_seen = false;
  for (const Release& r : ledger.releases()) {
    if (r.label.rfind("start / ", 0) == 0) {
      if (iterations_seen) return InvalidArgumentError("a start release follows an iteration's");
      start.push_back(r.label);
    }
    iterations_seen = iterations_seen || r.label.rfind("iteration ", 0) == 0;
  }
  const std::vector<std::string> expected = {std::string("start / ") + kCoarseLabel,
                                             std::string("start / ") + kFineLabel};
  if (starts_privately ? start != expected : !start.empty()) {
    return InvalidArgumentError(starts_privately
                                    ? "a privately started model must list the start's two "
                                      "releases before its iterations'"
                                    : "only a privately started model lists start releases");
  }
  return OkStatus();
}

StatusOr<Eigen::MatrixXd> UniformInUnitBall(Eigen::Index m, Eigen::Index d, Generator& gen) {
  Eigen::MatrixXd points(m, d);
  for (Eigen::Index i = 0; i < m; ++i) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd dir, SampleGaussianVector(gen, d, 1.0));
    const double radius = std::pow(gen.UniformOpen01(), 1.0 / static_cast<double>(d));
    const double norm = dir.norm();
    points.row(i) = (norm > 0 ? dir / norm : dir).transpose() * radius;
  }
  return points;
}

Status ReleaseCountsAndSums(KmeansStatistics& s, const NoiseSpec& spec, Generator& gen,
                            PrivacyLedger& ledger) {
  s.sse = std::numeric_limits<double>::quiet_NaN();
  // [counts; sums row by row; frame counts; frame sums row by row]: a
  // matrix's transpose, reshaped column-major, lists its rows one after the
  // other.
  const Eigen::Index k = s.counts.size(), n = s.sums.size();
  const Eigen::Index fk = s.frame_counts.size(), fn = s.frame_sums.size();
  Eigen::VectorXd v(k + n + fk + fn);
  v << s.counts, s.sums.transpose().reshaped(), s.frame_counts,
      s.frame_sums.transpose().reshaped();
  DPEM_RETURN_IF_ERROR(ReleaseVector(v, spec, gen, ledger));
  s.counts = v.head(k);
  s.sums = v.segment(k, n).reshaped(s.sums.cols(), s.sums.rows()).transpose();
  s.frame_counts = v.segment(k + n, fk);
  s.frame_sums = v.tail(fn).reshaped(s.frame_sums.cols(), s.frame_sums.rows()).transpose();
  return OkStatus();
}

StatusOr<StartClusters> WeightedKmeans(const Eigen::MatrixXd& points,
                                       const Eigen::VectorXd& weights, int k, Generator& gen) {
  if (k < 1 || k > points.rows() || weights.size() != points.rows() ||
      !(weights.array() > 0.0).all() || !points.allFinite()) {
    return InvalidArgumentError("weighted k-means needs 1 <= K <= M points with weights > 0");
  }
  StartClusters best;
  double best_error = std::numeric_limits<double>::infinity();
  for (int run = 0; run < StartRestarts(points.rows(), k); ++run) {
    StartClusters clusters;
    clusters.centres = WeightedSeeds(points, weights, k, gen);
    const double error = WeightedLloyd(points, weights, clusters);
    if (error < best_error) {
      best_error = error;
      best = std::move(clusters);
    }
  }
  return best;
}

StatusOr<StartClusters> PrivateStart(const RowSource& unit, const PrivateStartPlan& plan,
                                     const Engine& engine, Generator& gen,
                                     PrivacyLedger& ledger) {
  const int k = plan.components;
  if (k < 1 || k > unit.rows()) return InvalidArgumentError("the start needs 1 <= K <= N");
  Eigen::MatrixXd points;
  Eigen::VectorXd weights;
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd coarse,
                        UniformInUnitBall(plan.coarse_candidates, unit.cols(), gen));
  DPEM_RETURN_IF_ERROR(
      SketchRound(unit, coarse, nullptr, plan.coarse, 1, engine, gen, ledger, points, weights));
  DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd fine,
                        FineCandidates(points, weights, plan.fine_candidates, gen));
  std::optional<CellFrames> frames;
  if (plan.cell_frames) frames = FineCellFrames(fine);
  DPEM_RETURN_IF_ERROR(SketchRound(unit, fine, frames ? &*frames : nullptr, plan.fine, k, engine,
                                   gen, ledger, points, weights));
  return WeightedKmeans(points, weights, k, gen);
}

}  // namespace dpem::internal
