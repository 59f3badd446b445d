// The spherical first iteration of a private fit
// (GmmFitOptions::spherical_first_iteration, docs/gmm.md): when it applies,
// what the first iteration releases, and that it costs what any iteration
// costs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

// Two well-separated elongated Gaussians in d dimensions (correlated first
// two coordinates), inside the unit ball. Test data only.
DataMatrix TwoElongatedClusters(Eigen::Index d, Eigen::Index n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double side = (i % 2 == 0) ? -0.4 : 0.4;
    const double along = 0.08 * SampleStandardNormal(gen);
    for (Eigen::Index j = 0; j < d; ++j) x(i, j) = 0.02 * SampleStandardNormal(gen);
    x(i, 0) += side + along;
    x(i, 1) += along;
  }
  return x;
}

// A private joint fit with the spherical first iteration asked for (it is
// off by default).
GmmFitOptions JointOptions(CovarianceType type, int iterations) {
  GmmFitOptions o = test_support::MakeGmmOptions(2, iterations, /*epsilon=*/2.0,
                                                 /*delta=*/1e-5, /*data_norm=*/1.0);
  o.covariance = type;
  o.spherical_first_iteration = true;
  return o;
}

struct FitTrace {
  GmmFit fit;
  std::vector<CovarianceType> released;  // Per iteration, from the progress reports.
};

FitTrace MustFit(const DataMatrix& x, GmmFitOptions o, std::uint64_t seed) {
  FitTrace t;
  o.progress = [&t](const GmmIterationReport& r) { t.released.push_back(r.released_covariance); };
  Generator gen = Generator::FromSeed(seed);
  StatusOr<GmmFit> fit = FitGmm(x, o, gen);
  EXPECT_TRUE(fit.ok()) << fit.status().ToString();
  if (fit.ok()) t.fit = *fit;
  return t;
}

// A release's recorded multiplier is the schedule's, z / sqrt(w), or at most
// the discrete grid's rounding (1e-4) above it.
void ExpectScheduledMultiplier(const Release& r, double z, double w) {
  const double scheduled = z / std::sqrt(w);
  EXPECT_GE(r.NoiseMultiplier(), scheduled * (1.0 - 1e-12)) << r.label;
  EXPECT_LE(r.NoiseMultiplier(), scheduled * (1.0 + 1e-4)) << r.label;
}

TEST(SphericalFirstIterationTest, AppliesOnlyWhereItsConditionsHold) {
  const Eigen::Index d = kSphericalFirstIterationMinDimension;
  // Off by default (it loses on data degenerate along the axes, docs/gmm.md).
  GmmFitOptions by_default = JointOptions(CovarianceType::kFull, 3);
  by_default.spherical_first_iteration = GmmFitOptions{}.spherical_first_iteration;
  EXPECT_FALSE(by_default.SphericalFirstIteration(d));
  const GmmFitOptions base = JointOptions(CovarianceType::kFull, 3);
  EXPECT_TRUE(base.SphericalFirstIteration(d));
  EXPECT_TRUE(base.SphericalFirstIteration(d + 20));
  EXPECT_FALSE(base.SphericalFirstIteration(d - 1));
  GmmFitOptions o = base;
  o.covariance = CovarianceType::kDiagonal;
  EXPECT_TRUE(o.SphericalFirstIteration(d));
  o.covariance = CovarianceType::kSpherical;  // Nothing to gain.
  EXPECT_FALSE(o.SphericalFirstIteration(d));
  o = base;
  o.init = GmmInit::kRandom;  // Isotropic too.
  EXPECT_TRUE(o.SphericalFirstIteration(d));
  o = base;
  o.iterations = 1;  // The fit's type would never be released.
  EXPECT_FALSE(o.SphericalFirstIteration(d));
  o.iterations = 0;  // The private start's default J: 3 (or 10 when quiet), >= 2.
  EXPECT_TRUE(o.SphericalFirstIteration(d));
  o = base;
  o.spherical_first_iteration = false;
  EXPECT_FALSE(o.SphericalFirstIteration(d));
  o = base;
  o.component_frames = false;
  EXPECT_FALSE(o.SphericalFirstIteration(d));
  o = base;
  o.mechanisms = GmmMechanisms::kGgg;
  EXPECT_FALSE(o.SphericalFirstIteration(d));
  o = base;
  o.epsilon = std::numeric_limits<double>::infinity();
  o.init.reset();
  EXPECT_FALSE(o.SphericalFirstIteration(d));
}

