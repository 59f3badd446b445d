// Distributional tests of the samplers: one-sample Kolmogorov-Smirnov tests
// against CDFs from Boost.Math (independent of the code under test) and
// moment checks against closed forms. Fixed seeds, no retries: each check
// would fail for a correct sampler with probability about 1e-4 or less.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/laplace.hpp>
#include <boost/math/distributions/normal.hpp>
#include <gtest/gtest.h>

#include "dpem/random/samplers.h"
#include "testing/statistics.h"
#include "testing/symmetric_matrix.h"

namespace dpem {
namespace {

using test_support::Correlation;
using test_support::KolmogorovCriticalValue;
using test_support::KsStatistic;

constexpr double kAlpha = 1e-4;  // Size of every KS test.
constexpr double kMaxStandardErrors = 5.0;
constexpr int kScalarSamples = 50000;

// Expects a KS test of size kAlpha to accept `samples` against `dist`.
template <typename Distribution>
void ExpectKsAccepts(const std::vector<double>& samples, const Distribution& dist) {
  test_support::ExpectKsAccepts(samples, dist, kAlpha);
}

// Expects the sample mean and variance of `x` to be within kMaxStandardErrors
// standard errors of `mean` and `variance`; `fourth_central` is the true
// fourth central moment (the variance of (X - mean)^2 is fourth - var^2).
void ExpectMoments(const std::vector<double>& x, double mean, double variance,
                   double fourth_central) {
  const double n = static_cast<double>(x.size());
  double sum = 0.0;
  for (double v : x) sum += v;
  const double sample_mean = sum / n;
  double ss = 0.0;
  for (double v : x) ss += (v - sample_mean) * (v - sample_mean);
  const double sample_variance = ss / (n - 1.0);
  EXPECT_NEAR(sample_mean, mean, kMaxStandardErrors * std::sqrt(variance / n));
  EXPECT_NEAR(sample_variance, variance,
              kMaxStandardErrors *
                  std::sqrt((fourth_central - variance * variance) / n));
}

// `n` draws of `draw()`.
std::vector<double> Draws(int n, const std::function<double()>& draw) {
  std::vector<double> out(n);
  for (double& v : out) v = draw();
  return out;
}

// Checks kScalarSamples draws of `draw()` against `dist`: the KS test, then
// ExpectMoments with the law's mean, variance and fourth central moment.
template <typename Distribution>
void ExpectDrawsFollow(const std::function<double()>& draw, const Distribution& dist,
                       double mean, double variance, double fourth_central) {
  const auto x = Draws(kScalarSamples, draw);
  ExpectKsAccepts(x, dist);
  ExpectMoments(x, mean, variance, fourth_central);
}

TEST(KsMachineryTest, CriticalValuesMatchPublishedTable) {
  // Published asymptotic Kolmogorov quantiles (e.g. Smirnov 1948 tables).
  EXPECT_NEAR(KolmogorovCriticalValue(0.05), 1.3581, 1e-4);
  EXPECT_NEAR(KolmogorovCriticalValue(0.01), 1.6276, 1e-4);
  EXPECT_NEAR(KolmogorovCriticalValue(0.001), 1.9495, 1e-4);
  // For small alpha the series is dominated by its first term.
  EXPECT_NEAR(KolmogorovCriticalValue(kAlpha),
              std::sqrt(-0.5 * std::log(kAlpha / 2.0)), 1e-9);
}

TEST(KsMachineryTest, StatisticOfHandComputedSample) {
  const auto uniform_cdf = [](double x) { return std::clamp(x, 0.0, 1.0); };
  EXPECT_DOUBLE_EQ(KsStatistic({0.5}, uniform_cdf), 0.5);
  // F_n jumps to 1/2 at 0.1 and to 1 at 0.2: the largest gap is 1 - 0.2.
  EXPECT_DOUBLE_EQ(KsStatistic({0.2, 0.1}, uniform_cdf), 0.8);
}

TEST(KsMachineryTest, RejectsLaplaceAgainstNormalOfSameVariance) {
  // Power check: Laplace(b) has variance 2 b^2 but heavier tails and a sharper
  // peak than N(0, 2 b^2); the KS test must notice.
  Generator gen = Generator::FromSeed(1001);
  const auto x = Draws(20000, [&] { return *SampleLaplace(gen, 1.0); });
  const boost::math::normal_distribution<double> same_variance(0.0,
                                                               std::sqrt(2.0));
  const double d = KsStatistic(
      x, [&](double v) { return boost::math::cdf(same_variance, v); });
  EXPECT_GT(d, test_support::KsCriticalValue(x.size(), kAlpha));
}

TEST(SamplersStatisticalTest, StandardNormal) {
  Generator gen = Generator::FromSeed(2001);
  ExpectDrawsFollow([&] { return SampleStandardNormal(gen); },
                    boost::math::normal_distribution<double>(0.0, 1.0), 0.0, 1.0, 3.0);
}

TEST(SamplersStatisticalTest, GaussianTwoScales) {
  Generator gen = Generator::FromSeed(2002);
  for (double s : {0.01, 7.5}) {
    SCOPED_TRACE(s);
    ExpectDrawsFollow([&] { return *SampleGaussian(gen, s); },
                      boost::math::normal_distribution<double>(0.0, s), 0.0, s * s,
                      3.0 * s * s * s * s);
  }
}

TEST(SamplersStatisticalTest, GaussianVectorUsesBothVariatesIndependently) {
  Generator gen = Generator::FromSeed(2003);
  const Eigen::VectorXd v = *SampleGaussianVector(gen, 2 * kScalarSamples, 3.0);
  std::vector<double> first;
  std::vector<double> second;
  for (Eigen::Index i = 0; i + 1 < v.size(); i += 2) {
    first.push_back(v[i]);
    second.push_back(v[i + 1]);
  }
  const boost::math::normal_distribution<double> n3(0.0, 3.0);
  ExpectKsAccepts(first, n3);
  ExpectKsAccepts(second, n3);
  ExpectMoments(std::vector<double>(v.data(), v.data() + v.size()), 0.0, 9.0,
                3.0 * 81.0);
  // The two variates of a polar pair are independent, and so are successive
  // pairs (second variate of one pair against first of the next).
  const double bound = kMaxStandardErrors / std::sqrt(first.size() - 1.0);
  EXPECT_LT(std::fabs(Correlation(first, second)), bound);
  const std::vector<double> next_first(first.begin() + 1, first.end());
  const std::vector<double> this_second(second.begin(), second.end() - 1);
  EXPECT_LT(std::fabs(Correlation(this_second, next_first)), bound);
}

TEST(SamplersStatisticalTest, LaplaceTwoScales) {
  Generator gen = Generator::FromSeed(3001);
  for (double b : {0.2, 13.0}) {
    SCOPED_TRACE(b);
    const double b2 = b * b;
    ExpectDrawsFollow([&] { return *SampleLaplace(gen, b); },
                      boost::math::laplace_distribution<double>(0.0, b), 0.0, 2.0 * b2,
                      24.0 * b2 * b2);
  }
}

TEST(SamplersStatisticalTest, LaplaceVector) {
  Generator gen = Generator::FromSeed(3002);
  const Eigen::VectorXd v = *SampleLaplaceVector(gen, kScalarSamples, 2.0);
  const std::vector<double> x(v.data(), v.data() + v.size());
  ExpectKsAccepts(x, boost::math::laplace_distribution<double>(0.0, 2.0));
  ExpectMoments(x, 0.0, 8.0, 24.0 * 16.0);
}

TEST(SamplersStatisticalTest, GammaShapes) {
  Generator gen = Generator::FromSeed(4001);
  const double theta = 1.7;
  for (double k : {0.3, 1.0, 2.5, 40.0}) {
    SCOPED_TRACE(k);
    // Central moments of Gamma(k, theta): var k theta^2, mu4 3k(k+2) theta^4.
    const double t2 = theta * theta;
    ExpectDrawsFollow([&] { return *SampleGamma(gen, k, theta); },
                      boost::math::gamma_distribution<double>(k, theta), k * theta, k * t2,
                      3.0 * k * (k + 2.0) * t2 * t2);
  }
}

// A non-diagonal 3x3 SPD scale matrix for the Wishart tests.
Eigen::Matrix3d WishartScale() {
  return test_support::Symmetric3(2.0, 0.6, -0.4, 1.0, 0.3, 0.8);
}

TEST(SamplersStatisticalTest, WishartDiagonalIsScaledChiSquared) {
  Generator gen = Generator::FromSeed(5001);
  const double dof = 4.7;
  const Eigen::Matrix3d s = WishartScale();
  std::vector<std::vector<double>> ratios(3);
  for (int t = 0; t < 20000; ++t) {
    const Eigen::MatrixXd w = *SampleWishart(gen, dof, s);
    for (int i = 0; i < 3; ++i) ratios[i].push_back(w(i, i) / s(i, i));
  }
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ExpectKsAccepts(ratios[i], boost::math::chi_squared_distribution<double>(dof));
  }
}

TEST(SamplersStatisticalTest, WishartMeanAndVariance) {
  Generator gen = Generator::FromSeed(5002);
  const double dof = 4.7;
  const Eigen::Matrix3d s = WishartScale();
  const int n = 5000;
  std::vector<Eigen::MatrixXd> draws;
  for (int t = 0; t < n; ++t) draws.push_back(*SampleWishart(gen, dof, s));
  for (int i = 0; i < 3; ++i) {
    for (int j = i; j < 3; ++j) {
      SCOPED_TRACE(testing::Message() << "entry " << i << "," << j);
      std::vector<double> x;
      for (const auto& w : draws) x.push_back(w(i, j));
      const double var = dof * (s(i, j) * s(i, j) + s(i, i) * s(j, j));
      double mean = 0.0;
      for (double v : x) mean += v / n;
      EXPECT_NEAR(mean, dof * s(i, j), kMaxStandardErrors * std::sqrt(var / n));
      // Standard error of the sample variance from the sample fourth moment.
      double m2 = 0.0;
      double m4 = 0.0;
      for (double v : x) {
        const double c2 = (v - mean) * (v - mean);
        m2 += c2 / n;
        m4 += c2 * c2 / n;
      }
      EXPECT_NEAR(m2 * n / (n - 1.0), var,
                  kMaxStandardErrors * std::sqrt((m4 - m2 * m2) / n));
    }
  }
}

TEST(SamplersStatisticalTest, SymmetricGaussianMatrix) {
  Generator gen = Generator::FromSeed(6001);
  const double s = 1.7;
  const int d = 5;
  const int n = 10000;
  std::vector<double> pooled;
  std::vector<double> e01;
  std::vector<double> e12;
  for (int t = 0; t < n; ++t) {
    const Eigen::MatrixXd m = *SampleSymmetricGaussianMatrix(gen, d, s);
    ASSERT_EQ(m, m.transpose());
    for (int j = 0; j < d; ++j)
      for (int i = 0; i <= j; ++i) pooled.push_back(m(i, j));
    e01.push_back(m(0, 1));
    e12.push_back(m(1, 2));
  }
  const boost::math::normal_distribution<double> normal(0.0, s);
  ExpectKsAccepts(pooled, normal);
  ExpectKsAccepts(e01, normal);
  ExpectMoments(pooled, 0.0, s * s, 3.0 * s * s * s * s);
  EXPECT_LT(std::fabs(Correlation(e01, e12)),
            kMaxStandardErrors / std::sqrt(static_cast<double>(n)));
}

}  // namespace
}  // namespace dpem
