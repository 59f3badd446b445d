// Statistical tests of the mechanisms: the noise actually added has the
// calibrated scale and law. Fixed seeds, no retries.
//
// Tolerances. For n i.i.d. draws with standard deviation sigma and kurtosis
// kappa (3 Gaussian, 6 Laplace), the sample standard deviation s has
// Var(s^2) ~ (kappa - 1) sigma^4 / n, hence the relative standard error
// SE(s)/sigma ~ sqrt((kappa - 1) / (4 n)). Every SD check allows
// kMaxStandardErrors = 5 standard errors (two-sided failure probability
// ~6e-7 for a correct mechanism), and asserts that this is within the 3%
// the design asks for. A noise scale confused with a variance (the flaw of
// the papers' published FA script) is off by a factor sigma: the scales below
// (0.6, 0.36, ...) make that a 40%+ error, far outside. KS tests have size
// kAlpha = 1e-4 against CDFs from Boost.Math (independent of dpem).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/laplace.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
#include "dpem/random/generator.h"
#include "testing/statistics.h"

namespace dpem {
namespace {

constexpr int kReleases = 20000;
constexpr double kMaxStandardErrors = 5.0;
constexpr double kMaxRelativeSdError = 0.03;
constexpr double kAlpha = 1e-4;
constexpr double kGaussianKurtosis = 3.0;
constexpr double kLaplaceKurtosis = 6.0;

template <typename Distribution>
void ExpectKsAccepts(const std::vector<double>& x, const Distribution& dist) {
  test_support::ExpectKsAccepts(x, dist, kAlpha);
}

// Checks mean ~ 0 and SD ~ `sd` of the noise samples `x`.
void ExpectScale(const std::vector<double>& x, double sd, double kurtosis) {
  const double n = static_cast<double>(x.size());
  double sum = 0.0, sum_sq = 0.0;
  for (double v : x) sum += v;
  const double mean = sum / n;
  for (double v : x) sum_sq += (v - mean) * (v - mean);
  const double s = std::sqrt(sum_sq / (n - 1));
  const double rel_tol =
      kMaxStandardErrors * std::sqrt((kurtosis - 1) / (4 * n));
  ASSERT_LE(rel_tol, kMaxRelativeSdError) << "test design: too few samples";
  EXPECT_NEAR(s / sd, 1.0, rel_tol) << "empirical SD " << s << " vs " << sd;
  EXPECT_NEAR(mean, 0.0, kMaxStandardErrors * sd / std::sqrt(n));
}

std::vector<double> Scaled(const std::vector<double>& x, double by) {
  std::vector<double> out(x);
  for (double& v : out) v /= by;
  return out;
}

// Noise of kReleases releases of a fixed vector: per-coordinate columns.
std::vector<std::vector<double>> VectorNoise(const NoiseSpec& spec,
                                             std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  PrivacyLedger ledger;
  const Eigen::Vector4d truth(0.3, -1.0, 2.0, 0.0);
  std::vector<std::vector<double>> noise(4);
  for (int r = 0; r < kReleases; ++r) {
    Eigen::VectorXd v = truth;
    EXPECT_TRUE(ReleaseVector(v, spec, gen, ledger).ok());
    for (int i = 0; i < 4; ++i) noise[i].push_back(v[i] - truth[i]);
  }
  EXPECT_EQ(ledger.size(), static_cast<std::size_t>(kReleases));
  return noise;
}

std::vector<double> Pooled(const std::vector<std::vector<double>>& cols) {
  std::vector<double> out;
  for (const auto& c : cols) out.insert(out.end(), c.begin(), c.end());
  return out;
}

TEST(MechanismsStatisticalTest,
     GaussianVectorNoiseHasSdSensitivityTimesMultiplier) {
  const NoiseSpec spec{MechanismKind::kGaussian, 0.3, 2.0, "gauss"};
  const double sigma = 0.3 * 2.0;
  const auto noise = VectorNoise(spec, 41);
  for (const auto& col : noise) ExpectScale(col, sigma, kGaussianKurtosis);
  ExpectScale(Pooled(noise), sigma, kGaussianKurtosis);
  EXPECT_LT(std::fabs(test_support::Correlation(noise[0], noise[1])),
            5 / std::sqrt(kReleases));
  ExpectKsAccepts(Scaled(Pooled(noise), sigma), boost::math::normal(0, 1));
}

TEST(MechanismsStatisticalTest, LaplaceVectorNoiseHasSdSqrt2TimesB) {
  const NoiseSpec spec{MechanismKind::kLaplace, 0.3, 2.0, "laplace"};
  const double b = 0.3 * 2.0;
  const auto noise = VectorNoise(spec, 42);
  ExpectScale(Pooled(noise), std::sqrt(2.0) * b, kLaplaceKurtosis);
  EXPECT_LT(std::fabs(test_support::Correlation(noise[2], noise[3])),
            5 / std::sqrt(kReleases));
  ExpectKsAccepts(Scaled(Pooled(noise), b), boost::math::laplace(0, 1));
}

TEST(MechanismsStatisticalTest, MatrixNoiseHasCalibratedScale) {
  Generator gen = Generator::FromSeed(43);
  PrivacyLedger ledger;
  const NoiseSpec spec{MechanismKind::kGaussian, 0.12, 3.0, "block"};
  const double sigma = 0.36;
  const Eigen::MatrixXd truth = Eigen::MatrixXd::Constant(2, 3, 0.7);
  std::vector<double> noise;
  for (int r = 0; r < kReleases; ++r) {
    Eigen::MatrixXd m = truth;
    ASSERT_TRUE(ReleaseMatrix(m, spec, gen, ledger).ok());
    for (double x : (m - truth).reshaped()) noise.push_back(x);
  }
  ExpectScale(noise, sigma, kGaussianKurtosis);
  ExpectKsAccepts(Scaled(noise, sigma), boost::math::normal(0, 1));
}

// Analyze Gauss: diagonal AND off-diagonal entries each have SD sigma (not
// sigma^2, not sigma * sqrt(2) as a sum of two draws would give).
TEST(MechanismsStatisticalTest, SymmetricNoiseHasSdSigmaOnAndOffTheDiagonal) {
  Generator gen = Generator::FromSeed(44);
  PrivacyLedger ledger;
  const NoiseSpec spec{MechanismKind::kGaussian, 0.2, 3.0, "cov"};
  const double sigma = 0.6;
  Eigen::MatrixXd truth(3, 3);
  truth << 1.0, 0.2, -0.1, 0.2, 0.8, 0.05, -0.1, 0.05, 0.5;
  std::vector<double> diag, off;
  for (int r = 0; r < kReleases; ++r) {
    Eigen::MatrixXd m = truth;
    ASSERT_TRUE(ReleaseSymmetric(m, spec, gen, ledger).ok());
    const Eigen::MatrixXd z = m - truth;
    for (int j = 0; j < 3; ++j) {
      diag.push_back(z(j, j));
      for (int i = 0; i < j; ++i) off.push_back(z(i, j));
    }
  }
  ExpectScale(diag, sigma, kGaussianKurtosis);
  ExpectScale(off, sigma, kGaussianKurtosis);
  ExpectKsAccepts(Scaled(diag, sigma), boost::math::normal(0, 1));
  ExpectKsAccepts(Scaled(off, sigma), boost::math::normal(0, 1));
}

// A release large enough for several noise chunks (d = 512: three chunks of
// the upper triangle's 131,328 coordinates, drawn on two threads): in every
// chunk the noise of the zero matrix has SD the recorded noise scale (the
// discrete Gaussian's SD equals its scale to within 1e-100 at these scales)
// and is normal by KS; and the chunks are uncorrelated.
TEST(MechanismsStatisticalTest, ChunkedSymmetricNoiseHasTheRecordedScaleInEveryChunk) {
  Generator gen = Generator::FromSeed(46);
  PrivacyLedger ledger;
  const Eigen::Index d = 512;
  Eigen::MatrixXd value = Eigen::MatrixXd::Zero(d, d);
  ASSERT_TRUE(ReleaseSymmetric(value, {MechanismKind::kGaussian, 0.5, 3.0, "big"}, gen, ledger, 2)
                  .ok());
  const double sigma = ledger.releases()[0].noise_scale;
  std::vector<double> upper;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) upper.push_back(value(i, j));
  }
  const size_t chunk = 65536;  // internal::kNoiseChunkCoordinates
  std::vector<std::vector<double>> chunks;
  for (size_t begin = 0; begin + chunk <= upper.size(); begin += chunk) {
    chunks.emplace_back(upper.begin() + static_cast<std::ptrdiff_t>(begin),
                        upper.begin() + static_cast<std::ptrdiff_t>(begin + chunk));
  }
  ASSERT_EQ(chunks.size(), 2u);
  for (const std::vector<double>& c : chunks) {
    ExpectScale(c, sigma, kGaussianKurtosis);
    ExpectKsAccepts(Scaled(c, sigma), boost::math::normal(0, 1));
  }
  double cross = 0.0;  // Correlation of the two chunks, coordinate by coordinate.
  for (size_t k = 0; k < chunk; ++k) cross += chunks[0][k] * chunks[1][k];
  const double correlation = cross / (static_cast<double>(chunk) * sigma * sigma);
  EXPECT_NEAR(correlation, 0.0, kMaxStandardErrors / std::sqrt(static_cast<double>(chunk)));
}

