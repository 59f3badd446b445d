// Brute-force neighbour sensitivity of the lighter first iterations, the
// spherical one (opt-in) and the diagonal one (the default of a full fit)
// (GmmFitOptions::FirstIterationCovariance; private_gmm.cc,
// RunLighterFirstIteration), in every dimension where they apply up to the
// general path of the framed E-step (d = 5..17) and for K = 1..4. What
// follows says "spherical"; the diagonal case is the same with diagonal
// statistics, its split and its bound.
//
// The first iteration's release is built here from the library's own pieces,
// as the fit builds it: the fit's calibration and plan (CalibrateGmmFit,
// MakeGmmReleasePlan), the start it runs (InitialGmmParameters: the private
// start for K >= 2, the random one for K = 1), the start's covariances read
// as spherical (mean variance times I), the spherical plan
// (PlanOfIteration: the spherical block split at the fit's
// multiplier), the adaptive frames from that plan's public noise scale, and
// the spherical framed statistics (ComputeFramedStatistics). One record of
// the data is replaced by adversarial candidates (each local frame's
// boundary, just outside it, far outside it, and antipodal pairs; points on
// the unit sphere and the centre), and the block-normalised statistics of
// any two such neighbours must differ by at most
// JointSensitivity(kSpherical, split), which must be at most the sensitivity
// that a real fit with the same options records for its first iteration.
// The largest distance found is also required to come close to the bound,
// so that the search is known to probe it.
//
// Planted bugs this test catches (checked by hand when it was written,
// 2026-11-24): the spherical same-component term of JointSensitivity
// understated (2/a instead of 4/a), and the framed E-step accumulating a
// local frame's spherical statistics without the clip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/gmm/private_gmm.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_init.h"
#include "models/gmm/gmm_release_plan.h"
#include "pipeline/fit_steps.h"
#include "testing/fit_options.h"

