// Tests of the private start (models/start/private_start.h).
#include "models/start/private_start.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dpem/accounting/calibration.h"
#include "dpem/data/row_source.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"

namespace dpem::internal {
namespace {

Generator Seeded(uint64_t seed) { return Generator::FromSeed(seed); }

// Three tight clusters at known centres in the unit ball, n records each.
DataMatrix ThreeClusters(Eigen::Index n, Generator& gen) {
  const Eigen::MatrixXd centres = (Eigen::MatrixXd(3, 2) << -0.5, 0.0, 0.5, 0.0, 0.0, 0.6).finished();
  DataMatrix x(3 * n, 2);
  for (Eigen::Index i = 0; i < 3 * n; ++i) {
    x(i, 0) = centres(i % 3, 0) + 0.02 * SampleStandardNormal(gen);
    x(i, 1) = centres(i % 3, 1) + 0.02 * SampleStandardNormal(gen);
  }
  return x;
}

// The plan of K components for N records at equal coarse and fine
// multipliers z.
PrivateStartPlan Plan(double z, int k, Eigen::Index n) {
  StatusOr<PrivateStartPlan> plan = MakePrivateStartPlan(NoiseSampling::kDiscrete, {z, z}, k, n);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : PrivateStartPlan{};
}

TEST(PrivateStartTest, CandidatesFollowTheNoiseAndTheOversampling) {
  // sigma = 2 z = 20, so N / (10 sigma) = 50 cells for N = 10000.
  ASSERT_EQ(kStart.oversampling, 10);
  ASSERT_EQ(kStart.records_per_cell_sigmas, 10.0);
  EXPECT_EQ(Plan(10.0, 4, 10000).fine_candidates, 40);  // 10 K.
  EXPECT_EQ(Plan(10.0, 8, 10000).fine_candidates, 50);
  EXPECT_EQ(Plan(10.0, 8, 100).fine_candidates, 8);  // >= K.
  EXPECT_EQ(Plan(10.0, 8, 100).coarse_candidates, 16);  // 2 K.
  // With cell frames, 40 K and N / (2.5 sigma) = 200.
  ASSERT_EQ(kStart.framed_oversampling, 40);
  ASSERT_EQ(kStart.framed_records_per_cell_sigmas, 2.5);
  const auto framed = [](int k, Eigen::Index n) {
    return MakePrivateStartPlan(NoiseSampling::kDiscrete, {10.0, 10.0}, k, n, true)
        ->fine_candidates;
  };
  EXPECT_EQ(framed(4, 10000), 160);
  EXPECT_EQ(framed(8, 10000), 200);
  EXPECT_EQ(framed(8, 100), 8);
  EXPECT_FALSE(Plan(10.0, 4, 10000).cell_frames);
  // At most kStart.max_fine_candidates: 40 K = 40,000 at K = 1000.
  EXPECT_EQ(MakePrivateStartPlan(NoiseSampling::kDiscrete, {1e-3, 1e-3}, 1000, 100000000, true)
                ->fine_candidates,
            kStart.max_fine_candidates);
  const PrivateStartPlan plan = Plan(10.0, 3, 100);
  for (const NoiseSpec* spec : {&plan.coarse, &plan.fine}) {
    EXPECT_EQ(spec->mechanism, MechanismKind::kGaussian);
    EXPECT_EQ(spec->sensitivity, kKmeansJointL2Sensitivity);
  }
}

TEST(PrivateStartTest, PlanRefusesBadArguments) {
  EXPECT_FALSE(MakePrivateStartPlan(NoiseSampling::kDiscrete, {1.0}, 3, 100).ok());
  EXPECT_FALSE(MakePrivateStartPlan(NoiseSampling::kDiscrete, {1.0, 1.0}, 0, 100).ok());
  EXPECT_FALSE(MakePrivateStartPlan(NoiseSampling::kDiscrete, {1.0, -1.0}, 3, 100).ok());
}

// The start (z = 5 for both releases, K = 3) on ThreeClusters(n) drawn
// with `seed`, one engine thread per hardware thread; releases into `ledger`.
StatusOr<StartClusters> StartOnThreeClusters(Eigen::Index n, uint64_t seed,
                                             PrivacyLedger& ledger) {
  Generator gen = Seeded(seed);
  const DataMatrix x = ThreeClusters(n, gen);
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource src, MatrixRowSource::Borrow(x));
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create({}));
  return PrivateStart(src, Plan(5.0, 3, x.rows()), engine, gen, ledger);
}

