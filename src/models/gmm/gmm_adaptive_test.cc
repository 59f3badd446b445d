// The adaptive schedule of private Gaussian-mixture fits (GmmFitOptions::
// adaptive_iterations; docs/gmm.md, "Adaptive J"): its budget weights
// (derived here by hand from the J = 3 schedules), the movement statistic's
// arithmetic and noise normalisation, the pool's arithmetic, and that both
// branches make the same releases: labels, sensitivities and noise, which
// the ledger and the guarantee show.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dpem/models/fit_defaults.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/random/samplers.h"
#include "models/gmm/gmm_adaptive.h"
#include "models/gmm/gmm_release_plan.h"
#include "testing/fit_options.h"
#include "testing/gmm_data.h"

namespace dpem {
namespace {

using test_support::ThreeClusters;

GmmFit MustFit(const DataMatrix& x, const GmmFitOptions& o, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  StatusOr<GmmFit> fit = FitGmm(x, o, gen);
  EXPECT_TRUE(fit.ok()) << fit.status().ToString();
  return fit.ok() ? *std::move(fit) : GmmFit{};
}

// n records in 6-D whose columns are degenerate along the axes, as the
// Adult census columns are (a uniform column, an exponential one, a
// mostly-zero one, a 16-level one, a rounded Gaussian one and a rare flag):
// EM from the private start keeps moving on them.
DataMatrix AxisDegenerate(Eigen::Index n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  DataMatrix x(n, 6);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = gen.UniformOpen01();
    x(i, 1) = -0.1 * std::log(1.0 - gen.UniformOpen01());
    x(i, 2) = gen.UniformOpen01() < 0.1 ? 0.3 + 0.7 * gen.UniformOpen01() : 0.0;
    x(i, 3) = std::floor(16.0 * gen.UniformOpen01()) / 16.0;
    x(i, 4) = std::round(10.0 * (0.4 + 0.1 * SampleStandardNormal(gen))) / 10.0;
    x(i, 5) = gen.UniformOpen01() < 0.05 ? 0.5 : 0.0;
  }
  return x;
}

TEST(AdaptiveIterationWeightsTest, KeepsTheHeadsSharesAndSumsToJ) {
  // The diagonal schedule at J = 3 is (0.5, 1, 1.5): shares 1/6, 1/3, 1/2 of
  // the budget. At J = 6 the first two keep theirs (1 and 2 of 6), the third
  // keeps 30% of its half (0.9) and each of the three later ones has a third
  // of the other 70% (0.7).
  const std::vector<double> diagonal = internal::AdaptiveIterationWeights({0.5, 1.0, 1.5}, 6);
  const std::vector<double> expected = {1.0, 2.0, 0.9, 0.7, 0.7, 0.7};
  ASSERT_EQ(diagonal.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(diagonal[i], expected[i], 1e-12) << i;
  }
  // Equal iterations (d < 5): thirds; the third's 2 of 6 split 0.6 and 3 x 1.4/3.
  const std::vector<double> equal = internal::AdaptiveIterationWeights({}, 6);
  const std::vector<double> expected_equal = {2.0, 2.0, 0.6, 1.4 / 3, 1.4 / 3, 1.4 / 3};
  for (std::size_t i = 0; i < expected_equal.size(); ++i) {
    EXPECT_NEAR(equal[i], expected_equal[i], 1e-12) << i;
  }
  // The plan of a full fit in d = 6 reads the same schedule.
  GmmFitOptions o = test_support::MakeGmmOptions(3, kAdaptiveIterations, 1.0, 1e-5, 1.0);
  const std::vector<double> planned =
      internal::GmmIterationWeights(o, 6, internal::IterationSchedule::kAdaptive);
  ASSERT_EQ(planned.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(planned[i], expected[i], 1e-12) << i;
  }
  EXPECT_TRUE(internal::CheckGmmIterationWeights(planned, kAdaptiveIterations).ok());
}

// Two components in 2-D with diagonal covariances diag(a, b) and weights
// (w, 1 - w).
GmmParameters TwoDiagonal(double w, const Eigen::Vector2d& mean0, const Eigen::Vector2d& mean1,
                          double a, double b) {
  GmmParameters p;
  p.type = CovarianceType::kFull;
  p.weights = Eigen::Vector2d(w, 1.0 - w);
  p.means = Eigen::MatrixXd(2, 2);
  p.means.row(0) = mean0.transpose();
  p.means.row(1) = mean1.transpose();
  p.covariances = {Eigen::Vector2d(a, b).asDiagonal(), Eigen::Vector2d(a, b).asDiagonal()};
  return p;
}

TEST(MeanMovementTest, IsTheNoiseNormalisedMahalanobisMovement) {
  const GmmParameters before = TwoDiagonal(0.5, {0.1, 0.2}, {-0.3, 0.0}, 0.04, 0.01);
  const GmmParameters after = TwoDiagonal(0.5, {0.12, 0.21}, {-0.3, 0.0}, 0.04, 0.01);
  // Component 0 moves by (0.02, 0.01): 0.0004 / 0.04 + 0.0001 / 0.01 = 0.02;
  // n_0 = 500, so 500^2 x 0.02 = 5000; component 1 does not move. The mean
  // over K = 2 is 2500, over d rho^2 (s_b^2 + s_a^2) = 2 x 4 x 5 = 40.
  EXPECT_NEAR(internal::MeanMovement(before, after, 1.0, 2.0, 2.0, 1000.0), 62.5, 1e-9);
  EXPECT_EQ(internal::MeanMovement(before, before, 1.0, 2.0, 2.0, 1000.0), 0.0);
  GmmParameters broken = after;
  broken.covariances[1](1, 1) = -1.0;  // Does not factor: counts as moving.
  EXPECT_EQ(internal::MeanMovement(before, broken, 1.0, 2.0, 2.0, 1000.0),
            std::numeric_limits<double>::max());
}

TEST(MeanMovementTest, IsFiniteWhenTheNoiseScaleUnderflows) {
  // A public --frame-radius of 1e-200 is valid (any finite radius > 0), but
  // rho^2 underflows to 0, and so does the statistic's noise scale: a
  // component that did not move then gives 0 / 0. The statistic must stay a
  // finite number (as for a covariance that does not factor): the fit writes
  // it to the model file, where a NaN becomes null and the file is refused
  // on reading (privacy.adaptive_iterations.movement). On f55f2c0 it is NaN
  // here, and every adaptive fit at that radius writes an unreadable file.
  const GmmParameters before = TwoDiagonal(0.5, {0.1, 0.2}, {-0.3, 0.0}, 0.04, 0.01);
  const GmmParameters after = TwoDiagonal(0.5, {0.12, 0.21}, {-0.3, 0.0}, 0.04, 0.01);
  for (const GmmParameters* p : {&before, &after}) {
    const double t = internal::MeanMovement(before, *p, 1.0, 2.0, 1e-200, 1000.0);
    EXPECT_TRUE(std::isfinite(t) && t >= 0.0) << t;
  }
}

TEST(MeanMovementTest, AveragesOneWhereOnlyTheNoiseMovesTheMeans) {
  // Means that move only by frame noise: component k's released mean
  // carries noise of covariance rho^2 s^2 Sigma_k / n_k^2 in each iterate
  // (noise s on its sum in a frame of radius rho), independent between
  // iterates. Then E[T] = 1 by the definition's normalisation.
  Generator gen = Generator::FromSeed(31);
  const double n = 5000.0, rho = 3.0, s_before = 4.0, s_after = 7.0;
  GmmParameters p;
  p.type = CovarianceType::kFull;
  p.weights = Eigen::Vector3d(0.2, 0.3, 0.5);
  p.means = Eigen::MatrixXd::Zero(3, 3);
  Eigen::Matrix3d c;
  c << 0.02, 0.005, 0.0, 0.005, 0.01, 0.002, 0.0, 0.002, 0.03;
  p.covariances = {c, 0.5 * c, 2.0 * c};
  const auto noisy = [&](double s) {
    GmmParameters q = p;
    for (Eigen::Index k = 0; k < 3; ++k) {
      const Eigen::Matrix3d l = p.covariances[k].llt().matrixL();
      Eigen::Vector3d z;
      for (int j = 0; j < 3; ++j) z(j) = SampleStandardNormal(gen);
      q.means.row(k) = (rho * s / (p.weights(k) * n) * (l * z)).transpose();
    }
    return q;
  };
  double sum = 0.0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) {
    sum += internal::MeanMovement(noisy(s_before), noisy(s_after), s_before, s_after, rho, n);
  }
  EXPECT_NEAR(sum / draws, 1.0, 0.05);
}

