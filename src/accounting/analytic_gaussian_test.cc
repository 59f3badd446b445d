// Tests of the exact Gaussian privacy profile (Balle and Wang 2018, Thm. 8).
//
// Independent references used here, none of which calls dpem's code:
//  - HockeyStickByQuadrature: the definition of the privacy profile,
//      delta(eps) = integral of max(0, p(x) - e^eps q(x)) dx,
//    with p = N(0, z^2), q = N(1, z^2), integrated numerically in long double
//    by boost::math's exp_sinh quadrature;
//  - ClosedFormDelta: Thm. 8 evaluated in 80-bit long double with erfc
//    (exponent range to 1e-4951, so no overflow of e^eps for eps < 11000).
#include "dpem/accounting/analytic_gaussian.h"

#include <gtest/gtest.h>

#include <boost/math/quadrature/exp_sinh.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace dpem {
namespace {

using LongDouble = long double;

struct Integral {
  LongDouble value;
  LongDouble error;  // Quadrature's own error estimate.
};

// The hockey-stick divergence of N(0, z^2) from N(1, z^2) at e^eps.
// log p(x) - log q(x) = (1 - 2x) / (2 z^2), which exceeds eps exactly when
// x < x0 = 1/2 - eps z^2; there the integrand is
//   p(x) - e^eps q(x) = p(x) (1 - exp(eps - (1 - 2x)/(2 z^2))) >= 0,
// written with expm1 so that it is accurate where it is small, and it is 0
// beyond x0. Substituting x = x0 - t gives an integral over t in [0, inf),
// which exp_sinh handles whatever the decay scale.
Integral HockeyStickByQuadrature(double z, double eps) {
  const LongDouble zz = z, e = eps;
  const LongDouble x0 = 0.5L - e * zz * zz;
  const LongDouble norm = 1.0L / (zz * std::sqrt(2.0L * std::numbers::pi_v<LongDouble>));
  const auto integrand = [&](LongDouble t) {
    const LongDouble x = x0 - t;
    const LongDouble p = norm * std::exp(-x * x / (2.0L * zz * zz));
    return -p * std::expm1(e - (1.0L - 2.0L * x) / (2.0L * zz * zz));
  };
  boost::math::quadrature::exp_sinh<LongDouble> integrator;
  LongDouble error = 0.0L, l1 = 0.0L;
  const LongDouble value = integrator.integrate(
      integrand, 0.0L, std::numeric_limits<LongDouble>::infinity(), 1e-17L, &error, &l1);
  return {value, error};
}

// Balle-Wang Thm. 8 in long double: Phi(A) - e^eps Phi(B).
LongDouble ClosedFormDelta(double z, double eps) {
  const auto phi = [](LongDouble x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); };
  const LongDouble zz = z, e = eps;
  return phi(0.5L / zz - e * zz) - std::exp(e) * phi(-0.5L / zz - e * zz);
}

double Delta(double z, double eps) {
  auto delta = GaussianDeltaForEpsilon(z, eps);
  EXPECT_TRUE(delta.ok()) << delta.status().ToString();
  return delta.ok() ? *delta : std::nan("");
}

const std::vector<double> kGridZ = {0.3, 0.7, 1.0, 2.0, 5.0, 20.0};
const std::vector<double> kGridEps = {0.0, 0.1, 0.5, 1.0, 3.0, 8.0};

TEST(GaussianDeltaForEpsilonTest, UpperBoundsAndMatchesHockeyStickIntegral) {
  for (double z : kGridZ) {
    for (double eps : kGridEps) {
      const Integral exact = HockeyStickByQuadrature(z, eps);
      const double reported = Delta(z, eps);
      SCOPED_TRACE(testing::Message() << "z=" << z << " eps=" << eps
                                      << " integral=" << static_cast<double>(exact.value));
      // Soundness, up to the quadrature's own error estimate (~1e-18 relative).
      EXPECT_GE(static_cast<LongDouble>(reported), exact.value - exact.error);
      const LongDouble gap = static_cast<LongDouble>(reported) - exact.value;
      EXPECT_TRUE(gap <= 1e-6L * exact.value || gap <= 1e-14L) << "gap=" << gap;
    }
  }
}

TEST(GaussianDeltaForEpsilonTest, SmallValuesKeepRelativeAccuracy) {
  // Where delta is tiny but representable (down to ~1e-57 in the grid), the
  // answer must not be swamped by the absolute rounding allowances.
  for (auto [z, eps] : {std::pair{2.0, 8.0}, {5.0, 3.0}, {1.0, 8.0}, {20.0, 1.0}}) {
    const Integral exact = HockeyStickByQuadrature(z, eps);
    ASSERT_GT(exact.value, 1e-300L);
    const double reported = Delta(z, eps);
    EXPECT_GE(static_cast<LongDouble>(reported), exact.value - exact.error);
    EXPECT_LE(static_cast<LongDouble>(reported), exact.value * (1.0L + 1e-6L))
        << "z=" << z << " eps=" << eps;
  }
}