TEST(PrivateStartTest, MakesTwoReleasesOfTheJointSensitivity) {
  PrivacyLedger ledger;
  StatusOr<StartClusters> s_or = StartOnThreeClusters(2000, 1, ledger);
  ASSERT_TRUE(s_or.ok()) << s_or.status().ToString();
  const StartClusters& s = *s_or;
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger.releases()[0].label, "start / coarse counts and sums");
  EXPECT_EQ(ledger.releases()[1].label, "start / counts and sums");
  for (const Release& r : ledger.releases()) {
    EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
    // The discrete release charges at least the joint sensitivity 2.
    EXPECT_GE(r.sensitivity, kKmeansJointL2Sensitivity);
  }
  EXPECT_EQ(s.centres.rows(), 3);
  EXPECT_NEAR(s.weights.sum(), 1.0, 1e-12);
}

TEST(PrivateStartTest, FindsWellSeparatedClustersAtModerateNoise) {
  PrivacyLedger ledger;
  StatusOr<StartClusters> s_or = StartOnThreeClusters(5000, 2, ledger);
  ASSERT_TRUE(s_or.ok()) << s_or.status().ToString();
  const StartClusters& s = *s_or;
  const Eigen::MatrixXd truth = (Eigen::MatrixXd(3, 2) << -0.5, 0.0, 0.5, 0.0, 0.0, 0.6).finished();
  for (Eigen::Index t = 0; t < 3; ++t) {
    double nearest = 1e9;
    for (Eigen::Index c = 0; c < 3; ++c) {
      nearest = std::min(nearest, (s.centres.row(c) - truth.row(t)).norm());
    }
    EXPECT_LT(nearest, 0.05) << "true centre " << t;
  }
  EXPECT_NEAR(s.weights.minCoeff(), 1.0 / 3.0, 0.05);
}

TEST(PrivateStartTest, WeightedKmeansHonoursTheWeights) {
  // Two points far apart with weights 1 and 3 and K = 1: the weighted mean.
  const Eigen::MatrixXd points = (Eigen::MatrixXd(2, 1) << 0.0, 1.0).finished();
  const Eigen::VectorXd weights = (Eigen::VectorXd(2) << 1.0, 3.0).finished();
  Generator gen = Seeded(3);
  StatusOr<StartClusters> s_or = WeightedKmeans(points, weights, 1, gen);
  ASSERT_TRUE(s_or.ok()) << s_or.status().ToString();
  const StartClusters& s = *s_or;
  EXPECT_DOUBLE_EQ(s.centres(0, 0), 0.75);
  // Weighted mean squared distance: (1 * 0.75^2 + 3 * 0.25^2) / 4.
  EXPECT_DOUBLE_EQ(s.spreads(0), (0.5625 + 3 * 0.0625) / 4.0);
  EXPECT_DOUBLE_EQ(s.weights(0), 1.0);
}

TEST(PrivateStartTest, WeightedKmeansRefusesBadInput) {
  Generator gen = Seeded(4);
  const Eigen::MatrixXd points = Eigen::MatrixXd::Zero(2, 2);
  EXPECT_FALSE(WeightedKmeans(points, Eigen::VectorXd::Ones(2), 3, gen).ok());
  EXPECT_FALSE(WeightedKmeans(points, Eigen::VectorXd::Zero(2), 1, gen).ok());
}

TEST(PrivateStartTest, UniformPointsLieInTheBall) {
  Generator gen = Seeded(5);
  StatusOr<Eigen::MatrixXd> p_or = UniformInUnitBall(500, 7, gen);
  ASSERT_TRUE(p_or.ok()) << p_or.status().ToString();
  const Eigen::MatrixXd& p = *p_or;
  EXPECT_LE(p.rowwise().norm().maxCoeff(), 1.0);
  // E||u||^2 = d / (d + 2) for the uniform law on the ball.
  EXPECT_NEAR(p.rowwise().squaredNorm().mean(), 7.0 / 9.0, 0.03);
}

TEST(PrivateStartTest, FineCandidatesSurviveCoincidentCoarsePoints) {
  // Two identical coarse points (and two 1e-9 apart, whose computed distance
  // cancels to 0): the jitter never has a zero standard deviation.
  Generator gen = Seeded(6);
  for (double gap : {0.0, 1e-9}) {
    const Eigen::MatrixXd points =
        (Eigen::MatrixXd(3, 2) << 0.3, 0.3, 0.3 + gap, 0.3, -0.5, 0.1).finished();
    StatusOr<Eigen::MatrixXd> c = FineCandidates(points, Eigen::Vector3d(5, 5, 10), 12, gen);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->rows(), 12);
    EXPECT_TRUE(c->allFinite());
    EXPECT_LE(c->rowwise().norm().maxCoeff(), 1.0);
  }
}

