#include "dpem/accounting/calibration.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/fit_options.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

CalibrationOptions Options(double eps, double delta, int j, const ReleasePattern& pattern,
                           AccountantKind kind) {
  CalibrationOptions o;
  o.pattern = pattern;
  o.accountant = kind;
  return test_support::WithIterationsAndPrivacy(o, j, eps, delta);
}

CalibrationResult MustCalibrate(const CalibrationOptions& o) {
  StatusOr<CalibrationResult> r = Calibrate(o);
  EXPECT_TRUE(r.ok()) << AccountantName(o.accountant) << ": " << r.status().ToString();
  return r.ok() ? *r : CalibrationResult{};
}

TEST(CalibrationTest, ScenarioPatternsFollowPark2017) {
  const ReleasePattern ggg = ScenarioPattern("GGG", 3).value();
  const ReleasePattern llg = ScenarioPattern("LLG", 3).value();
  ASSERT_EQ(ggg.releases.size(), 3u);
  int ggg_total = 0, llg_laplace = 0;
  for (const ReleaseSpec& s : ggg.releases) {
    EXPECT_EQ(s.mechanism, MechanismKind::kGaussian);
    ggg_total += s.count_per_iteration;
  }
  for (const ReleaseSpec& s : llg.releases) {
    if (s.mechanism == MechanismKind::kLaplace) llg_laplace += s.count_per_iteration;
  }
  EXPECT_EQ(ggg_total, 2 * 3 + 1);  // pi once, mu_k and Sigma_k K times each.
  EXPECT_EQ(llg_laplace, 3 + 1);    // pi and the K means by Laplace.
  EXPECT_FALSE(ScenarioPattern("GLG", 3).ok());
  EXPECT_FALSE(ScenarioPattern("GGG", 0).ok());
}

TEST(CalibrationTest, ReaccountsToAtMostTheTargetAndWithinOnePercent) {
  for (const char* scenario : {"GGG", "LLG"}) {
    for (AccountantKind kind : AllAccountants()) {
      for (double eps : {0.1, 1.0, 4.0}) {
        for (int j : {1, 10}) {
          const ReleasePattern pattern = ScenarioPattern(scenario, 3).value();
          const CalibrationResult r = MustCalibrate(Options(eps, 1e-4, j, pattern, kind));
          // An independent re-account of the returned ledger.
          const double again = ComputeEpsilon(r.ledger, 1e-4, kind).value();
          EXPECT_EQ(again, r.epsilon);
          EXPECT_LE(r.epsilon, eps) << scenario << " " << AccountantName(kind);
          EXPECT_GE(r.epsilon, 0.99 * eps) << scenario << " " << AccountantName(kind);
          EXPECT_EQ(r.delta, 1e-4);
          EXPECT_EQ(r.ledger.size(), static_cast<std::size_t>(j * 7));
        }
      }
    }
  }
}

TEST(CalibrationTest, ReturnedBudgetIsNearlyTheLargestAdmissible) {
  const ReleasePattern pattern = GggPattern(3).value();
  for (AccountantKind kind : AllAccountants()) {
    CalibrationOptions o = Options(1.0, 1e-5, 10, pattern, kind);
    const CalibrationResult r = MustCalibrate(o);
    // A budget 1% larger must exceed the target.
    const std::vector<double> z =
        PatternNoiseMultipliers(pattern, r.per_release_epsilon * 1.01, o.per_release_delta)
            .value();
    const PrivacyLedger larger = PatternLedger(pattern, 10, z).value();
    EXPECT_GT(ComputeEpsilon(larger, 1e-5, kind).value(), 1.0) << AccountantName(kind);
  }
}