TEST(GaussianDeltaForEpsilonTest, DecreasingInEpsilonAndInNoise) {
  for (double z : {0.1, 0.3, 1.0, 3.0, 10.0}) {
    double previous = Delta(z, 0.0);
    for (double eps = 0.25; eps <= 12.0; eps += 0.25) {
      const double current = Delta(z, eps);
      EXPECT_LE(current, previous) << "z=" << z << " eps=" << eps;
      if (current > 1e-250 && previous < 1.0 - 1e-9) EXPECT_LT(current, previous);
      previous = current;
    }
  }
  for (double eps : {0.0, 0.1, 1.0, 5.0}) {
    double previous = Delta(0.05, eps);
    for (double z = 0.05 * 1.25; z <= 200.0; z *= 1.25) {
      const double current = Delta(z, eps);
      EXPECT_LE(current, previous) << "z=" << z << " eps=" << eps;
      if (current > 1e-250 && previous < 1.0 - 1e-9) EXPECT_LT(current, previous);
      previous = current;
    }
  }
}

TEST(GaussianEpsilonForDeltaTest, RoundTripIsTightAndSound) {
  for (double z : {0.5, 1.0, 2.0, 5.0}) {
    for (double delta : {1e-2, 1e-5, 1e-10}) {
      auto eps = GaussianEpsilonForDelta(z, delta);
      ASSERT_TRUE(eps.ok()) << eps.status().ToString();
      SCOPED_TRACE(testing::Message() << "z=" << z << " delta=" << delta << " eps=" << *eps);
      EXPECT_GT(*eps, 0.0);
      EXPECT_LE(Delta(z, *eps), delta);
      EXPECT_LE(ClosedFormDelta(z, *eps), static_cast<LongDouble>(delta));
      // Tight: 1e-6 relative less epsilon no longer suffices.
      EXPECT_GT(ClosedFormDelta(z, *eps * (1.0 - 1e-6)), static_cast<LongDouble>(delta));
    }
  }
}

TEST(GaussianEpsilonForDeltaTest, ZeroWhenDeltaAtZeroAlreadyMeetsTarget) {
  // delta(0) = Phi(1/(2z)) - Phi(-1/(2z)) = erf(1/(2 sqrt(2) z)).
  const double z = 10.0;
  const double delta_at_zero = std::erf(1.0 / (2.0 * std::sqrt(2.0) * z));
  auto eps = GaussianEpsilonForDelta(z, delta_at_zero * 1.01);
  ASSERT_TRUE(eps.ok());
  EXPECT_EQ(*eps, 0.0);
  auto positive = GaussianEpsilonForDelta(z, delta_at_zero * 0.99);
  ASSERT_TRUE(positive.ok());
  EXPECT_GT(*positive, 0.0);
}

TEST(GaussianEpsilonForDeltaTest, DecreasingInNoiseAndDelta) {
  for (double delta : {1e-3, 1e-6, 1e-12}) {
    double previous = std::numeric_limits<double>::infinity();
    for (double z = 0.2; z <= 100.0; z *= 1.5) {
      auto eps = GaussianEpsilonForDelta(z, delta);
      ASSERT_TRUE(eps.ok());
      EXPECT_LT(*eps, previous) << "z=" << z << " delta=" << delta;
      previous = *eps;
    }
  }
  for (double z : {0.5, 2.0, 10.0}) {
    double previous = std::numeric_limits<double>::infinity();
    for (double delta = 1e-15; delta < 0.05; delta *= 10.0) {
      auto eps = GaussianEpsilonForDelta(z, delta);
      ASSERT_TRUE(eps.ok());
      EXPECT_LT(*eps, previous) << "z=" << z << " delta=" << delta;
      previous = *eps;
    }
  }
}

TEST(CalibrateAnalyticGaussianTest, RoundTripIsTightAndSound) {
  for (double eps : {0.05, 0.1, 1.0, 5.0, 20.0}) {
    for (double delta : {1e-3, 1e-6, 1e-10}) {
      auto z = CalibrateAnalyticGaussian(eps, delta);
      ASSERT_TRUE(z.ok()) << z.status().ToString();
      SCOPED_TRACE(testing::Message() << "eps=" << eps << " delta=" << delta << " z=" << *z);
      EXPECT_LE(Delta(*z, eps), delta);
      EXPECT_LE(ClosedFormDelta(*z, eps), static_cast<LongDouble>(delta));
      // z* within 1e-6 relative of the exact threshold (and a fortiori 1e-4).
      EXPECT_GT(ClosedFormDelta(*z * (1.0 - 1e-6), eps), static_cast<LongDouble>(delta));
      EXPECT_GT(Delta(*z * (1.0 - 1e-4), eps), delta);
    }
  }
}

