// Tests of the robust mean estimator (wang-dp-gradient-em Sec. 4.2, App. D):
// the closed form against independent numerical integration (Boost.Math
// Gauss-Kronrod and Boost's normal CDF), the sensitivity bound by brute force,
// and the parameter formulas written out again.
#include "dpem/mechanisms/robust_mean.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/analytic_gaussian.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// E phi(a + b Z) by quadrature: the polynomial middle piece with adaptive
// Gauss-Kronrod in z, the two flat tails from Boost's normal CDF.
double ReferenceExpectation(double a, double b) {
  const double r2 = std::sqrt(2.0);
  const double z_lo = (-r2 - a) / b;
  const double z_hi = (r2 - a) / b;
  const boost::math::normal_distribution<double> normal(0.0, 1.0);
  const double c = 2.0 * r2 / 3.0;
  const double tails = c * boost::math::cdf(boost::math::complement(normal, z_hi)) -
                       c * boost::math::cdf(normal, z_lo);
  auto f = [&](double z) {
    const double u = a + b * z;
    return (u - u * u * u / 6.0) * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  };
  // Integrate only where the Gaussian has mass (beyond 40 sd it is < 1e-340).
  const double lo = std::max(z_lo, -40.0);
  const double hi = std::min(z_hi, 40.0);
  double middle = 0.0;
  if (lo < hi) {
    middle = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(f, lo, hi, 15, 1e-15);
  }
  return tails + middle;
}