TEST(CalibrationTest, NoiseMultipliersFollowTheParkParametrisation) {
  const ReleasePattern llg = LlgPattern(2).value();
  CalibrationOptions o = Options(1.0, 1e-5, 5, llg, AccountantKind::kZcdp);
  o.per_release_delta = 1e-8;
  const CalibrationResult r = MustCalibrate(o);
  const double eps_i = r.per_release_epsilon;
  const double gaussian = std::sqrt(2.0 * std::log(1.25 / 1e-8)) / eps_i;  // Dwork-Roth 3.22.
  ASSERT_EQ(r.noise_multipliers.size(), 3u);
  EXPECT_NEAR(r.noise_multipliers[0], 1.0 / eps_i, 1e-12 / eps_i);  // Laplace weights.
  EXPECT_NEAR(r.noise_multipliers[1], 1.0 / eps_i, 1e-12 / eps_i);  // Laplace means.
  EXPECT_GE(r.noise_multipliers[2], gaussian);  // Gaussian covariances, rounded up.
  EXPECT_LE(r.noise_multipliers[2], gaussian * (1 + 1e-9));
  // zCDP of this pattern by hand: (K+1) eps_i^2/2 + K/(2 z^2) per iteration.
  const double rho = 5 * (3 * eps_i * eps_i / 2 + 2 / (2 * gaussian * gaussian));
  const double eps = rho + 2 * std::sqrt(rho * std::log(1e5));
  const double z = r.noise_multipliers[2];
  const double rho_exact = 5 * (3 * eps_i * eps_i / 2 + 2 / (2 * z * z));
  EXPECT_NEAR(r.epsilon, rho_exact + 2 * std::sqrt(rho_exact * std::log(1e5)), 1e-9);
  EXPECT_NEAR(eps, r.epsilon, 1e-6);
}

TEST(CalibrationTest, CustomPatternWeightsScaleTheNoise) {
  ReleasePattern custom{"custom", {{MechanismKind::kGaussian, 1, 1.0, "a"},
                                   {MechanismKind::kGaussian, 2, 3.0, "b"}}};
  const CalibrationResult r = MustCalibrate(Options(1.0, 1e-6, 4, custom, AccountantKind::kRdp));
  EXPECT_NEAR(r.noise_multipliers[1] / r.noise_multipliers[0], 3.0, 1e-12);
  EXPECT_EQ(r.ledger.size(), 12u);
}