TEST(CalibrateAnalyticGaussianTest, AnalyticBeatsClassicWhereClassicIsValid) {
  // Dwork-Roth Thm. 3.22 is a valid (if loose) calibration for eps < 1, so the
  // exact threshold must lie strictly below it.
  for (double eps : {0.01, 0.1, 0.5, 0.9}) {
    for (double delta : {1e-3, 1e-5, 1e-9}) {
      auto classic = ClassicGaussianNoiseMultiplier(eps, delta);
      auto analytic = CalibrateAnalyticGaussian(eps, delta);
      ASSERT_TRUE(classic.ok() && analytic.ok());
      EXPECT_LT(*analytic, *classic) << "eps=" << eps << " delta=" << delta;
      // And the classic noise level really is (eps, delta)-DP.
      EXPECT_LE(ClosedFormDelta(*classic, eps), static_cast<LongDouble>(delta));
    }
  }
}

TEST(ClassicGaussianNoiseMultiplierTest, MatchesFormulaRoundedUp) {
  // sqrt(2 ln(1.25 / 1e-5)) / 0.5, with ln(125000) = 11.736069016284437.
  auto z = ClassicGaussianNoiseMultiplier(0.5, 1e-5);
  ASSERT_TRUE(z.ok());
  const double formula = std::sqrt(2.0 * 11.736069016284437) / 0.5;
  EXPECT_GE(*z, formula);
  EXPECT_NEAR(*z, formula, 1e-10 * formula);
}

TEST(AnalyticGaussianTest, ExtremeInputsStayFiniteAndInRange) {
  for (double z : {1e-3, 1e4}) {
    for (double eps : {0.0, 1.0, 500.0}) {
      const double delta = Delta(z, eps);
      EXPECT_TRUE(std::isfinite(delta)) << "z=" << z << " eps=" << eps;
      EXPECT_GE(delta, 0.0);
      EXPECT_LE(delta, 1.0);
    }
    auto eps = GaussianEpsilonForDelta(z, 1e-300);
    ASSERT_TRUE(eps.ok()) << eps.status().ToString();
    EXPECT_TRUE(std::isfinite(*eps));
    EXPECT_LE(Delta(z, *eps), 1e-300);
  }
  // z = 1e-3: delta(500) = 1 - e^500 Phi(-500.5) = 1 to double precision.
  EXPECT_EQ(Delta(1e-3, 500.0), 1.0);
  // z = 1e4, eps = 500: Phi(A) with A ~ -5e6 is far below DBL_MIN.
  EXPECT_LT(Delta(1e4, 500.0), 1e-300);
  for (double eps : {1e-3, 500.0}) {
    auto z = CalibrateAnalyticGaussian(eps, 1e-300);
    ASSERT_TRUE(z.ok()) << z.status().ToString();
    EXPECT_TRUE(std::isfinite(*z) && *z > 0.0);
    EXPECT_LE(Delta(*z, eps), 1e-300);
  }
}

TEST(AnalyticGaussianTest, RejectsInvalidInputs) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const auto invalid = [](const StatusOr<double>& r) {
    return !r.ok() && r.status().code() == StatusCode::kInvalidArgument;
  };
  for (double z : {0.0, -1.0, nan, inf}) {
    EXPECT_TRUE(invalid(GaussianDeltaForEpsilon(z, 1.0))) << z;
    EXPECT_TRUE(invalid(GaussianEpsilonForDelta(z, 1e-5))) << z;
  }
  for (double eps : {-1.0, nan, inf}) {
    EXPECT_TRUE(invalid(GaussianDeltaForEpsilon(1.0, eps))) << eps;
    EXPECT_TRUE(invalid(CalibrateAnalyticGaussian(eps, 1e-5))) << eps;
    EXPECT_TRUE(invalid(ClassicGaussianNoiseMultiplier(eps, 1e-5))) << eps;
  }
  EXPECT_TRUE(invalid(CalibrateAnalyticGaussian(0.0, 1e-5)));
  EXPECT_TRUE(invalid(ClassicGaussianNoiseMultiplier(0.0, 1e-5)));
  for (double delta : {0.0, 1.0, -0.1, 1.5, nan}) {
    EXPECT_TRUE(invalid(GaussianEpsilonForDelta(1.0, delta))) << delta;
    EXPECT_TRUE(invalid(CalibrateAnalyticGaussian(1.0, delta))) << delta;
    EXPECT_TRUE(invalid(ClassicGaussianNoiseMultiplier(1.0, delta))) << delta;
  }
  auto named = GaussianDeltaForEpsilon(-1.0, 1.0);
  EXPECT_NE(named.status().message().find("noise_multiplier"), std::string::npos);
}

}  // namespace
}  // namespace dpem