TEST(PrivateStartTest, FineCandidatesAreApportionedByWeight) {
  // Weights 1 : 3 of 8 candidates: rows 0-1 around the first point, rows 2-7
  // around the second (largest remainders give exactly 8). The jitter's
  // standard deviation is half the distance between the points, so a
  // candidate lands on its parent's side with probability 0.84: over 200
  // draws the fractions separate clearly.
  Generator gen = Seeded(7);
  const Eigen::MatrixXd points = (Eigen::MatrixXd(2, 1) << -0.5, 0.5).finished();
  double first_negative = 0, rest_negative = 0;
  for (int draw = 0; draw < 200; ++draw) {
    StatusOr<Eigen::MatrixXd> c = FineCandidates(points, Eigen::Vector2d(1, 3), 8, gen);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_EQ(c->rows(), 8);
    first_negative += static_cast<double>((c->col(0).head(2).array() < 0.0).count()) / 400.0;
    rest_negative += static_cast<double>((c->col(0).tail(6).array() < 0.0).count()) / 1200.0;
  }
  EXPECT_GT(first_negative, 0.7);
  EXPECT_LT(rest_negative, 0.3);
}

TEST(PrivateStartTest, NearestOtherDistancesAreTheBruteForceOnes) {
  // 700 rows: three blocks of 256 in the library, the last one short.
  Generator gen = Seeded(12);
  Eigen::MatrixXd points(700, 5);
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    points.row(i) = SampleGaussianVector(gen, 5, 0.3)->transpose();
  }
  points.row(699) = points.row(3);  // Coincident rows: distance 0.
  const Eigen::VectorXd got = NearestOtherDistances(points);
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    double want = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < points.rows(); ++j) {
      if (j != i) want = std::min(want, (points.row(i) - points.row(j)).norm());
    }
    EXPECT_EQ(got(i), want) << i;
  }
  EXPECT_EQ(got(3), 0.0);
  EXPECT_EQ(NearestOtherDistances(points.topRows(1))(0), std::numeric_limits<double>::infinity());
}

TEST(PrivateStartTest, FineCellFramesReachTwiceTheNearestCandidate) {
  // Candidates at 0, 0.1, 0.4 and -0.6 on a line: nearest-other distances
  // 0.1, 0.1, 0.3 and 0.6.
  const Eigen::MatrixXd fine =
      (Eigen::MatrixXd(4, 2) << 0, 0, 0.1, 0, 0.4, 0, -0.6, 0).finished();
  const CellFrames f = FineCellFrames(fine);
  ASSERT_TRUE(f.Validate(4).ok());
  const Eigen::Vector3d nearest(0.1, 0.1, 0.3);
  for (Eigen::Index j = 0; j < 3; ++j) {
    EXPECT_NEAR(f.radii(j), kStart.frame_reach * nearest(j), 1e-15) << j;
  }
  // 2 x 0.6 reaches the ball's radius: no frame.
  ASSERT_GE(kStart.frame_reach * 0.6, kStart.max_framed_radius);
  EXPECT_EQ(f.radii(3), 0.0);
  // A lone candidate and far-apart ones get no frame; coincident ones the
  // smallest radius.
  EXPECT_EQ(FineCellFrames(Eigen::MatrixXd::Zero(1, 2)).radii(0), 0.0);
  EXPECT_EQ(FineCellFrames(Eigen::MatrixXd::Zero(2, 2)).radii(1), kStart.min_fine_jitter);
  const Eigen::MatrixXd apart = (Eigen::MatrixXd(2, 1) << -1.0, 1.0).finished();
  EXPECT_EQ(FineCellFrames(apart).radii(0), 0.0);
}

// Released statistics of one cell: n_in records in its frame with mean
// frame vector u, n_out outside it with mean g.
KmeansStatistics OneCell(double n_in, const Eigen::RowVectorXd& u, double n_out,
                         const Eigen::RowVectorXd& g) {
  KmeansStatistics s = KmeansStatistics::Zero(1, g.size(), true);
  s.frame_counts(0) = n_in;
  s.frame_sums.row(0) = n_in * u;
  s.counts(0) = n_out;
  s.sums.row(0) = n_out * g;
  return s;
}