TEST(ReleasePoolTest, WeighsEachReleaseByItsShare) {
  GmmStatistics a, b;
  for (GmmStatistics* s : {&a, &b}) {
    s->type = CovarianceType::kFull;
    s->n = 10;
    s->log_likelihood = -3.0;
  }
  a.counts = Eigen::Vector2d(4.0, 6.0);
  b.counts = Eigen::Vector2d(8.0, 2.0);
  a.sums = Eigen::MatrixXd::Constant(2, 2, 1.0);
  b.sums = Eigen::MatrixXd::Constant(2, 2, 5.0);
  a.second_full = {Eigen::Matrix2d::Identity(), Eigen::Matrix2d::Zero()};
  b.second_full = {Eigen::Matrix2d::Constant(3.0), Eigen::Matrix2d::Constant(-1.0)};
  internal::ReleasePool pool;
  EXPECT_EQ(pool.weight(), 0.0);
  pool.Add(a, 1.0);
  pool.Add(b, 3.0);
  EXPECT_EQ(pool.weight(), 4.0);
  const GmmStatistics r = pool.Result();  // (1 a + 3 b) / 4.
  EXPECT_TRUE(r.counts.isApprox(Eigen::Vector2d(7.0, 3.0)));
  EXPECT_TRUE(r.sums.isApprox(Eigen::MatrixXd::Constant(2, 2, 4.0)));
  Eigen::Matrix2d first;
  first << 2.5, 2.25, 2.25, 2.5;
  EXPECT_TRUE(r.second_full[0].isApprox(first));
  EXPECT_TRUE(r.second_full[1].isApprox(Eigen::Matrix2d::Constant(-0.75)));
  EXPECT_TRUE(std::isnan(r.log_likelihood));  // Not a release.
}