// park2016 eq. (16): Y ~ Gam(1, rate beta = eps / Delta), i.e. Y / (Delta /
// eps) ~ Exp(1). A rate read as a scale would be off by (Delta/eps)^2.
TEST(MechanismsStatisticalTest,
     UnsafeGammaNoiseIsExponentialWithRateEpsOverDelta) {
  Generator gen = Generator::FromSeed(45);
  PrivacyLedger ledger;
  const double delta = 0.05, eps = 0.5;
  std::vector<double> noise;
  for (int r = 0; r < kReleases; ++r) {
    double v = 0.3;
    ASSERT_TRUE(
        ReleaseVarianceGammaUnsafe(v, delta, eps, gen, ledger, true).ok());
    noise.push_back((v - 0.3) / (delta / eps));
  }
  ExpectKsAccepts(noise, boost::math::exponential(1.0));
}

// park2016 eq. (17)-(18), (27): Z Z^T ~ W_d(d + 1, lambda I), lambda =
// Delta / (2 eps), so each diagonal entry / lambda ~ chi^2_{d+1}.
TEST(MechanismsStatisticalTest, UnsafeWishartDiagonalIsLambdaTimesChiSquared) {
  Generator gen = Generator::FromSeed(46);
  PrivacyLedger ledger;
  const double delta = 0.04, eps = 0.8, lambda = delta / (2 * eps);
  const Eigen::MatrixXd truth = 0.5 * Eigen::MatrixXd::Identity(3, 3);
  std::vector<double> diag;
  for (int r = 0; r < kReleases; ++r) {
    Eigen::MatrixXd m = truth;
    ASSERT_TRUE(
        ReleaseCovarianceWishartUnsafe(m, delta, eps, gen, ledger, true).ok());
    for (int j = 0; j < 3; ++j)
      diag.push_back((m(j, j) - truth(j, j)) / lambda);
  }
  ExpectKsAccepts(diag, boost::math::chi_squared(3 + 1));
}

}  // namespace
}  // namespace dpem