class CellMeanTest : public ::testing::Test {
 protected:
  // Candidate c = (0.2, 0.1), radius 0.1, noise sigma = 20: the plain part
  // counts from 3 sigma = 60 records.
  const Eigen::MatrixXd c = (Eigen::MatrixXd(1, 2) << 0.2, 0.1).finished();
  const CellFrames f{(Eigen::VectorXd(1) << 0.1).finished()};
  const double sigma = 20.0;
  // Frame vectors with mean (0.3, 0): the frame's records average
  // c + 0.1 (0.3, 0) = (0.23, 0.1).
  const Eigen::RowVectorXd u = (Eigen::RowVectorXd(2) << 0.3, 0.0).finished();
  const Eigen::RowVectorXd in_mean = (Eigen::RowVectorXd(2) << 0.23, 0.1).finished();
  const Eigen::RowVectorXd out_mean = (Eigen::RowVectorXd(2) << 0.6, 0.1).finished();

  double Distance(const KmeansStatistics& s, const Eigen::RowVectorXd& want,
                  const CellFrames* frames) const {
    return (CellMean(s, 0, c, frames, sigma) - want).norm();
  }
};

TEST_F(CellMeanTest, TheCellsMeanWeighsItsTwoPartsByTheirCounts) {
  ASSERT_EQ(kStart.count_sigmas * sigma, 60.0);
  const KmeansStatistics s = OneCell(400, u, 100, out_mean);
  EXPECT_LT(Distance(s, (400 * in_mean + 100 * out_mean) / 500, &f), 1e-12);
  // The same statistics read without frames: the plain part alone.
  EXPECT_LT(Distance(s, out_mean, nullptr), 1e-12);
  // So does a cell without a frame, whatever its frame part says.
  const CellFrames frameless{Eigen::VectorXd::Zero(1)};
  EXPECT_LT(Distance(s, out_mean, &frameless), 1e-12);
}

TEST_F(CellMeanTest, APlainPartBelowTheCountThresholdIsLeftOut) {
  EXPECT_LT(Distance(OneCell(400, u, 59, out_mean), in_mean, &f), 1e-12);
  EXPECT_LT(Distance(OneCell(400, u, -30, out_mean), in_mean, &f), 1e-12);
  // Kept at the threshold.
  EXPECT_LT(Distance(OneCell(400, u, 60, out_mean), (400 * in_mean + 60 * out_mean) / 460, &f),
            1e-12);
  // ... and whenever the frame holds no record: n_in clamped to 0, the
  // plain mean.
  EXPECT_LT(Distance(OneCell(-5, u, 59, out_mean), out_mean, &f), 1e-12);
}

TEST_F(CellMeanTest, EachPartsSumIsProjectedOntoTheBallOfItsCount) {
  // A frame sum of norm 3 n_in reads as norm n_in: the frame's records at
  // c + r (1, 0) = (0.3, 0.1).
  KmeansStatistics s = OneCell(400, 3.0 * Eigen::RowVectorXd::Unit(2, 0), 0, out_mean);
  EXPECT_LT(Distance(s, (Eigen::RowVectorXd(2) << 0.3, 0.1).finished(), &f), 1e-12);
  // A plain sum of norm 2 n_out reads as norm n_out, in its direction.
  const Eigen::RowVectorXd far = (Eigen::RowVectorXd(2) << 2.0, 0.0).finished();
  s = OneCell(0, u, 100, far);
  EXPECT_LT(Distance(s, Eigen::RowVectorXd::Unit(2, 0), &f), 1e-12);
  // A count below 1 in all: the candidate.
  EXPECT_EQ(CellMean(OneCell(0.5, u, 0.3, out_mean), 0, c, &f, sigma), c.row(0));
}

TEST_F(CellMeanTest, TheCellsCountAddsItsFramePartIfItHasAFrame) {
  const KmeansStatistics s = OneCell(400, u, 100, out_mean);
  EXPECT_EQ(CellCount(s, 0, &f), 500.0);
  EXPECT_EQ(CellCount(s, 0, nullptr), 100.0);
  const CellFrames frameless{Eigen::VectorXd::Zero(1)};
  EXPECT_EQ(CellCount(s, 0, &frameless), 100.0);
}