// A budget schedule (CalibrationOptions::iteration_weights): iteration j's
// multipliers are the unit iteration's over sqrt(w_j). Under zCDP and RDP a
// Gaussian release's cost is additive in 1 / z^2, so weights that sum to J
// cost what J equal iterations cost: the unit multiplier, the start's
// multipliers and the certified epsilon are those of the equal schedule (to
// the bisection's tolerance).
TEST(CalibrationTest, AScheduleScalesEachIterationAndKeepsTheTotal) {
  const ReleasePattern joint{"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
  const ReleasePattern start{"start", {{MechanismKind::kGaussian, 1, 2.0, "coarse"},
                                       {MechanismKind::kGaussian, 1, 1.0, "fine"}}};
  for (AccountantKind kind : {AccountantKind::kZcdp, AccountantKind::kRdp}) {
    SCOPED_TRACE(AccountantName(kind));
    CalibrationOptions equal = Options(1.0, 1e-5, 3, joint, kind);
    equal.start = start;
    equal.start_share = 0.2;
    CalibrationOptions scheduled = equal;
    scheduled.iteration_weights = {0.25, 0.75, 2.0};
    const CalibrationResult a = MustCalibrate(equal);
    const CalibrationResult b = MustCalibrate(scheduled);
    EXPECT_EQ(b.iteration_weights, scheduled.iteration_weights);
    EXPECT_NEAR(b.noise_multipliers[0] / a.noise_multipliers[0], 1.0, 1e-3);
    EXPECT_NEAR(b.start_noise_multipliers[0] / a.start_noise_multipliers[0], 1.0, 1e-3);
    EXPECT_NEAR(b.epsilon, a.epsilon, 1e-3);
    EXPECT_LE(b.epsilon, 1.0);
    // The ledger: the start's two releases, then iteration j at z / sqrt(w_j).
    ASSERT_EQ(b.ledger.size(), 5u);
    const double z = b.noise_multipliers[0];
    const double w[3] = {0.25, 0.75, 2.0};
    for (int j = 0; j < 3; ++j) {
      const Release& r = b.ledger.releases()[static_cast<size_t>(2 + j)];
      EXPECT_EQ(r.label, "iteration " + std::to_string(j + 1) + " / joint statistics");
      EXPECT_NEAR(r.NoiseMultiplier(), z / std::sqrt(w[j]), 1e-12 * z);
    }
  }
}

// The start's share with a schedule whose weights do NOT sum to J (the GMM
// rule's always do, so a rule that used J instead of the weights' total
// would pass every other test): the start's zCDP cost is `share` of the
// whole ledger's, for every accountant, and the certified epsilon is the
// ledger's own and within the target. A schedule is a split, so a non-
// uniform one also re-accounts within the target for the accountants that
// compose per-release epsilons (linear, advanced, kov).
TEST(CalibrationTest, TheStartKeepsItsShareUnderAScheduleOfAnyTotal) {
  const ReleasePattern joint{"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
  const ReleasePattern start{"start", {{MechanismKind::kGaussian, 1, 2.0, "coarse"},
                                       {MechanismKind::kGaussian, 1, 1.0, "fine"}}};
  for (const std::vector<double>& w :
       std::vector<std::vector<double>>{{0.5, 0.25, 0.25, 0.5}, {0.25, 3.0, 2.0, 4.0}}) {
    for (AccountantKind kind : AllAccountants()) {
      if (kind == AccountantKind::kMoments) continue;  // Cannot reach small epsilon.
      SCOPED_TRACE(std::string(AccountantName(kind)) + " total " +
                   std::to_string(w[0] + w[1] + w[2] + w[3]));
      CalibrationOptions o = Options(0.5, 1e-5, 4, joint, kind);
      o.start = start;
      o.start_share = 0.2;
      o.iteration_weights = w;
      const CalibrationResult r = MustCalibrate(o);
      ASSERT_EQ(r.ledger.size(), 6u);
      double rho_start = 0.0, rho_iterations = 0.0;
      for (const Release& rel : r.ledger.releases()) {
        const double rho = 1.0 / (2.0 * rel.NoiseMultiplier() * rel.NoiseMultiplier());
        (rel.label.rfind("start / ", 0) == 0 ? rho_start : rho_iterations) += rho;
      }
      EXPECT_NEAR(rho_start / (rho_start + rho_iterations), 0.2, 1e-9);
      // Iteration j at the unit multiplier over sqrt(w_j).
      const double z = r.noise_multipliers[0];
      for (int j = 0; j < 4; ++j) {
        EXPECT_NEAR(r.ledger.releases()[static_cast<size_t>(2 + j)].NoiseMultiplier(),
                    z / std::sqrt(w[static_cast<size_t>(j)]), 1e-12 * z);
      }
      EXPECT_EQ(ComputeEpsilon(r.ledger, 1e-5, kind).value(), r.epsilon);
      EXPECT_LE(r.epsilon, 0.5);
      EXPECT_GE(r.epsilon, 0.99 * 0.5);
    }
  }
}

TEST(CalibrationTest, ABadScheduleIsRefused) {
  const ReleasePattern joint{"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
  for (const std::vector<double>& bad : std::vector<std::vector<double>>{
           {1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, {1.0, 0.0, 2.0}, {1.0, -1.0, 3.0}, {1.0, kNan, 1.0},
           {1.0, kInf, 1.0}}) {
    CalibrationOptions o = Options(1.0, 1e-5, 3, joint, AccountantKind::kRdp);
    o.iteration_weights = bad;
    EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(PatternLedger(joint, 3, {1.0}, bad).ok());
  }
}

TEST(CalibrationTest, MoreBudgetOrFewerIterationsMeanLessNoise) {
  const ReleasePattern pattern = GggPattern(3).value();
  double previous = kInf;
  for (double eps : {0.1, 0.5, 1.0, 2.0, 4.0}) {
    const double z = MustCalibrate(Options(eps, 1e-4, 10, pattern, AccountantKind::kRdp))
                         .noise_multipliers[0];
    EXPECT_LT(z, previous);
    previous = z;
  }
  previous = 0.0;
  for (int j : {1, 5, 20, 100}) {
    const double z = MustCalibrate(Options(1.0, 1e-4, j, pattern, AccountantKind::kRdp))
                         .noise_multipliers[0];
    EXPECT_GT(z, previous);
    previous = z;
  }
}

// park2017 Fig. 3 implies, for K = 3, J = 10, delta = 1e-4, GGG: the moments
// accountant and zCDP allow a per-iteration budget well above advanced
// composition's, which is well above linear composition's. "Well above" is
// taken as a factor of at least 1.3 here.
TEST(CalibrationTest, Park2017OrderingOfCompositionMethods) {
  const ReleasePattern pattern = GggPattern(3).value();
  for (double eps : {0.1, 0.5, 1.0, 2.0, 4.0}) {
    std::map<AccountantKind, double> budget;
    for (AccountantKind kind : AllAccountants()) {
      budget[kind] = MustCalibrate(Options(eps, 1e-4, 10, pattern, kind)).per_release_epsilon;
    }
    const double kWellAbove = 1.3;
    EXPECT_GT(budget[AccountantKind::kMoments], kWellAbove * budget[AccountantKind::kAdvanced]);
    EXPECT_GT(budget[AccountantKind::kZcdp], kWellAbove * budget[AccountantKind::kAdvanced]);
    EXPECT_GT(budget[AccountantKind::kAdvanced], kWellAbove * budget[AccountantKind::kLinear]);
    // And the tight accountants are never worse than the papers' ones.
    EXPECT_GE(budget[AccountantKind::kRdp], budget[AccountantKind::kMoments]);
    EXPECT_GE(budget[AccountantKind::kZcdpTight], budget[AccountantKind::kZcdp]);
    EXPECT_GE(budget[AccountantKind::kKov], budget[AccountantKind::kAdvanced]);
  }
}

TEST(CalibrationTest, ValidateNamesTheBadField) {
  const ReleasePattern pattern = GggPattern(2).value();
  CalibrationOptions o = Options(1.0, 1e-5, 10, pattern, AccountantKind::kRdp);
  EXPECT_TRUE(o.Validate().ok());
  CalibrationOptions no_defaults;  // Epsilon, delta and J have no defaults.
  no_defaults.pattern = pattern;
  EXPECT_EQ(no_defaults.Validate().code(), StatusCode::kInvalidArgument);
  auto expect_bad = [&](CalibrationOptions bad, const char* word) {
    const Status s = bad.Validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(word), std::string::npos) << s.message();
    EXPECT_FALSE(Calibrate(bad).ok());
  };
  for (double bad : {0.0, -1.0, kInf, kNan}) {
    CalibrationOptions b = o;
    b.epsilon = bad;
    expect_bad(b, "epsilon");
  }
  for (double bad : {0.0, 1.0, kNan}) {
    CalibrationOptions b = o;
    b.delta = bad;
    expect_bad(b, "delta");
  }
  CalibrationOptions b = o;
  b.iterations = 0;
  expect_bad(b, "iterations");
  b = o;
  b.pattern.releases.clear();
  expect_bad(b, "empty");
  b = o;
  b.pattern.releases[0].noise_weight = 0.0;
  expect_bad(b, "weight");
  b = o;
  b.per_release_delta = 1.0;
  expect_bad(b, "per-release delta");
}

}  // namespace
}  // namespace dpem