TEST(SphericalFirstIterationTest, TheFirstIterationReleasesSphericalStatistics) {
  const Eigen::Index d = kSphericalFirstIterationMinDimension;
  const DataMatrix x = TwoElongatedClusters(d, 4000, 3);
  using enum CovarianceType;
  for (CovarianceType type : {kFull, kDiagonal}) {
    SCOPED_TRACE(std::string(CovarianceTypeName(type)));
    const FitTrace on = MustFit(x, JointOptions(type, 3), 5);
    EXPECT_EQ(on.released, (std::vector<CovarianceType>{kSpherical, type, type}));
    EXPECT_TRUE(on.fit.guarantee.spherical_first_iteration);
    EXPECT_EQ(on.fit.parameters.type, type);
    GmmFitOptions o = JointOptions(type, 3);
    o.spherical_first_iteration = false;
    o.diagonal_first_iteration = false;
    const FitTrace off = MustFit(x, o, 5);
    EXPECT_EQ(off.released, (std::vector<CovarianceType>{type, type, type}));
    EXPECT_FALSE(off.fit.guarantee.spherical_first_iteration);
  }
  // The elongation comes back from the later full releases: each fitted
  // covariance's first two coordinates are strongly correlated (0.94 in the
  // data; a spherical covariance would have 0).
  const FitTrace full = MustFit(x, JointOptions(kFull, 3), 5);
  for (const Eigen::MatrixXd& c : full.fit.parameters.covariances) {
    EXPECT_GT(c(0, 1) / std::sqrt(c(0, 0) * c(1, 1)), 0.7);
  }
  // Below the dimension rule, every iteration releases the fit's type.
  const DataMatrix low = TwoElongatedClusters(d - 1, 4000, 3);
  EXPECT_EQ(MustFit(low, JointOptions(kFull, 3), 5).released,
            (std::vector<CovarianceType>{kFull, kFull, kFull}));
}