TEST(PrivateStartTest, TheReleaseNoisesTheFrameSumsToo) {
  KmeansStatistics s = KmeansStatistics::Zero(3, 2, true);
  const PrivateStartPlan plan = Plan(5.0, 3, 100);
  Generator gen = Seeded(8);
  PrivacyLedger ledger;
  ASSERT_TRUE(ReleaseCountsAndSums(s, plan.fine, gen, ledger).ok());
  EXPECT_EQ(ledger.size(), 1u);
  // Noise of scale 10 on every coordinate: none is left at 0.
  EXPECT_TRUE((s.counts.array() != 0.0).all());
  EXPECT_TRUE((s.sums.array() != 0.0).all());
  EXPECT_TRUE((s.frame_counts.array() != 0.0).all());
  EXPECT_TRUE((s.frame_sums.array() != 0.0).all());
  EXPECT_GT(s.frame_sums.cwiseAbs().maxCoeff(), 1.0);
}

// ReleaseCountsAndSums noises one vector [counts; sums row by row; frame
// counts; frame sums row by row] and reads each part back from its own
// place. The expectation is built here by explicit loops and released by
// ReleaseVector from the same seed: the same noise lands on the same
// coordinate only if the packing order is that one, and every part comes
// back to its own array only if the unpacking inverts it (a swap of the
// two K-long count blocks, or sums read back column by column, changes
// which noise each entry carries; the parts' distinct offsets, 100 apart,
// make any such mix-up visible even where the noise would hide it).
TEST(PrivateStartTest, TheReleasePacksAndUnpacksEachPartInItsPlace) {
  const Eigen::Index k = 3, d = 2;
  KmeansStatistics s = KmeansStatistics::Zero(k, d, true);
  for (Eigen::Index c = 0; c < k; ++c) {
    s.counts(c) = 100.0 + c;
    s.frame_counts(c) = 300.0 + c;
    for (Eigen::Index j = 0; j < d; ++j) {
      s.sums(c, j) = 200.0 + 10.0 * c + j;
      s.frame_sums(c, j) = 400.0 + 10.0 * c + j;
    }
  }
  Eigen::VectorXd v(k * (2 * d + 2));
  Eigen::Index i = 0;
  for (Eigen::Index c = 0; c < k; ++c) v(i++) = 100.0 + c;
  for (Eigen::Index c = 0; c < k; ++c) {
    for (Eigen::Index j = 0; j < d; ++j) v(i++) = 200.0 + 10.0 * c + j;
  }
  for (Eigen::Index c = 0; c < k; ++c) v(i++) = 300.0 + c;
  for (Eigen::Index c = 0; c < k; ++c) {
    for (Eigen::Index j = 0; j < d; ++j) v(i++) = 400.0 + 10.0 * c + j;
  }
  ASSERT_EQ(i, v.size());
  for (NoiseSampling sampling : {NoiseSampling::kDiscrete, NoiseSampling::kContinuous}) {
    SCOPED_TRACE(sampling == NoiseSampling::kDiscrete ? "discrete" : "continuous");
    // Noise of standard deviation 2e-3: each entry stays within 0.1 of its
    // own value, and a different order gives different noise.
    const NoiseSpec spec{MechanismKind::kGaussian, kKmeansJointL2Sensitivity, 1e-3, "t",
                         sampling};
    KmeansStatistics got = s;
    Eigen::VectorXd want = v;
    Generator gen_got = Seeded(12), gen_want = Seeded(12);
    PrivacyLedger ledger_got, ledger_want;
    ASSERT_TRUE(ReleaseCountsAndSums(got, spec, gen_got, ledger_got).ok());
    ASSERT_TRUE(ReleaseVector(want, spec, gen_want, ledger_want).ok());
    ASSERT_EQ(ledger_got.size(), 1u);
    EXPECT_EQ(ledger_got.releases()[0].sensitivity, ledger_want.releases()[0].sensitivity);
    EXPECT_EQ(ledger_got.releases()[0].noise_scale, ledger_want.releases()[0].noise_scale);
    ASSERT_NE(want, v);  // The noise moved the values.
    i = 0;
    for (Eigen::Index c = 0; c < k; ++c) EXPECT_EQ(got.counts(c), want(i++)) << c;
    for (Eigen::Index c = 0; c < k; ++c) {
      for (Eigen::Index j = 0; j < d; ++j) EXPECT_EQ(got.sums(c, j), want(i++)) << c << j;
    }
    for (Eigen::Index c = 0; c < k; ++c) EXPECT_EQ(got.frame_counts(c), want(i++)) << c;
    for (Eigen::Index c = 0; c < k; ++c) {
      for (Eigen::Index j = 0; j < d; ++j) EXPECT_EQ(got.frame_sums(c, j), want(i++)) << c << j;
    }
    EXPECT_LT((got.counts - s.counts).cwiseAbs().maxCoeff(), 0.1);
    EXPECT_LT((got.sums - s.sums).cwiseAbs().maxCoeff(), 0.1);
    EXPECT_LT((got.frame_counts - s.frame_counts).cwiseAbs().maxCoeff(), 0.1);
    EXPECT_LT((got.frame_sums - s.frame_sums).cwiseAbs().maxCoeff(), 0.1);
  }
}

