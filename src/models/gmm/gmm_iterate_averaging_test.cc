// Iterate averaging of private Gaussian-mixture fits (GmmFitOptions::
// iterate_averaging, internal::AveragedIterations, internal::IterateAverage;
// docs/gmm.md, "Averaging the last iterates"): the average's arithmetic and
// domain, the rule that decides how many iterates a fit averages (derived
// here from the zCDP closed form, not from the code under test), and that
// averaging is post-processing: the same releases and ledger, different
// parameters.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/random/samplers.h"
#include "models/gmm/gmm_post_process.h"
#include "models/gmm/gmm_release_plan.h"
#include "testing/fit_options.h"
#include "testing/gmm_data.h"

namespace dpem {
namespace {

using test_support::ThreeClusters;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Two-component parameters of `type` in 2-D with the given means' x
// coordinate, weights (w, 1 - w) and covariance scale s.
GmmParameters TwoComponents(CovarianceType type, double x, double w, double s) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector2d(w, 1.0 - w);
  p.means = Eigen::MatrixXd(2, 2);
  p.means << x, 0.1, -x, -0.2;
  Eigen::Matrix2d full;
  full << s, (type == CovarianceType::kFull ? 0.3 * s : 0.0),
      (type == CovarianceType::kFull ? 0.3 * s : 0.0),
      (type == CovarianceType::kSpherical ? s : 2.0 * s);
  p.covariances = {full, 0.5 * full};
  return p;
}

TEST(IterateAverageTest, WeighsEachIterateAndKeepsTheStructure) {
  for (CovarianceType type :
       {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    SCOPED_TRACE(CovarianceTypeName(type));
    const GmmParameters a = TwoComponents(type, 0.2, 0.3, 0.01);
    const GmmParameters b = TwoComponents(type, 0.6, 0.7, 0.05);
    internal::IterateAverage average;
    EXPECT_TRUE(average.empty());
    average.Add(a, 1.0);
    average.Add(b, 3.0);
    EXPECT_FALSE(average.empty());
    const GmmParameters r = average.Result();
    // (1 a + 3 b) / 4, entry by entry.
    EXPECT_NEAR(r.weights(0), (0.3 + 3 * 0.7) / 4, 1e-15);
    EXPECT_NEAR(r.weights.sum(), 1.0, 1e-15);
    EXPECT_NEAR(r.means(0, 0), (0.2 + 3 * 0.6) / 4, 1e-15);
    EXPECT_NEAR(r.means(1, 0), (-0.2 - 3 * 0.6) / 4, 1e-15);
    EXPECT_NEAR(r.means(1, 1), -0.2, 1e-15);
    for (int k = 0; k < 2; ++k) {
      const double scale = k == 0 ? 1.0 : 0.5;
      EXPECT_NEAR(r.covariances[k](0, 0), scale * (0.01 + 3 * 0.05) / 4, 1e-15);
    }
    EXPECT_EQ(r.type, type);
    EXPECT_TRUE(ValidateParameters(r).ok()) << ValidateParameters(r).ToString();
    if (type != CovarianceType::kFull) EXPECT_EQ(r.covariances[0](0, 1), 0.0);
    if (type == CovarianceType::kSpherical) {
      EXPECT_EQ(r.covariances[0](0, 0), r.covariances[0](1, 1));
    }
  }
}

TEST(IterateAverageTest, StaysInTheDomain) {
  // Iterates on the domain's edges (means on the unit sphere, eigenvalues
  // at the floor and at 1): their average stays in it.
  const double floor = 1e-6;
  Generator gen = Generator::FromSeed(5);
  internal::IterateAverage average;
  for (int t = 0; t < 6; ++t) {
    GmmParameters p = TwoComponents(CovarianceType::kFull, 0.5, 0.5, 0.5);
    for (Eigen::Index k = 0; k < 2; ++k) {
      Eigen::Vector2d u(SampleStandardNormal(gen), SampleStandardNormal(gen));
      p.means.row(k) = u.normalized().transpose();
      const double angle = SampleStandardNormal(gen);
      Eigen::Matrix2d q;
      q << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
      p.covariances[k] = q * Eigen::Vector2d(floor, 1.0).asDiagonal() * q.transpose();
    }
    average.Add(p, 1.0 + t);
  }
  const GmmParameters r = average.Result();
  for (Eigen::Index k = 0; k < 2; ++k) {
    EXPECT_LE(r.means.row(k).norm(), 1.0 + 1e-12);
    const Eigen::Vector2d eig = Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d>(
                                    r.covariances[k]).eigenvalues();
    EXPECT_GE(eig(0), floor * (1.0 - 1e-9));
    EXPECT_LE(eig(1), 1.0 + 1e-12);
  }
}

GmmFit MustFit(const DataMatrix& x, const GmmFitOptions& o, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  StatusOr<GmmFit> fit = FitGmm(x, o, gen);
  EXPECT_TRUE(fit.ok()) << fit.status().ToString();
  return fit.ok() ? *std::move(fit) : GmmFit{};
}

// The documented ratio r = sigma_sums sqrt(d) K / n of a zCDP fit of K
// components on n records in d dimensions from the private start: the
// iterations' whole budget (1 - kPrivateStartShare = 0.8 of rho, where
// rho + 2 sqrt(rho ln(1/delta)) = epsilon) in one joint release of
// sensitivity 1, whose sums carry DefaultJointNoiseSplit's share.
double NoiseRatio(double epsilon, double delta, int k, Eigen::Index d, Eigen::Index n) {
  const double l = std::log(1.0 / delta);
  const double rho = std::pow(-std::sqrt(l) + std::sqrt(l + epsilon), 2);
  const double sums = DefaultJointNoiseSplit(CovarianceType::kFull, d, k).sums /
                      std::sqrt(2.0 * 0.8 * rho);
  return sums * std::sqrt(static_cast<double>(d)) * k / static_cast<double>(n);
}

GmmFitOptions ZcdpOptions(int j, double epsilon) {
  GmmFitOptions o = test_support::MakeGmmOptions(3, j, epsilon, 1e-5, 1.0);
  o.accountant = AccountantKind::kZcdp;
  return o;
}

TEST(GmmIterateAveragingTest, FollowsTheNoiseRule) {
  const Eigen::Index n = 600;
  const DataMatrix x = ThreeClusters(n, 4);
  std::set<int> seen;
  for (double eps : {1.0, 300.0}) {
    const double r = NoiseRatio(eps, 1e-5, 3, 2, n);
    ASSERT_GT(std::abs(r / kQuietCentreRatio - 1.0), 0.05) << eps;  // Off the boundary.
    const bool noisy = r >= kQuietCentreRatio;
    seen.insert(noisy);
    for (int j : {1, 2, 3, 4, 5, 10, 11}) {
      SCOPED_TRACE("epsilon " + std::to_string(eps) + ", J " + std::to_string(j));
      const int expected = noisy && j >= 4 ? j / 2 : 1;
      GmmFitOptions o = ZcdpOptions(j, eps);
      StatusOr<int> rule = internal::AveragedIterations(o, n, 2);
      ASSERT_TRUE(rule.ok()) << rule.status().ToString();
      EXPECT_EQ(*rule, expected);
      if (j == 10) {
        EXPECT_EQ(MustFit(x, o, 3).guarantee.averaged_iterations, expected);
        o.iterate_averaging = false;
        EXPECT_EQ(MustFit(x, o, 3).guarantee.averaged_iterations, 1);
        o.iterate_averaging = true;
        o.init = GmmInit::kRandom;  // The random start's iterates still move.
        EXPECT_EQ(MustFit(x, o, 3).guarantee.averaged_iterations, 1);
      }
    }
  }
  EXPECT_EQ(seen.size(), 2u);  // Both sides of the threshold.
  GmmFitOptions plain = test_support::MakeGmmOptions(3, 10, kInf, 0.0, 1.0);
  EXPECT_EQ(MustFit(x, plain, 3).guarantee.averaged_iterations, 1);
}

TEST(GmmIterateAveragingTest, WeighsByPositionAndBudget) {
  // J = 10 full in d = 6 has the diagonal first iteration's schedule (0.5,
  // 1 x 8, 1.5); the last 5 iterates weigh 1, 2, 3, 4 and 5 x 1.5.
  GmmFitOptions o = test_support::MakeGmmOptions(3, 10, 1.0, 1e-5, 1.0);
  StatusOr<internal::GmmFitPlan> schedule = internal::PlanGmmFit(o, 600, 6);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  ASSERT_EQ(schedule->plan.iteration_weights.size(), 10u);
  const double expected[5] = {1.0, 2.0, 3.0, 4.0, 7.5};
  for (int it = 6; it <= 10; ++it) {
    EXPECT_NEAR(internal::AveragedIterateWeight(schedule->plan, it, 10, 5), expected[it - 6],
                1e-12) << it;
  }
  // Equal iterations (no schedule): the ramp alone.
  o.budget_schedule = false;
  StatusOr<internal::GmmFitPlan> equal = internal::PlanGmmFit(o, 600, 6);
  ASSERT_TRUE(equal.ok()) << equal.status().ToString();
  ASSERT_TRUE(equal->plan.iteration_weights.empty());
  for (int it = 8; it <= 10; ++it) {
    EXPECT_EQ(internal::AveragedIterateWeight(equal->plan, it, 10, 3), it - 7.0);
  }
}

TEST(GmmIterateAveragingTest, IsPostProcessingOnly) {
  // Same seed, averaging on and off: the same releases (labels, noise) and
  // guarantee; the parameters differ where the rule averages and are the
  // same bit for bit where it does not (J = 3).
  const Eigen::Index n = 600;
  const DataMatrix x = ThreeClusters(n, 9);
  ASSERT_GE(NoiseRatio(1.0, 1e-5, 3, 2, n), kQuietCentreRatio);
  for (int j : {3, 10}) {
    SCOPED_TRACE("J " + std::to_string(j));
    GmmFitOptions o = ZcdpOptions(j, 1.0);
    const GmmFit on = MustFit(x, o, 12);
    o.iterate_averaging = false;
    const GmmFit off = MustFit(x, o, 12);
    const auto& a = on.guarantee.ledger.releases();
    const auto& b = off.guarantee.ledger.releases();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].label, b[i].label);
      EXPECT_EQ(a[i].noise_scale, b[i].noise_scale);
      EXPECT_EQ(a[i].sensitivity, b[i].sensitivity);
    }
    EXPECT_EQ(on.guarantee.epsilon, off.guarantee.epsilon);
    EXPECT_EQ(on.guarantee.delta, off.guarantee.delta);
    EXPECT_TRUE(ValidateParameters(on.parameters).ok());
    const double moved = (on.parameters.means - off.parameters.means).norm();
    if (j == 3) {
      EXPECT_EQ(moved, 0.0);
      EXPECT_EQ(on.parameters.covariances[0], off.parameters.covariances[0]);
    } else {
      EXPECT_GT(moved, 0.0);
      EXPECT_EQ(on.guarantee.averaged_iterations, 5);
    }
  }
}

}  // namespace
}  // namespace dpem
