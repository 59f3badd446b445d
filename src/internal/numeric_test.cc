// Tests of the shared numeric helpers. Expected values come from closed forms
// (pi, 2, log 2) or from long-double reference evaluations, never from the
// functions under test.
#include "internal/numeric.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <numbers>
#include <vector>

namespace dpem::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Reference log Phi(x) in 80-bit long double (exponent range to ~1e-4951, so
// no underflow for x >= -140), independent of the double implementation.
double ReferenceLogNormalCdf(double x) {
  const long double p = 0.5L * std::erfc(-static_cast<long double>(x) /
                                         std::sqrt(2.0L));
  return static_cast<double>(std::log(p));
}

TEST(BisectThresholdTest, BracketsStepThresholdWithinTolerance) {
  const double pi = std::numbers::pi;
  const auto at_least_pi = [pi](double x) { return x >= pi; };
  for (double tolerance : {1e-3, 1e-8, 1e-12}) {
    auto bracket = BisectThreshold(at_least_pi, 0.0, 100.0, tolerance);
    ASSERT_TRUE(bracket.ok());
    EXPECT_LT(bracket->lo, pi);
    EXPECT_GE(bracket->hi, pi);
    EXPECT_LE(bracket->hi - bracket->lo, tolerance * bracket->hi);
  }
}

TEST(BisectThresholdTest, GeometricPhaseAcrossOrdersOfMagnitude) {
  const auto above = [](double x) { return x >= 3e-7; };
  auto bracket = BisectThreshold(above, 1e-12, 1e6, 1e-10);
  ASSERT_TRUE(bracket.ok());
  EXPECT_LT(bracket->lo, 3e-7);
  EXPECT_GE(bracket->hi, 3e-7);
  EXPECT_LE(bracket->hi - bracket->lo, 1e-10 * bracket->hi);
}

TEST(BisectThresholdTest, AbsoluteToleranceNearZero) {
  const auto positive = [](double x) { return x > 0.0; };
  auto bracket = BisectThreshold(positive, -1.0, 1.0, 0.0, 1e-6);
  ASSERT_TRUE(bracket.ok());
  EXPECT_LE(bracket->lo, 0.0);
  EXPECT_GT(bracket->hi, 0.0);
  EXPECT_LE(bracket->hi - bracket->lo, 1e-6);
}

TEST(BisectThresholdTest, RejectsBadBrackets) {
  const auto at_least_one = [](double x) { return x >= 1.0; };
  EXPECT_FALSE(BisectThreshold(at_least_one, 2.0, 3.0, 1e-6).ok());  // lo true.
  EXPECT_FALSE(BisectThreshold(at_least_one, -3.0, 0.0, 1e-6).ok());  // hi false.
  EXPECT_FALSE(BisectThreshold(at_least_one, 2.0, 0.0, 1e-6).ok());  // lo > hi.
  EXPECT_FALSE(BisectThreshold(at_least_one, 0.5, 0.5, 1e-6).ok());  // Empty.
}

TEST(ExpandUntilTest, FindsFirstGeometricPointSatisfying) {
  const auto big = [](double x) { return x >= 1000.0; };
  auto hi = ExpandUntil(big, 1.0);
  ASSERT_TRUE(hi.ok());
  EXPECT_EQ(*hi, 1024.0);  // 2^10 is the first power of two >= 1000.
  auto tenfold = ExpandUntil(big, 3.0, 10.0);
  ASSERT_TRUE(tenfold.ok());
  EXPECT_EQ(*tenfold, 3000.0);
  auto immediate = ExpandUntil(big, 5000.0);
  ASSERT_TRUE(immediate.ok());
  EXPECT_EQ(*immediate, 5000.0);
}

TEST(ExpandUntilTest, FailsWhenNeverTrueOrBadArguments) {
  const auto never = [](double) { return false; };
  auto result = ExpandUntil(never, 1.0, 2.0, 10);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kOutOfRange);
  const auto always = [](double) { return true; };
  EXPECT_FALSE(ExpandUntil(always, 0.0).ok());
  EXPECT_FALSE(ExpandUntil(always, -1.0).ok());
  EXPECT_FALSE(ExpandUntil(always, 1.0, 1.0).ok());
}

TEST(GoldenSectionMinimiseTest, FindsMinimumOfParabola) {
  const auto parabola = [](double x) { return (x - 2.0) * (x - 2.0); };
  const double x = GoldenSectionMinimise(parabola, -10.0, 10.0);
  // (x - 2)^2 is flat to rounding within ~1e-8 of 2, so ask for 1e-7.
  EXPECT_NEAR(x, 2.0, 1e-7);
  const double edge = GoldenSectionMinimise(parabola, 3.0, 5.0);
  EXPECT_NEAR(edge, 3.0, 1e-7);  // Monotone on [3, 5]: the left end.
}