// CheckPrivateStart checks each release on the coordinates it has: the
// coarse round's M1 (d + 1) and the fine round's M2 (d + 1), or
// M2 (2d + 2) with cell frames ([counts; sums; frame counts; frame sums]).
// The discrete grid refuses a release whose rounding charge is too large for
// its coordinates, so there is a smallest d at which the fine release is
// refused: the check must refuse there and accept just below (with frames,
// a count of M2 (d + 1) accepts there). The coarse multiplier is small, so its
// grid never fails here.
TEST(PrivateStartTest, TheCheckCountsTheFineReleasesCoordinates) {
  for (bool frames : {false, true}) {
    SCOPED_TRACE(frames ? "cell frames" : "plain");
    StatusOr<PrivateStartPlan> plan_or =
        MakePrivateStartPlan(NoiseSampling::kDiscrete, {1.0, 16384.0}, 3, 1000, frames);
    ASSERT_TRUE(plan_or.ok()) << plan_or.status().ToString();
    const PrivateStartPlan& plan = *plan_or;
    const Eigen::Index m = plan.fine_candidates;
    ASSERT_EQ(m, 3);
    const auto fine_ok = [&](Eigen::Index d) {
      return PlanDiscreteGrid(plan.fine, m * (frames ? 2 : 1) * (d + 1)).ok();
    };
    Eigen::Index ok = 1, refused = Eigen::Index{1} << 24;
    ASSERT_TRUE(fine_ok(ok));
    ASSERT_FALSE(fine_ok(refused));
    while (refused - ok > 1) {
      const Eigen::Index mid = (ok + refused) / 2;
      (fine_ok(mid) ? ok : refused) = mid;
    }
    if (frames) ASSERT_TRUE(PlanDiscreteGrid(plan.fine, m * (refused + 1)).ok());
    ASSERT_TRUE(PlanDiscreteGrid(plan.coarse, plan.coarse_candidates * (refused + 1)).ok());
    EXPECT_TRUE(CheckPrivateStart(plan, ok).ok()) << ok;
    EXPECT_FALSE(CheckPrivateStart(plan, refused).ok()) << refused;
  }
}

// What the start's ledger records is the grid of the vectors it releases:
// M1 (d + 1) coordinates for the coarse round and M2 (d + 1), or M2 (2d + 2)
// with cell frames, for the fine one, the counts CheckPrivateStart plans for
// (a framed release that dropped the frame part, or sent it unnoised, would
// record M2 (d + 1)'s charge).
TEST(PrivateStartTest, TheLedgerChargesTheCoordinatesReleased) {
  for (bool frames : {false, true}) {
    SCOPED_TRACE(frames ? "cell frames" : "plain");
    Generator gen = Seeded(9);
    const DataMatrix x = ThreeClusters(2000, gen);
    const PrivateStartPlan plan =
        *MakePrivateStartPlan(NoiseSampling::kDiscrete, {5.0, 5.0}, 3, x.rows(), frames);
    const MatrixRowSource source = *MatrixRowSource::Borrow(x);
    PrivacyLedger ledger;
    ASSERT_TRUE(PrivateStart(source, plan, *Engine::Create({}), gen, ledger).ok());
    ASSERT_EQ(ledger.size(), 2u);
    const Eigen::Index d = x.cols(), parts = frames ? 2 : 1;
    const DiscreteGrid coarse = *PlanDiscreteGrid(plan.coarse, plan.coarse_candidates * (d + 1));
    const DiscreteGrid fine = *PlanDiscreteGrid(plan.fine, plan.fine_candidates * parts * (d + 1));
    EXPECT_EQ(ledger.releases()[0].sensitivity, coarse.sensitivity);
    EXPECT_EQ(ledger.releases()[0].noise_scale, coarse.noise_scale);
    EXPECT_EQ(ledger.releases()[1].sensitivity, fine.sensitivity);
    EXPECT_EQ(ledger.releases()[1].noise_scale, fine.noise_scale);
    EXPECT_NE(fine.sensitivity,
              PlanDiscreteGrid(plan.fine, plan.fine_candidates * (3 - parts) * (d + 1))
                  ->sensitivity);
    EXPECT_TRUE(CheckPrivateStart(plan, d).ok());
  }
}