// A default-J fit of `x` at epsilon `eps` (zCDP) from the private start.
GmmFitOptions DefaultJOptions(int k, double eps, double data_norm) {
  GmmFitOptions o = test_support::MakeGmmOptions(k, 0, eps, 1e-5, data_norm);
  o.accountant = AccountantKind::kZcdp;
  return o;
}

TEST(GmmAdaptiveIterationsTest, BothBranchesMakeTheSameReleases) {
  // Three well-separated 2-D clusters (which mostly settle) and the
  // axis-degenerate columns (which keep moving), each at a noise large for
  // the data (the adaptive schedule applies), fitted with three seeds: the
  // ledgers hold the start's two releases and six joint ones at the
  // schedule's noise, whichever branch ran, and the guarantee is the
  // target's. Both branches run among these seeded fits.
  struct Case {
    DataMatrix x;
    int k;
    double eps;
    double data_norm;
  };
  const Case cases[] = {{ThreeClusters(3000, 5), 3, 0.3, 1.0},
                        {AxisDegenerate(20000, 6), 5, 1.0, 2.0}};
  int settled = 0, moving = 0;
  for (const Case& c : cases) {
    for (std::uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE("d " + std::to_string(c.x.cols()) + ", seed " + std::to_string(seed));
      const GmmFitOptions o = DefaultJOptions(c.k, c.eps, c.data_norm);
      const GmmFit fit = MustFit(c.x, o, seed);
      const GmmGuarantee& g = fit.guarantee;
      ASSERT_TRUE(g.adaptive_iterations);
      EXPECT_EQ(fit.iterations, kAdaptiveIterations);
      EXPECT_EQ(g.settled, g.movement < kSettledMovement) << g.movement;
      ++(g.settled ? settled : moving);
      EXPECT_EQ(g.averaged_iterations, g.settled ? 1 : kAdaptiveIterations / 2);
      EXPECT_LE(g.epsilon, c.eps);
      const std::vector<Release>& releases = g.ledger.releases();
      ASSERT_EQ(releases.size(), 2u + kAdaptiveIterations);
      ASSERT_EQ(g.noise_multipliers.size(), 1u);
      for (int it = 1; it <= kAdaptiveIterations; ++it) {
        const Release& r = releases[static_cast<std::size_t>(1 + it)];
        EXPECT_EQ(r.label, "iteration " + std::to_string(it) + " / joint statistics");
        const double z = g.noise_multipliers[0] / std::sqrt(g.iteration_weights[it - 1]);
        EXPECT_NEAR(r.NoiseMultiplier() / z, 1.0, 1e-5) << it;
      }
      EXPECT_TRUE(ValidateParameters(fit.parameters).ok());
    }
  }
  EXPECT_GT(settled, 0);
  EXPECT_GT(moving, 0);
}