TEST(RoundUpConservativelyTest, StrictlyIncreasesPositiveFinite) {
  for (double x : {DBL_MIN, 1e-300, 1e-12, 0.5, 1.0, 3.0, 1e10, 1e300, DBL_MAX / 2}) {
    const double up = RoundUpConservatively(x);
    EXPECT_GT(up, x) << x;
    EXPECT_GE(up, x * (1.0 + 0.99 * kConservativeRelativeMargin)) << x;
    EXPECT_LE(up, x * (1.0 + 2 * kConservativeRelativeMargin)) << x;
  }
  EXPECT_GT(RoundUpConservatively(0.0), 0.0);
  EXPECT_EQ(RoundUpConservatively(kInf), kInf);
  EXPECT_TRUE(std::isnan(RoundUpConservatively(std::nan(""))));
}

TEST(LogAddExpTest, MatchesNaiveOnSafeValues) {
  for (double a : {-20.0, -1.0, 0.0, 0.3, 5.0, 30.0}) {
    for (double b : {-25.0, -0.5, 0.0, 2.0, 29.0}) {
      const double naive = std::log(std::exp(a) + std::exp(b));
      EXPECT_NEAR(LogAddExp(a, b), naive, 1e-14 * std::max(1.0, std::fabs(naive)));
    }
  }
}

TEST(LogAddExpTest, NoOverflowAndInfinities) {
  EXPECT_NEAR(LogAddExp(1000.0, 1000.0), 1000.0 + std::numbers::ln2, 1e-12);
  EXPECT_DOUBLE_EQ(LogAddExp(1000.0, 0.0), 1000.0);
  EXPECT_NEAR(LogAddExp(-1000.0, -1000.0), -1000.0 + std::numbers::ln2, 1e-12);
  EXPECT_EQ(LogAddExp(-kInf, 3.0), 3.0);
  EXPECT_EQ(LogAddExp(3.0, -kInf), 3.0);
  EXPECT_EQ(LogAddExp(-kInf, -kInf), -kInf);
}

TEST(NormalCdfTest, KnownValues) {
  EXPECT_DOUBLE_EQ(NormalCdf(0.0), 0.5);
  // Phi(1.959963984540054) = 0.975, the textbook two-sided 95% quantile.
  EXPECT_NEAR(NormalCdf(1.959963984540054), 0.975, 1e-15);
  EXPECT_NEAR(NormalCdf(-1.959963984540054), 0.025, 1e-16);
}

TEST(LogNormalCdfTest, MatchesLongDoubleReference) {
  const std::vector<double> xs = {8.0,   3.0,    1.0,    0.0,   -0.5, -1.0,
                                  -5.0,  -10.0,  -20.0,  -29.9, -30.0, -30.1,
                                  -35.0, -37.5,  -38.5,  -40.0, -60.0, -100.0,
                                  -139.0};
  for (double x : xs) {
    const double expected = ReferenceLogNormalCdf(x);
    EXPECT_NEAR(LogNormalCdf(x), expected, 1e-14 * std::max(1.0, std::fabs(expected)))
        << "x = " << x;
  }
}

TEST(LogNormalCdfTest, AccurateFarUpperTail) {
  // log Phi(x) = log(1 - Phi(-x)) ~= -Phi(-x) for large x; Phi(-10) ~ 7.6e-24.
  const double expected = -0.5L * std::erfc(10.0L / std::sqrt(2.0L));
  EXPECT_NEAR(LogNormalCdf(10.0), expected, 1e-12 * std::fabs(expected));
  EXPECT_LT(LogNormalCdf(10.0), 0.0);
}

TEST(LogNormalCdfTest, ContinuousAcrossSeriesSwitchAndMonotone) {
  const double below = std::nextafter(kLogNormalCdfSeriesBelow, -kInf);
  const double at = LogNormalCdf(kLogNormalCdfSeriesBelow);
  // The slope there is about 30, so one ulp of x moves log Phi by ~1e-13.
  EXPECT_NEAR(LogNormalCdf(below), at, 1e-12 * std::fabs(at));
  double previous = -kInf;
  for (double x = -1e4; x <= 10.0; x += (x < -100.0 ? 50.0 : 0.25)) {
    const double value = LogNormalCdf(x);
    ASSERT_TRUE(std::isfinite(value)) << x;
    EXPECT_GE(value, previous) << x;
    previous = value;
  }
  EXPECT_EQ(LogNormalCdf(-kInf), -kInf);
  EXPECT_EQ(LogNormalCdf(kInf), 0.0);
  EXPECT_TRUE(std::isnan(LogNormalCdf(std::nan(""))));
}

TEST(LogNormalCdfTest, LeadingAsymptoticsDeepInTheTail) {
  // log Phi(x) = -x^2/2 - log(-x) - log(2pi)/2 + log(1 - 1/x^2 + 3/x^4 - ...)
  // (Mills ratio). At x = -1000 the correction is about -1e-6, well above the
  // double resolution (~1e-10) of the -5e5 leading part.
  const double x = -1000.0;
  const double leading = -0.5 * x * x - std::log(-x) - 0.5 * std::log(2 * std::numbers::pi);
  const double correction = std::log1p(-1.0 / (x * x) + 3.0 / (x * x * x * x));
  EXPECT_NEAR(LogNormalCdf(x), leading + correction, 2e-9);
  EXPECT_LT(LogNormalCdf(x), leading - 0.5e-6);
}

}  // namespace
}  // namespace dpem::internal