// The framed fine release's change over every pair of a set of adversarial
// records, with the frames FineCellFrames gives to adversarial candidates:
// two coincident ones (a tie, radius 1e-6), one 1e-7 from them (radius
// 2e-7 clamped to 1e-6), one on the sphere, the origin and a lone far one
// (a reach of at least 1: no frame). The records: each candidate, its antipode,
// the midpoint of every pair (ties), points 1e-6 and 1e-3 from a candidate,
// the unit vectors and their negatives, and random points on the sphere.
// The release is computed by the library's pass (exact sums): its change is
// at most the sensitivity 2 to within 1e-12, and attains it.
TEST(PrivateStartTest, TheFramedReleasesSensitivityHoldsAtTheEdges) {
  for (Eigen::Index d : {1, 2, 3, 7}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    Generator gen = Seeded(static_cast<uint64_t>(100 + d));
    Eigen::MatrixXd c = Eigen::MatrixXd::Zero(6, d);
    c(0, 0) = 0.3;
    c.row(1) = c.row(0);
    c.row(2) = c.row(0);
    c(2, d - 1) += 1e-7;
    c.row(3).setZero();
    c(3, 0) = -1.0;  // On the sphere.
    // Row 4: the origin. Row 5: far from the others in the last coordinate
    // (d > 1), or on the sphere's other side (d = 1).
    if (d > 1) {
      c(5, d - 1) = 1.0;
    } else {
      c(5, 0) = 1.0;
    }
    const CellFrames f = FineCellFrames(c);
    ASSERT_TRUE(f.Validate(c.rows()).ok());
    EXPECT_EQ(f.radii(0), kStart.min_fine_jitter);
    EXPECT_EQ(f.radii(2), kStart.min_fine_jitter);
    std::vector<Eigen::RowVectorXd> records;
    for (Eigen::Index i = 0; i < c.rows(); ++i) {
      records.push_back(c.row(i));
      records.push_back(-c.row(i));
      for (Eigen::Index j = i + 1; j < c.rows(); ++j) records.push_back(0.5 * (c.row(i) + c.row(j)));
      for (double step : {1e-6, 1e-3}) {
        Eigen::RowVectorXd p = c.row(i);
        p(0) += p(0) > 0 ? -step : step;
        records.push_back(p);
      }
    }
    for (Eigen::Index j = 0; j < d; ++j) {
      records.push_back(Eigen::RowVectorXd::Unit(d, j));
      records.push_back(-Eigen::RowVectorXd::Unit(d, j));
    }
    for (int t = 0; t < 20; ++t) {
      const Eigen::VectorXd g = *SampleGaussianVector(gen, d, 1.0);
      records.push_back(g.transpose() / g.norm());
    }
    for (Eigen::RowVectorXd& r : records) {
      if (r.norm() > 1.0) r /= r.norm();
      while (r.norm() > 1.0) r *= 1.0 - 1e-16;
      ASSERT_LE(r.norm(), 1.0);
    }
    // The neighbours share 9 other records (some at candidates, so
    // every cell's sums are non-zero); record 0 is replaced.
    DataMatrix x(10, d);
    for (Eigen::Index i = 1; i < 10; ++i) x.row(i) = records[static_cast<size_t>(i % records.size())];
    const Engine engine = *Engine::Create({1, 0});
    std::vector<Eigen::VectorXd> released;
    for (const Eigen::RowVectorXd& r : records) {
      x.row(0) = r;
      const StatusOr<KmeansStatistics> s =
          ComputeKmeansStatistics(c, *MatrixRowSource::Borrow(x), engine, &f);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      Eigen::VectorXd v(s->counts.size() + s->sums.size() + s->frame_counts.size() +
                        s->frame_sums.size());
      v << s->counts, s->sums.reshaped(), s->frame_counts, s->frame_sums.reshaped();
      released.push_back(v);
    }
    double worst = 0.0;
    for (size_t i = 0; i < released.size(); ++i) {
      for (size_t j = 0; j < i; ++j) worst = std::max(worst, (released[i] - released[j]).norm());
    }
    EXPECT_LE(worst, kKmeansJointL2Sensitivity * (1 + 1e-12));
    EXPECT_GT(worst, kKmeansJointL2Sensitivity * (1 - 1e-3));
  }
}