TEST(CatoniGiuliniPhiTest, PiecesAndBound) {
  EXPECT_DOUBLE_EQ(CatoniGiuliniPhi(0.0), 0.0);
  EXPECT_DOUBLE_EQ(CatoniGiuliniPhi(1.0), 1.0 - 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(CatoniGiuliniPhi(-1.0), -(1.0 - 1.0 / 6.0));
  EXPECT_DOUBLE_EQ(CatoniGiuliniPhi(10.0), 2.0 * std::sqrt(2.0) / 3.0);
  EXPECT_DOUBLE_EQ(CatoniGiuliniPhi(-10.0), -2.0 * std::sqrt(2.0) / 3.0);
  // Continuous at +-sqrt(2): sqrt2 - 2 sqrt2 / 6 = 2 sqrt2 / 3.
  EXPECT_NEAR(CatoniGiuliniPhi(std::sqrt(2.0)), kCatoniGiuliniBound, 1e-15);
  EXPECT_DOUBLE_EQ(kCatoniGiuliniBound, 2.0 * std::sqrt(2.0) / 3.0);
}

TEST(CatoniGiuliniCorrectionTest, ClosedFormMatchesQuadratureOnGrid) {
  int checked = 0;
  for (double a = -5.0; a <= 5.0 + 1e-12; a += 0.25) {
    for (double b : {0.02, 0.1, 0.25, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0}) {
      const double reference = ReferenceExpectation(a, b);
      // eq. (12): a (1 - b^2/2) - a^3/6 + C-hat.
      const double closed = a * (1.0 - b * b / 2.0) - a * a * a / 6.0 +
                            CatoniGiuliniCorrection(a, b);
      EXPECT_NEAR(closed, reference, 1e-9) << "a = " << a << ", b = " << b;
      EXPECT_NEAR(SmoothedTruncationClosedForm(a, b), reference, 1e-9);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 41 * 11);
}

TEST(SmoothedTruncationTest, StableFormMatchesQuadratureOnWideGrid) {
  for (double a : {-1e6, -300.0, -40.0, -9.0, -8.5, -7.0, -2.0, -0.3, 0.0, 0.7, 1.4, 3.0, 8.2,
                   12.0, 100.0, 5e4, 1e8}) {
    for (double b : {1e-3, 0.1, 1.0, 3.0, 7.9, 8.1, 20.0, 500.0, 1e5, 1e8}) {
      const double value = SmoothedTruncation(a, b);
      EXPECT_NEAR(value, ReferenceExpectation(a, b), 1e-9) << "a = " << a << ", b = " << b;
      EXPECT_LE(std::abs(value), kCatoniGiuliniBound);
    }
  }
}

TEST(SmoothedTruncationTest, EdgeCases) {
  EXPECT_DOUBLE_EQ(SmoothedTruncation(0.5, 0.0), CatoniGiuliniPhi(0.5));
  EXPECT_DOUBLE_EQ(SmoothedTruncation(kInf, 2.0), kCatoniGiuliniBound);
  EXPECT_DOUBLE_EQ(SmoothedTruncation(-kInf, 2.0), -kCatoniGiuliniBound);
  EXPECT_EQ(SmoothedTruncation(kNaN, 1.0), 0.0);
  EXPECT_EQ(SmoothedTruncation(1.0, kNaN), 0.0);
  EXPECT_EQ(SmoothedTruncation(3.0, kInf), 0.0);
}

TEST(SmoothedTruncatedValueTest, InfinityIsTheLimitOfLargeValues) {
  const RobustMeanParameters p{2.0, 1.7};
  const double big = SmoothedTruncatedValue(1e300, p);
  EXPECT_NEAR(SmoothedTruncatedValue(kInf, p), big, 1e-12);
  EXPECT_NEAR(SmoothedTruncatedValue(-kInf, p), -big, 1e-12);
  EXPECT_EQ(SmoothedTruncatedValue(kNaN, p), 0.0);
  // psi(x) = s E phi(a + b Z) with a = x/s, b = |x|/(s sqrt beta).
  const double x = 3.3;
  EXPECT_NEAR(SmoothedTruncatedValue(x, p),
              2.0 * ReferenceExpectation(x / 2.0, x / (2.0 * std::sqrt(1.7))), 1e-9);
}

// Tiny values: b = |a| / sqrt(beta) so small that the closed form's
// ((sqrt 2 +- a) / b)^2 overflows (below about 1e-154) gave NaN until the
// b -> 0 limit phi(a) took over below kClosedFormMinSmoothing. Every value
// is finite, in the bound, and within rounding of E phi(a + b Z) = phi(a) -
// a b^2 / 2 + O(a b^4) (phi(a) = a - a^3/6 here), on both sides of the
// threshold.
TEST(SmoothedTruncationTest, TinyValuesAreTheirTruncationNotNaN) {
  for (const double beta : {1.7, 1e6}) {
    const RobustMeanParameters p{0.9, beta};
    for (double x = 4.9e-324; x < 1e-6; x *= 7.3) {
      for (const double v : {x, -x}) {
        const double a = v / p.scale, b = std::abs(v) / (p.scale * std::sqrt(beta));
        const double truncated = SmoothedTruncation(a, b);
        ASSERT_TRUE(std::isfinite(truncated)) << v;
        EXPECT_NEAR(truncated, CatoniGiuliniPhi(a) - a * b * b / 2.0, 1e-15 * std::abs(a) + 1e-300)
            << v;
        const double value = SmoothedTruncatedValue(v, p);
        ASSERT_TRUE(std::isfinite(value)) << v;
        EXPECT_NEAR(value, p.scale * truncated, 1e-14 * std::abs(v) + 1e-300) << v;
      }
    }
  }
}

// The batch (eight values at a time, vectorised erfc and exp where the build
// has them) against SmoothedTruncation value by value, over regular and
// special values mixed in one call of a length that is not a multiple of
// eight; each value's result is the same to the bit at every position and
// beside any neighbours, and equal to SmoothedTruncatedValue's.
TEST(SmoothedTruncatedValuesTest, MatchTheScalarFormAndDoNotDependOnNeighbours) {
  const RobustMeanParameters p{1.3, 2.4};
  std::vector<double> x = {kNaN, kInf, -kInf, 0.0, -0.0, 1e-300, -1e-120, 1e-90, 1e300, -1e9};
  for (double v = -14.0; v <= 14.0; v += 0.137) x.push_back(v);  // |a| and b around 8.
  const Eigen::Map<const Eigen::VectorXd> all(x.data(), static_cast<Eigen::Index>(x.size()));
  ASSERT_NE(all.size() % 8, 0);
  const Eigen::VectorXd batch = SmoothedTruncatedValues(all, p);
  for (Eigen::Index i = 0; i < all.size(); ++i) {
    const double v = all(i);
    const double reference =
        std::isnan(v) ? 0.0
        : std::isinf(v)
            ? SmoothedTruncatedValue(v, p)
            : p.scale * SmoothedTruncation(v / p.scale, std::abs(v) / (p.scale * std::sqrt(p.beta)));
    ASSERT_TRUE(std::isfinite(batch(i))) << v;
    EXPECT_NEAR(batch(i), reference, 1e-12 * p.scale) << v;
    EXPECT_LE(std::abs(batch(i)), kCatoniGiuliniBound * p.scale) << v;
    EXPECT_EQ(batch(i), SmoothedTruncatedValue(v, p)) << v;
  }
  // The same values shifted by three places and reversed: the same results.
  std::vector<double> moved = {0.5, -7.0, 2.0};
  moved.insert(moved.end(), x.rbegin(), x.rend());
  const Eigen::VectorXd again = SmoothedTruncatedValues(
      Eigen::Map<const Eigen::VectorXd>(moved.data(), static_cast<Eigen::Index>(moved.size())), p);
  for (Eigen::Index i = 0; i < all.size(); ++i) {
    EXPECT_EQ(again(3 + all.size() - 1 - i), batch(i)) << all(i);
  }
}

// Review (adversarial sweep of the eight-lane kernel): for scales and
// smoothings at the extremes of double (s and beta from 5e-324 to DBL_MAX)
// and values at every binade, at the closed form's limits (|a| and b at 8
// and the ulps around it, b at 1e-100 and the ulps around it, |a| at sqrt 2),
// subnormals and signed zeros, every result is finite, within
// kCatoniGiuliniBound s, and the same bits alone, in a batch, and shifted to
// another lane. Passes.
TEST(SmoothedTruncatedValuesTest, AdversarialSweepIsFiniteBoundedAndPositionFree) {
  constexpr double kMax = std::numeric_limits<double>::max();
  constexpr double kMinSub = std::numeric_limits<double>::denorm_min();
  constexpr double kMinNormal = std::numeric_limits<double>::min();
  const std::vector<double> scales = {kMinSub, kMinNormal, 1e-300, 1e-100, 1e-5, 1.0,
                                      1.3,     1e5,        1e100,  1e300,  kMax};
  const std::vector<double> betas = {kMinSub, 1e-300, 1e-100, 1e-10, 0.5, 1.0,
                                     5.76,    64.0,   1e30,   1e300, kMax};
  const auto around = [](double v, std::vector<double>& out) {
    double up = v, down = v;
    for (int k = 0; k < 3; ++k) {
      up = std::nextafter(up, kInf);
      down = std::nextafter(down, -kInf);
      out.push_back(up);
      out.push_back(down);
    }
    out.push_back(v);
  };
  for (double s : scales) {
    for (double beta : betas) {
      const RobustMeanParameters p{s, beta};
      const double root_beta = std::sqrt(beta);
      std::vector<double> targets;  // Values of a or b to hit: x = a s or b s sqrt(beta).
      around(kClosedFormLimit, targets);
      around(kClosedFormMinSmoothing, targets);
      around(std::sqrt(2.0), targets);
      std::vector<double> x = {0.0, -0.0, kMinSub, -kMinSub, kMinNormal, kMax, -kMax};
      for (double t : targets) {
        for (double sign : {1.0, -1.0}) {
          x.push_back(sign * t * s);
          x.push_back(sign * t * s * root_beta);
        }
      }
      for (int e = -1074; e <= 1023; e += 7) {
        x.push_back(std::ldexp(1.0, e));
        x.push_back(-std::ldexp(1.5, e));
      }
      for (double& v : x) {
        if (!std::isfinite(v)) v = std::copysign(kMax, v);
      }
      const Eigen::Map<const Eigen::VectorXd> all(x.data(), static_cast<Eigen::Index>(x.size()));
      const Eigen::VectorXd batch = SmoothedTruncatedValues(all, p);
      std::vector<double> moved = {0.5 * s, -kMax, 3.0, 1e-300, -7.0};
      moved.insert(moved.end(), x.rbegin(), x.rend());
      const Eigen::VectorXd again = SmoothedTruncatedValues(
          Eigen::Map<const Eigen::VectorXd>(moved.data(), static_cast<Eigen::Index>(moved.size())),
          p);
      const double bound = kCatoniGiuliniBound * s;
      for (Eigen::Index i = 0; i < all.size(); ++i) {
        const double v = all(i);
        ASSERT_TRUE(std::isfinite(batch(i))) << v << " s " << s << " beta " << beta;
        ASSERT_LE(std::abs(batch(i)), bound) << v << " s " << s << " beta " << beta;
        ASSERT_EQ(batch(i), SmoothedTruncatedValue(v, p)) << v << " s " << s << " beta " << beta;
        ASSERT_EQ(again(5 + all.size() - 1 - i), batch(i)) << v << " s " << s << " beta " << beta;
        const double scalar = SmoothedTruncation(v / s, std::abs(v) / (s * root_beta));
        ASSERT_TRUE(std::isfinite(scalar) && std::abs(scalar) <= kCatoniGiuliniBound)
            << v << " s " << s << " beta " << beta;
      }
    }
  }
}

// Replacing one record moves the mean by at most (4 sqrt 2/3) s / n, for any
// values at all (brute force over extreme replacements).
TEST(RobustMeanTest, ReplaceOneSensitivityHoldsForExtremeValues) {
  const RobustMeanParameters p{0.7, 1.3};
  // With values of magnitude below about 1e-154 (and the smallest
  // subnormal), whose closed form once gave NaN.
  std::vector<double> values = {-kInf, -1e300, -1e9,   -55.0,   -3.0,   -1.0,   -0.01,
                                -1e-300, -4.9e-324, 0.0, 4.9e-324, 1e-200, 1e-160, 1e-120,
                                1e-90,  0.3,    2.0,    9.0,     1e7,    1e300,  kInf};
  Eigen::VectorXd x(6);
  x << 0.1, -2.0, 5.0, 0.3, 1.1, -0.4;
  const double bound = RobustMeanSensitivity(p.scale, 6.0);
  EXPECT_DOUBLE_EQ(bound, 4.0 * std::sqrt(2.0) / 3.0 * 0.7 / 6.0);
  double largest = 0.0;
  for (double u : values) {
    for (double v : values) {
      Eigen::VectorXd xu = x, xv = x;
      xu(2) = u;
      xv(2) = v;
      const double diff = std::abs(*RobustMean(xu, p) - *RobustMean(xv, p));
      EXPECT_LE(diff, bound) << u << " vs " << v;
      largest = std::max(largest, diff);
    }
  }
  // The bound is nearly attained: +-inf maps to bound * erf(sqrt(beta/2)).
  EXPECT_GT(largest, 0.7 * bound);
}

TEST(RobustMeanTest, RejectsBadInput) {
  Eigen::VectorXd empty(0);
  EXPECT_FALSE(RobustMean(empty, {1.0, 1.0}).ok());
  Eigen::VectorXd x = Eigen::VectorXd::Ones(3);
  EXPECT_FALSE(RobustMean(x, {0.0, 1.0}).ok());
  EXPECT_FALSE(RobustMean(x, {1.0, -1.0}).ok());
}

PrivateMeanOptions Options() {
  PrivateMeanOptions o;
  o.epsilon = 0.5;
  o.delta = 1e-5;
  o.tau = 4.0;
  o.zeta = 0.05;
  return o;
}

TEST(RobustMeanParametersTest, Theorem2AndLocalFormulas) {
  const PrivateMeanOptions o = Options();
  const double n = 1000.0;
  const double lz = std::log(20.0), ld = std::log(1e5);
  const RobustMeanParameters t2 = *Theorem2Parameters(n, o);
  EXPECT_NEAR(t2.beta, std::sqrt(lz), 1e-14);
  EXPECT_NEAR(t2.scale, std::sqrt(n * 0.5 * 4.0) / (lz * std::pow(ld, 0.25)), 1e-12);
  const RobustMeanParameters local = *LocalModelParameters(n, o);
  EXPECT_NEAR(local.beta, std::sqrt(lz), 1e-14);
  EXPECT_NEAR(local.scale,
              std::sqrt(4.0 * 0.5 * std::sqrt(n) / (std::sqrt(lz) * lz * std::sqrt(ld))), 1e-12);
  PrivateMeanOptions bad = o;
  bad.tau = kNaN;
  EXPECT_FALSE(Theorem2Parameters(n, bad).ok());
  bad = o;
  bad.epsilon = kNaN;
  EXPECT_FALSE(Theorem2Parameters(n, bad).ok());
  bad = o;
  bad.delta = 0.5;
  EXPECT_FALSE(Theorem2Parameters(n, bad).ok());
  bad = o;
  bad.calibration = RobustMeanCalibration::kClassic;
  bad.epsilon = 1.5;
  EXPECT_FALSE(bad.Validate().ok());
}

// The grid of a discrete release of noise scale `nominal` (additive_noise.h):
// the largest power of two <= nominal, divided by 2^20.
double Grid(double nominal) { return std::ldexp(1.0, std::ilogb(nominal) - 20); }

// Both means release discrete noise: the central mean lies on the grid g of
// its calibrated noise scale z * sens, and the ledger records the charged
// sensitivity sens + (9/8) g with the grid's noise scale (multiplier >= z);
// the local reports lie on their own grid, so n times the mean does. The
// continuous noise of an earlier version fails all of this.
// A seeded generator voids the robust means' guarantee as it voids a fit's
// (review finding: the results certified epsilon anyway).
TEST(PrivateRobustMeanTest, ASeededGeneratorVoidsTheGuarantee) {
  Eigen::VectorXd x(200);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = std::cos(0.1 * i);
  Generator seeded = Generator::FromSeed(3);
  const PrivateMeanResult central = *PrivateRobustMean(x, Options(), seeded);
  const PrivateMeanResult local = *LocalPrivateRobustMean(x, Options(), seeded);
  for (const PrivateMeanResult* r : {&central, &local}) {
    EXPECT_TRUE(r->guarantee_void);
    ASSERT_EQ(r->void_reasons.size(), 1u);
    EXPECT_NE(r->void_reasons[0].find("seed"), std::string::npos);
  }
  StatusOr<Generator> keyed = Generator::FromOsEntropy();
  ASSERT_TRUE(keyed.ok());
  const PrivateMeanResult fresh = *PrivateRobustMean(x, Options(), *keyed);
  EXPECT_FALSE(fresh.guarantee_void);
  EXPECT_TRUE(fresh.void_reasons.empty());
}

TEST(PrivateRobustMeanTest, RecordsOneDiscreteReleaseOnTheGrid) {
  Eigen::VectorXd x(500);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = std::sin(0.37 * i) * 3.0;
  const PrivateMeanOptions o = Options();
  Generator gen = Generator::FromSeed(7);
  const PrivateMeanResult r = *PrivateRobustMean(x, o, gen);
  ASSERT_EQ(r.ledger.size(), 1u);
  const Release& central = r.ledger.releases()[0];
  const double sens = 4.0 * std::sqrt(2.0) / 3.0 * r.parameters.scale / 500.0;
  // Discrete noise is calibrated through its Renyi curve (docs/accounting.md,
  // "Discrete noise"), and charged as additive_noise.h, "What is computed",
  // says: 2^-19 relative, the exact sums' quantum 2^-52, and 5/4 g.
  const double z = *CalibrateSingleGaussian(0.5, 1e-5, NoiseSampling::kDiscrete);
  EXPECT_GT(z, *CalibrateAnalyticGaussian(0.5, 1e-5));
  const double g = Grid(z * sens);
  EXPECT_GT(central.sensitivity, sens);
  EXPECT_NEAR(central.sensitivity,
              sens * (1 + std::exp2(-19.0)) + std::exp2(-52.0) + 1.25 * g, 1e-15);
  EXPECT_GE(central.NoiseMultiplier(), z);
  EXPECT_NEAR(central.NoiseMultiplier() / z, 1.0, 1e-5);
  EXPECT_EQ(r.noise_stddev, central.noise_scale);
  EXPECT_EQ(r.mean / g, std::round(r.mean / g)) << "the released mean is off the grid";
  EXPECT_LE(r.epsilon, 0.5 * (1 + 1e-9));
  EXPECT_GT(r.epsilon, 0.49);

  Generator gen2 = Generator::FromSeed(7);
  const PrivateMeanResult local = *LocalPrivateRobustMean(x, o, gen2);
  ASSERT_EQ(local.ledger.size(), 1u);
  const Release& report = local.ledger.releases()[0];
  const double local_sens = 4.0 * std::sqrt(2.0) / 3.0 * local.parameters.scale;
  const double local_g = Grid(z * local_sens);
  EXPECT_NEAR(report.sensitivity, local_sens * (1 + std::exp2(-19.0)) + 1.25 * local_g, 1e-13);
  EXPECT_GT(report.sensitivity, local_sens);
  EXPECT_GE(report.NoiseMultiplier(), z);
  EXPECT_EQ(local.noise_stddev, report.noise_scale);
  const double units = local.mean * 500.0 / local_g;  // The sum of the reports, in grid units.
  EXPECT_NEAR(units, std::round(units), 1e-6) << "the reports are off the grid";
  EXPECT_LE(local.epsilon, 0.5 * (1 + 1e-9));

  Eigen::VectorXd with_nan = x;
  with_nan(3) = kNaN;
  EXPECT_FALSE(PrivateRobustMean(with_nan, o, gen).ok());
}

}  // namespace
}  // namespace dpem