// The diagonal first iteration, the default of a full fit in d >= 5.
TEST(SphericalFirstIterationTest, TheDefaultFirstIterationOfAFullFitIsDiagonal) {
  const Eigen::Index d = kSphericalFirstIterationMinDimension;
  const DataMatrix x = TwoElongatedClusters(d, 4000, 3);
  using enum CovarianceType;
  GmmFitOptions o = JointOptions(kFull, 3);
  o.spherical_first_iteration = false;  // As by default.
  EXPECT_TRUE(GmmFitOptions{}.diagonal_first_iteration);
  EXPECT_EQ(o.FirstIterationCovariance(d), kDiagonal);
  EXPECT_EQ(o.FirstIterationCovariance(d - 1), kFull);
  const FitTrace full = MustFit(x, o, 5);
  EXPECT_EQ(full.released, (std::vector<CovarianceType>{kDiagonal, kFull, kFull}));
  EXPECT_TRUE(full.fit.guarantee.diagonal_first_iteration);
  EXPECT_FALSE(full.fit.guarantee.spherical_first_iteration);
  // Its budget schedule: (0.5, 1, 1.5) at J = 3 (kDiagonalIterationWeight,
  // an equal share, kDiagonalFinalIterationWeight).
  const std::vector<double> weights = {0.5, 1.0, 1.5};
  EXPECT_EQ(kDiagonalIterationWeight, 0.5);
  EXPECT_EQ(kDiagonalFinalIterationWeight, 1.5);
  EXPECT_EQ(full.fit.guarantee.iteration_weights, weights);
  // The correlation comes back from the later full releases.
  for (const Eigen::MatrixXd& c : full.fit.parameters.covariances) {
    EXPECT_GT(c(0, 1) / std::sqrt(c(0, 0) * c(1, 1)), 0.7);
  }
  // Its release: the diagonal split's sensitivity (1), the calibrated
  // multiplier, like the others.
  const double z = full.fit.guarantee.noise_multipliers[0];
  int j = 0;
  for (const Release& r : full.fit.guarantee.ledger.releases()) {
    if (r.label.rfind("iteration", 0) != 0) continue;
    const CovarianceType type = j++ == 0 ? kDiagonal : kFull;
    const double documented = JointSensitivity(type, DefaultJointNoiseSplit(type, d, 2));
    EXPECT_NEAR(documented, 1.0, 1e-12);
    EXPECT_GE(r.sensitivity, documented) << r.label;
    EXPECT_LE(r.sensitivity, documented * (1.0 + 1e-4)) << r.label;
    ExpectScheduledMultiplier(r, z, weights[static_cast<size_t>(j - 1)]);
  }
  EXPECT_EQ(j, 3);
  EXPECT_LE(full.fit.guarantee.epsilon, 2.0);
  // Without the schedule, equal iterations at the calibrated multiplier.
  GmmFitOptions equal = o;
  equal.budget_schedule = false;
  const FitTrace unscheduled = MustFit(x, equal, 5);
  EXPECT_EQ(unscheduled.released, (std::vector<CovarianceType>{kDiagonal, kFull, kFull}));
  EXPECT_TRUE(unscheduled.fit.guarantee.iteration_weights.empty());
  for (const Release& r : unscheduled.fit.guarantee.ledger.releases()) {
    if (r.label.rfind("iteration", 0) == 0) {
      ExpectScheduledMultiplier(r, unscheduled.fit.guarantee.noise_multipliers[0], 1.0);
    }
  }
  // A diagonal fit has nothing lighter to release first but spherical.
  o.covariance = kDiagonal;
  const FitTrace diagonal = MustFit(x, o, 5);
  EXPECT_EQ(diagonal.released, (std::vector<CovarianceType>{kDiagonal, kDiagonal, kDiagonal}));
  EXPECT_FALSE(diagonal.fit.guarantee.diagonal_first_iteration);
  // The spherical first iteration, when asked for, takes precedence.
  o.covariance = kFull;
  o.spherical_first_iteration = true;
  EXPECT_EQ(o.FirstIterationCovariance(d), kSpherical);
}

// The budget schedule of docs/gmm.md (kSphericalIterationWeight,
// kFinalIterationWeight, the rest shared, summing to J): J = 3 gives
// (0.25, 0.75, 2) and J = 2 (0.25, 1.75); below the dimension rule the
// iterations are equal.
TEST(SphericalFirstIterationTest, FollowsTheBudgetSchedule) {
  const Eigen::Index d = kSphericalFirstIterationMinDimension;
  const DataMatrix x = TwoElongatedClusters(d, 2000, 7);
  const std::vector<std::vector<double>> schedules = {{0.25, 1.75}, {0.25, 0.75, 2.0}};
  for (NoiseSampling sampling : {NoiseSampling::kDiscrete, NoiseSampling::kContinuous}) {
    for (const std::vector<double>& w : schedules) {
      SCOPED_TRACE("J " + std::to_string(w.size()));
      GmmFitOptions o = JointOptions(CovarianceType::kFull, static_cast<int>(w.size()));
      o.noise_sampling = sampling;
      const GmmFit fit = MustFit(x, o, 9).fit;
      const double z = fit.guarantee.noise_multipliers[0];
      size_t j = 0;
      for (const Release& r : fit.guarantee.ledger.releases()) {
        if (r.label.rfind("iteration", 0) != 0) continue;
        ASSERT_LT(j, w.size());
        // One Gaussian release per iteration, at the sensitivity of its own
        // block split (1 by construction) and the schedule's multiplier.
        const CovarianceType type = j == 0 ? CovarianceType::kSpherical : CovarianceType::kFull;
        const double documented = JointSensitivity(type, DefaultJointNoiseSplit(type, d, 2));
        EXPECT_NEAR(documented, 1.0, 1e-12);
        EXPECT_GE(r.sensitivity, documented) << r.label;
        EXPECT_LE(r.sensitivity, documented * (1.0 + 1e-4)) << r.label;
        ExpectScheduledMultiplier(r, z, w[j]);
        ++j;
      }
      EXPECT_EQ(j, w.size());
      EXPECT_LE(fit.guarantee.epsilon, 2.0);
      EXPECT_GE(fit.guarantee.epsilon, 1.98);
    }
  }
  // Below the dimension rule: equal iterations.
  const DataMatrix low = TwoElongatedClusters(d - 1, 2000, 7);
  const GmmFit fit = MustFit(low, JointOptions(CovarianceType::kFull, 3), 9).fit;
  const double z = fit.guarantee.noise_multipliers[0];
  for (const Release& r : fit.guarantee.ledger.releases()) {
    if (r.label.rfind("iteration", 0) != 0) continue;
    ExpectScheduledMultiplier(r, z, 1.0);
  }
}