TEST(PrivateStartTest, RestartsShrinkWithTheClusteringWork) {
  EXPECT_EQ(StartRestarts(30, 3), kStart.restarts);
  // 10 K points and K = 1000: one run of 50 Lloyd steps is 5e8 distances.
  EXPECT_EQ(StartRestarts(10000, 1000), 1);
  // 2e8 / (2000 * 200 * 50) = 10, at the cap; 4000 points: 5.
  EXPECT_EQ(StartRestarts(4000, 200), 5);
}

TEST(PrivateStartTest, LedgerChecksFindAMissingOrMisplacedStart) {
  const Release coarse{MechanismKind::kGaussian, 2.0, 1.0, "start / coarse counts and sums"};
  const Release fine{MechanismKind::kGaussian, 2.0, 1.0, "start / counts and sums"};
  const Release it1{MechanismKind::kGaussian, 1.0, 1.0, "iteration 1 / joint statistics"};
  const auto ledger = [](std::initializer_list<Release> rs) {
    PrivacyLedger l;
    for (const Release& r : rs) EXPECT_TRUE(l.Record(r).ok());
    return l;
  };
  EXPECT_TRUE(CheckStartInLedger(ledger({coarse, fine, it1}), true).ok());
  EXPECT_TRUE(CheckStartInLedger(ledger({it1}), false).ok());
  EXPECT_FALSE(CheckStartInLedger(ledger({it1}), true).ok());
  EXPECT_FALSE(CheckStartInLedger(ledger({fine, coarse, it1}), true).ok());
  EXPECT_FALSE(CheckStartInLedger(ledger({coarse, it1, fine}), true).ok());
  EXPECT_FALSE(CheckStartInLedger(ledger({coarse, fine, it1}), false).ok());
}

TEST(StartCalibrationTest, TheStartTakesItsShareOfTheZcdpCost) {
  CalibrationOptions c;
  c.epsilon = 1.0;
  c.delta = 1e-5;
  c.iterations = 5;
  c.accountant = AccountantKind::kZcdp;
  c.pattern = {"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
  c.start = PrivateStartPattern(NoiseSampling::kDiscrete);
  c.start_share = 0.2;
  StatusOr<CalibrationResult> r_or = Calibrate(c);
  ASSERT_TRUE(r_or.ok()) << r_or.status().ToString();
  const CalibrationResult& r = *r_or;
  ASSERT_EQ(r.start_noise_multipliers.size(), 2u);
  const double z = r.noise_multipliers[0];
  const double z1 = r.start_noise_multipliers[0], z2 = r.start_noise_multipliers[1];
  const double rho1 = 1.0 / (2 * z1 * z1), rho2 = 1.0 / (2 * z2 * z2);
  const double rho_iterations = 5.0 / (2 * z * z);
  EXPECT_NEAR((rho1 + rho2) / (rho1 + rho2 + rho_iterations), 0.2, 1e-12);
  EXPECT_NEAR(rho1 / (rho1 + rho2), kStart.coarse_share, 1e-12);
  ASSERT_EQ(r.ledger.size(), 7u);
  EXPECT_EQ(r.ledger.releases()[0].label, "start / coarse counts and sums");
  EXPECT_EQ(r.ledger.releases()[1].label, "start / counts and sums");
  EXPECT_LE(r.epsilon, 1.0);
  // Without the start, the same target buys less noise per iteration.
  c.start = {};
  StatusOr<CalibrationResult> plain_or = Calibrate(c);
  ASSERT_TRUE(plain_or.ok()) << plain_or.status().ToString();
  const CalibrationResult& plain = *plain_or;
  EXPECT_LT(plain.noise_multipliers[0], z);
  EXPECT_NEAR(plain.noise_multipliers[0] / z, std::sqrt(0.8), 0.01);
}

TEST(StartCalibrationTest, RefusesAShareOutsideTheOpenUnitInterval) {
  CalibrationOptions c;
  c.epsilon = 1.0;
  c.delta = 1e-5;
  c.iterations = 5;
  c.pattern = {"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
  c.start = PrivateStartPattern(NoiseSampling::kDiscrete);
  for (double share : {0.0, 1.0, -0.1, std::nan("")}) {
    c.start_share = share;
    EXPECT_FALSE(Calibrate(c).ok()) << share;
  }
}

}  // namespace
}  // namespace dpem::internal