// Review (review-frames): neighbouring data sets (one record replaced by 0,
// a subnormal vector, +-1e300 or -1.7e308 in every coordinate, a duplicate)
// give fits that both succeed and hold bitwise the same ledger (labels,
// sensitivities, noise scales, sampling), whichever branch of the adaptive
// schedule each took, for tiny and huge fixed frame radii, the adaptive
// radii, N = 1 to 200, d = 1 to 17, every covariance type, a lighter first
// iteration or not, and discrete or continuous noise.
TEST(GmmAdaptiveIterationsTest, NeighboursHoldTheSameLedgerUnderExtremeOptions) {
  std::mt19937_64 rng(4711);
  std::normal_distribution<double> z(0.0, 1.0);
  auto pick = [&](std::initializer_list<double> v) { return *(v.begin() + rng() % v.size()); };
  auto text = [](const PrivacyLedger& l) {
    std::string s;
    for (const Release& r : l.releases()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%d %a %a %d ", static_cast<int>(r.mechanism),
                    r.sensitivity, r.noise_scale, static_cast<int>(r.sampling));
      s += buf + r.label + "\n";
    }
    return s;
  };
  const CovarianceType types[] = {CovarianceType::kFull, CovarianceType::kDiagonal,
                                  CovarianceType::kSpherical};
  int adaptive = 0, differing_branches = 0;
  for (int t = 0; t < 300; ++t) {
    const int n = static_cast<int>(pick({1, 2, 3, 10, 200}));
    const int d = static_cast<int>(pick({1, 2, 3, 5, 17}));
    GmmFitOptions o;
    o.components = std::min(n, static_cast<int>(pick({1, 2, 3})));
    o.covariance = types[rng() % 3];
    o.epsilon = pick({1e-3, 0.1, 1.0, 10.0, 1e4});
    o.delta = 1e-5;
    o.domain.data_norm = 1.0;
    o.frame_radius = pick({0.0, 0.0, 1e-300, 1e-160, 1e-30, 0.5, 1e300});
    o.iterations = static_cast<int>(pick({0.0, 0.0, 2.0, 3.0}));
    o.spherical_first_iteration = rng() % 2;
    o.noise_sampling = rng() % 2 ? NoiseSampling::kDiscrete : NoiseSampling::kContinuous;
    DataMatrix x(n, d);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < d; ++j) x(i, j) = 0.2 * z(rng) + (i % 2 ? 0.4 : -0.4);
    }
    DataMatrix y = x;
    const int kind = static_cast<int>(rng() % 6);
    for (int j = 0; j < d; ++j) {
      y(0, j) = kind == 0   ? 0.0
                : kind == 1 ? 1e-310
                : kind == 2 ? 1e300
                : kind == 3 ? -1.7e308
                : kind == 4 ? x(n - 1, j)
                            : z(rng);
    }
    const std::uint64_t seed = rng();
    Generator g1 = Generator::FromSeed(seed), g2 = Generator::FromSeed(seed);
    const StatusOr<GmmFit> f1 = FitGmm(x, o, g1);
    const StatusOr<GmmFit> f2 = FitGmm(y, o, g2);
    ASSERT_TRUE(f1.ok()) << f1.status().ToString();
    ASSERT_TRUE(f2.ok()) << f2.status().ToString();
    EXPECT_EQ(text(f1->guarantee.ledger), text(f2->guarantee.ledger)) << "trial " << t;
    adaptive += f1->guarantee.adaptive_iterations;
    differing_branches += f1->guarantee.settled != f2->guarantee.settled;
  }
  EXPECT_GT(adaptive, 20);
  EXPECT_GT(differing_branches, 0);  // Neighbours took different branches.
}

TEST(GmmAdaptiveIterationsTest, AppliesOnlyToTheDefaultJoint) {
  const DataMatrix x = ThreeClusters(3000, 5);
  GmmFitOptions o = DefaultJOptions(3, 0.3, 2.0);
  o.iterations = kAdaptiveIterations;  // An explicit J: its own schedule.
  EXPECT_FALSE(MustFit(x, o, 1).guarantee.adaptive_iterations);
  o = DefaultJOptions(3, 0.3, 2.0);
  o.mechanisms = GmmMechanisms::kGgg;
  const GmmFit ggg = MustFit(x, o, 1);
  EXPECT_FALSE(ggg.guarantee.adaptive_iterations);
  EXPECT_EQ(ggg.iterations, kDefaultPrivateStartIterations);
  o = DefaultJOptions(3, 0.3, 2.0);
  o.component_frames = false;
  EXPECT_FALSE(MustFit(x, o, 1).guarantee.adaptive_iterations);
  o = DefaultJOptions(3, 0.3, 2.0);
  o.init = GmmInit::kRandom;
  EXPECT_FALSE(MustFit(x, o, 1).guarantee.adaptive_iterations);
  o = DefaultJOptions(3, 300.0, 2.0);  // Small noise: the quiet J.
  const GmmFit quiet = MustFit(x, o, 1);
  EXPECT_FALSE(quiet.guarantee.adaptive_iterations);
  EXPECT_EQ(quiet.iterations, kQuietPrivateStartIterations);
}

}  // namespace
}  // namespace dpem