namespace dpem::internal {
namespace {

constexpr Eigen::Index kRecords = 400;

// K well-separated round clusters inside the unit ball (test data only).
DataMatrix Clusters(int k_count, int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  Eigen::MatrixXd centres(k_count, d);
  for (int k = 0; k < k_count; ++k) {
    Eigen::VectorXd c(d);
    for (int j = 0; j < d; ++j) c(j) = z(rng);
    centres.row(k) = 0.6 * c.normalized().transpose();
  }
  DataMatrix x(kRecords, d);
  for (Eigen::Index i = 0; i < kRecords; ++i) {
    for (int j = 0; j < d; ++j) x(i, j) = centres(i % k_count, j) + 0.03 * z(rng);
    if (x.row(i).norm() > 1.0) x.row(i).normalize();
  }
  return x;
}

GmmFitOptions Options(int k_count, NoiseSampling sampling,
                      CovarianceType first = CovarianceType::kSpherical) {
  GmmFitOptions o = test_support::MakeGmmOptions(k_count, 3, /*epsilon=*/1.0, /*delta=*/1e-5,
                                                 /*data_norm=*/1.0);
  o.covariance = CovarianceType::kFull;
  // Spherical: asked for (off by default); diagonal: the default.
  o.spherical_first_iteration = first == CovarianceType::kSpherical;
  o.noise_sampling = sampling;
  o.engine.threads = 1;
  return o;
}

// The block-normalised release vector of spherical or diagonal statistics.
Eigen::VectorXd Normalised(const GmmStatistics& s, const JointNoiseScales& split) {
  EXPECT_NE(s.type, CovarianceType::kFull);
  EXPECT_TRUE(s.second_full.empty());
  const bool diagonal = s.type == CovarianceType::kDiagonal;
  const Eigen::Index k = s.counts.size(), d = s.sums.cols();
  Eigen::VectorXd v(k * (d + 1 + (diagonal ? d : 1)));
  Eigen::Index i = 0;
  for (Eigen::Index c = 0; c < k; ++c) v(i++) = s.counts(c) / split.counts;
  for (Eigen::Index c = 0; c < k; ++c) {
    for (Eigen::Index j = 0; j < d; ++j) v(i++) = s.sums(c, j) / split.sums;
  }
  for (Eigen::Index c = 0; c < k; ++c) {
    if (!diagonal) v(i++) = s.second_trace(c) / split.second;
    for (Eigen::Index j = 0; diagonal && j < d; ++j) v(i++) = s.second_diag(c, j) / split.second;
  }
  return v;
}

// Replacement candidates for one record: per local frame, boundary points
// (and just and far outside) in random directions with their antipodes;
// random points on the unit sphere with their antipodes; the centre.
std::vector<Eigen::VectorXd> Candidates(const std::vector<ComponentFrame>& frames, int d,
                                        std::mt19937_64& rng) {
  std::normal_distribution<double> z(0.0, 1.0);
  const auto direction = [&] {
    Eigen::VectorXd v(d);
    for (int j = 0; j < d; ++j) v(j) = z(rng);
    return Eigen::VectorXd(v.normalized());
  };
  std::vector<Eigen::VectorXd> out;
  for (const ComponentFrame& f : frames) {
    if (!f.local) continue;
    for (int t = 0; t < 3; ++t) {
      const Eigen::VectorXd dir = direction();
      for (double r : {1.0, 1.0 + 1e-12, 3.0}) {
        out.push_back(f.origin + f.scale * dir * r);
        out.push_back(f.origin - f.scale * dir * r);
      }
    }
  }
  for (int t = 0; t < 4; ++t) {
    const Eigen::VectorXd dir = direction();
    out.push_back(dir);
    out.push_back(-dir);
  }
  out.push_back(Eigen::VectorXd::Zero(d));
  for (Eigen::VectorXd& c : out) {
    if (c.norm() > 1.0) c.normalize();
  }
  return out;
}

struct Case {
  double worst = 0.0;  // Largest neighbour distance found.
  double bound = 0.0;  // JointSensitivity(kSpherical, split).
  int local_frames = 0;
};

// The first iteration's release as the fit builds it (file comment), and the
// largest distance between neighbours that differ in row 0.
Case SearchFirstIteration(int k_count, int d, std::uint64_t seed, CovarianceType type) {
  Case out;
  const DataMatrix x = Clusters(k_count, d, seed);
  const StatusOr<GmmFitOptions> resolved =
      ResolvedFitOptions(Options(k_count, NoiseSampling::kDiscrete, type));
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  const GmmFitOptions& o = *resolved;
  EXPECT_EQ(o.FirstIterationCovariance(d), type);
  const StatusOr<CalibrationResult> cal = CalibrateGmmFit(o, d);
  EXPECT_TRUE(cal.ok()) << cal.status().ToString();
  const StatusOr<GmmReleasePlan> plan = MakeGmmReleasePlan(o, *cal, kRecords, d);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  const Engine engine = *Engine::Create(EngineOptions{1, 0});
  const MatrixRowSource unit = *MatrixRowSource::Borrow(x);
  Generator gen = Generator::FromSeed(seed);
  PrivacyLedger ledger;
  StatusOr<GmmParameters> start = InitialGmmParameters(
      unit, o, plan->start ? &*plan->start : nullptr, engine, gen, &ledger);
  EXPECT_TRUE(start.ok()) << start.status().ToString();
  GmmParameters params = *start;
  // As RunLighterFirstIteration reads the start and plans the release.
  params = StartReadAs(std::move(params), type);
  const IterationRelease release = PlanOfIteration(o, *plan, 1, d);
  EXPECT_EQ(release.type, type);
  const GmmReleasePlan& first = release.plan;
  EXPECT_EQ(first.split.second, DefaultJointNoiseSplit(type, d, k_count).second);
  // The budget schedule's first share: kSphericalIterationWeight or
  // kDiagonalIterationWeight.
  const double weight = type == CovarianceType::kSpherical ? kSphericalIterationWeight
                                                           : kDiagonalIterationWeight;
  EXPECT_DOUBLE_EQ(first.joint_multiplier, plan->joint_multiplier / std::sqrt(weight));
  const std::vector<ComponentFrame> frames = *ChooseFrames(
      params, AdaptiveFrameRadii(params.weights, static_cast<double>(kRecords),
                                 first.SecondNoise(), d));
  for (const ComponentFrame& f : frames) out.local_frames += f.local ? 1 : 0;
  out.bound = JointSensitivity(type, first.split);

  std::mt19937_64 rng(seed + 1);
  std::vector<Eigen::VectorXd> released;
  for (const Eigen::VectorXd& c : Candidates(frames, d, rng)) {
    DataMatrix y = x;
    y.row(0) = c.transpose();
    const StatusOr<GmmStatistics> s =
        ComputeFramedStatistics(params, frames, *MatrixRowSource::Borrow(y), engine);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return out;
    released.push_back(Normalised(*s, first.split));
  }
  for (size_t a = 0; a < released.size(); ++a) {
    for (size_t b = a + 1; b < released.size(); ++b) {
      out.worst = std::max(out.worst, (released[a] - released[b]).norm());
    }
  }
  return out;
}

// The sensitivity a real fit with the same options records for its first
// iteration's release (the label "iteration 1 / joint statistics").
double RecordedFirstIterationSensitivity(int k_count, int d, NoiseSampling sampling,
                                         std::uint64_t seed, CovarianceType type) {
  const DataMatrix x = Clusters(k_count, d, seed);
  Generator gen = Generator::FromSeed(seed);
  const StatusOr<GmmFit> fit = FitGmm(x, Options(k_count, sampling, type), gen);
  EXPECT_TRUE(fit.ok()) << fit.status().ToString();
  if (!fit.ok()) return 0.0;
  const bool spherical = type == CovarianceType::kSpherical;
  EXPECT_EQ(fit->guarantee.spherical_first_iteration, spherical);
  EXPECT_EQ(fit->guarantee.diagonal_first_iteration, !spherical);
  const double z = fit->guarantee.noise_multipliers[0];
  for (const Release& r : fit->guarantee.ledger.releases()) {
    if (r.label != "iteration 1 / joint statistics") continue;
    EXPECT_GE(r.NoiseMultiplier(), z / std::sqrt(spherical ? kSphericalIterationWeight : 1.0));
    return r.sensitivity;
  }
  ADD_FAILURE() << "no first-iteration release in the ledger";
  return 0.0;
}

// The spherical first iteration (opt-in) and the diagonal one (the default
// of a full fit in d >= 5).
class LighterFirstIterationSensitivityTest : public ::testing::TestWithParam<CovarianceType> {};

TEST_P(LighterFirstIterationSensitivityTest, NeighboursStayWithinTheRecordedSensitivity) {
  const CovarianceType type = GetParam();
  const char* name = type == CovarianceType::kSpherical ? "spherical" : "diagonal";
  int local_frames = 0;
  double tightest = 0.0;
  for (int d = static_cast<int>(kSphericalFirstIterationMinDimension); d <= 17; ++d) {
    for (int k_count = 1; k_count <= 4; ++k_count) {
      SCOPED_TRACE("d " + std::to_string(d) + " K " + std::to_string(k_count));
      const std::uint64_t seed = 1000u + 10u * static_cast<unsigned>(d) + k_count;
      const Case c = SearchFirstIteration(k_count, d, seed, type);
      local_frames += c.local_frames;
      tightest = std::max(tightest, c.worst / c.bound);
      EXPECT_NEAR(c.bound, 1.0, 1e-9);  // The split's sensitivity.
      EXPECT_LE(c.worst, c.bound * (1.0 + 1e-9));
      // The search reaches the bound (spherical): with K >= 2 (antipodal
      // records on a frame's boundary, both fully responsible to it); with
      // K = 1 the random start's frame sits near the sphere, so antipodal
      // boundary points leave the ball and the largest change is smaller
      // (0.81 to 0.87 of the bound here). The diagonal bound's
      // same-component term is attained only by particular pairs, which the
      // random candidates come near but do not hit (0.89 to 0.96 with
      // K >= 2, 0.73 to 0.8 with K = 1, here).
      const bool spherical = type == CovarianceType::kSpherical;
      EXPECT_GT(c.worst, (k_count >= 2 ? (spherical ? 0.99 : 0.85) : (spherical ? 0.75 : 0.65)) *
                             c.bound);
      // What the fit records is at least the bound: exactly it with
      // continuous noise, the grid's charged sensitivity with discrete noise.
      EXPECT_NEAR(RecordedFirstIterationSensitivity(k_count, d, NoiseSampling::kContinuous, seed,
                                                    type),
                  c.bound, 1e-12);
      EXPECT_GE(RecordedFirstIterationSensitivity(k_count, d, NoiseSampling::kDiscrete, seed,
                                                  type),
                c.bound);
      std::printf("[%s first] d %2d K %d: largest neighbour distance %.6f, bound %.6f, "
                  "%d local frames\n",
                  name, d, k_count, c.worst, c.bound, c.local_frames);
    }
  }
  EXPECT_GT(local_frames, 0);  // Local frames (with their clip) were exercised.
  std::printf("[%s first] largest distance / bound over all cases: %.6f\n", name, tightest);
}

INSTANTIATE_TEST_SUITE_P(Types, LighterFirstIterationSensitivityTest,
                         ::testing::Values(CovarianceType::kSpherical,
                                           CovarianceType::kDiagonal));

}  // namespace
}  // namespace dpem::internal