// What the fit reports: its guarantee's iteration_weights (the model file's
// privacy.iteration_weights) are the schedule its ledger follows, by the
// rule at J = 4 and 5 too ((J - 2.25) / (J - 2) between the first and the
// last); budget_schedule = false gives equal iterations and an empty
// schedule, with the spherical first iteration still on; and the start's
// noise is the same either way (the rule's weights sum to J). A review's
// test: it fails if the guarantee does not record the schedule, if the
// switch is ignored, or if the middle shares are wrong.
TEST(SphericalFirstIterationTest, TheGuaranteeRecordsTheScheduleItFollows) {
  const Eigen::Index d = kSphericalFirstIterationMinDimension;
  const DataMatrix x = TwoElongatedClusters(d, 2000, 11);
  for (int j : {4, 5}) {
    SCOPED_TRACE("J " + std::to_string(j));
    const GmmFit fit = MustFit(x, JointOptions(CovarianceType::kFull, j), 3).fit;
    const std::vector<double>& w = fit.guarantee.iteration_weights;
    ASSERT_EQ(w.size(), static_cast<size_t>(j));
    const double middle = (j - kSphericalIterationWeight - kFinalIterationWeight) / (j - 2.0);
    double total = 0.0;
    for (int i = 0; i < j; ++i) {
      const double expected = i == 0       ? kSphericalIterationWeight
                              : i == j - 1 ? kFinalIterationWeight
                                           : middle;
      EXPECT_NEAR(w[static_cast<size_t>(i)], expected, 1e-15) << i;
      total += w[static_cast<size_t>(i)];
    }
    EXPECT_NEAR(total, j, 1e-12);
    const double z = fit.guarantee.noise_multipliers[0];
    size_t i = 0;
    for (const Release& r : fit.guarantee.ledger.releases()) {
      if (r.label.rfind("iteration", 0) != 0) continue;
      ASSERT_LT(i, w.size());
      ExpectScheduledMultiplier(r, z, w[i]);
      ++i;
    }
    EXPECT_EQ(i, w.size());
    EXPECT_LE(fit.guarantee.epsilon, 2.0);
  }
  GmmFitOptions on = JointOptions(CovarianceType::kFull, 3);
  GmmFitOptions off = on;
  off.budget_schedule = false;
  const GmmFit scheduled = MustFit(x, on, 3).fit;
  const GmmFit equal = MustFit(x, off, 3).fit;
  EXPECT_EQ(scheduled.guarantee.iteration_weights.size(), 3u);
  EXPECT_TRUE(equal.guarantee.iteration_weights.empty());
  EXPECT_TRUE(equal.guarantee.spherical_first_iteration);
  const double z = equal.guarantee.noise_multipliers[0];
  int iterations = 0;
  for (const Release& r : equal.guarantee.ledger.releases()) {
    if (r.label.rfind("iteration", 0) != 0) continue;
    ++iterations;
    ExpectScheduledMultiplier(r, z, 1.0);
  }
  EXPECT_EQ(iterations, 3);
  EXPECT_LE(equal.guarantee.epsilon, 2.0);
  // The start's two releases: the same multipliers (to the bisection's
  // tolerance) with and without the schedule.
  const std::vector<Release>& a = scheduled.guarantee.ledger.releases();
  const std::vector<Release>& b = equal.guarantee.ledger.releases();
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].label.rfind("start", 0) != 0) continue;
    EXPECT_NEAR(a[k].NoiseMultiplier() / b[k].NoiseMultiplier(), 1.0, 2e-3) << a[k].label;
  }
}

}  // namespace
}  // namespace dpem
