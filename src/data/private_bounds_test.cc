#include "dpem/data/private_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "dpem/accounting/accountant.h"

namespace dpem {
namespace {

TEST(PrivateBoundsTest, ValidateRefusesAMissingEpsilon) {
  PrivateBoundsOptions o;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.epsilon = 1.0;
  EXPECT_TRUE(o.Validate().ok());
  o.quantile = 1.0;
  EXPECT_FALSE(o.Validate().ok());
  DataMatrix x(1, 1);
  x << 1.0;
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  Generator gen = Generator::FromSeed(1);
  EXPECT_EQ(ReleasePrivateBounds(source, PrivateBoundsOptions{}, gen).status().code(),
            StatusCode::kInvalidArgument);
}

// Data {1, 2, 3}, median (t = 1.5), breakpoints {0, 4, 8}, epsilon 2 (1 per
// step), 4 refinement points. By hand: the coarse utilities are 0 for [0, 4)
// (t lies between #{x<0} = 0 and #{x<4} = 3) and -1.5 for [4, 8); in [0, 4]
// the candidates 0..4 have #{x<v} = 0, 0, 1, 2, 3, utilities -1.5, -1.5,
// -0.5, -0.5, -1.5; in [4, 8] all have -1.5 (uniform). Weights exp(u / 2).
std::map<int, double> ExactQuantileProbabilities() {
  const double a = std::exp(-0.75), b = std::exp(-0.25);
  const double first = 1.0 / (1.0 + a), second = a / (1.0 + a);
  const double low = a / (3 * a + 2 * b), high = b / (3 * a + 2 * b);
  std::map<int, double> p = {{0, first * low}, {1, first * low}, {2, first * high},
                             {3, first * high}, {4, first * low + second / 5}};
  for (int v = 5; v <= 8; ++v) p[v] = second / 5;
  return p;
}

TEST(PrivateBoundsTest, QuantileDistributionMatchesTheExactProbabilities) {
  const std::vector<double> data = {1, 2, 3}, breakpoints = {0, 4, 8};
  const std::map<int, double> p = ExactQuantileProbabilities();
  constexpr int kDraws = 100000;
  std::map<int, int> counts;
  Generator gen = Generator::FromSeed(7);
  for (int i = 0; i < kDraws; ++i) {
    PrivacyLedger ledger;
    StatusOr<double> v = PrivateQuantile(data, 0.5, breakpoints, true, 2.0, 4, "q", gen, ledger);
    ASSERT_TRUE(v.ok());
    ++counts[static_cast<int>(std::lround(*v))];
  }
  double chi2 = 0.0;
  for (const auto& [v, prob] : p) {
    const double expected = prob * kDraws;
    chi2 += (counts[v] - expected) * (counts[v] - expected) / expected;
  }
  EXPECT_EQ(counts.size(), p.size());
  // 9 categories, 8 degrees of freedom: P(chi2 > 41) < 1e-6.
  EXPECT_LT(chi2, 41.0);
}

TEST(PrivateBoundsTest, MedianLandsNearTheTrueMedian) {
  std::vector<double> data;
  for (int i = 0; i <= 2000; ++i) data.push_back(3.0 + (i - 1000) / 1000.0);
  Generator gen = Generator::FromSeed(3);
  for (int rep = 0; rep < 20; ++rep) {
    PrivacyLedger ledger;
    StatusOr<double> m = PrivateQuantile(data, 0.5, BoundsBreakpoints(true), true, 1.0, 4096,
                                         "median", gen, ledger);
    ASSERT_TRUE(m.ok());
    EXPECT_NEAR(*m, 3.0, 0.1);
  }
}

DataMatrix SquareAround(double cx, double cy, double half, int n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  DataMatrix x(n, 2);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = cx + half * (2 * gen.UniformOpen01() - 1);
    x(i, 1) = cy + half * (2 * gen.UniformOpen01() - 1);
  }
  return x;
}

TEST(PrivateBoundsTest, ReleasesAUsefulDomainFarFromTheOrigin) {
  const DataMatrix x = SquareAround(40.7, -74.0, 0.2, 4000, 5);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  PrivateBoundsOptions o;
  o.epsilon = 1.0;
  Generator gen = Generator::FromSeed(9);
  StatusOr<PrivateBounds> b = ReleasePrivateBounds(source, o, gen);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_NEAR(b->domain.center(0), 40.7, 0.05);
  EXPECT_NEAR(b->domain.center(1), -74.0, 0.05);
  // The 0.95 quantile of the distance from the centre of a square of half
  // side 0.2 is about 0.25 (between the inscribed 0.2 and the corner 0.28).
  EXPECT_GT(b->domain.data_norm, 0.15);
  EXPECT_LT(b->domain.data_norm, 0.35);
  EXPECT_LT(b->outside_fraction_noisy, 0.2);
  EXPECT_FALSE(b->domain.from_data);
  EXPECT_TRUE(b->guarantee_void);  // Seeded.
}

TEST(PrivateBoundsTest, LedgerHoldsEveryRelease) {
  const DataMatrix x = SquareAround(1.0, 2.0, 0.5, 500, 6);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  PrivateBoundsOptions o;
  o.epsilon = 2.0;
  Generator gen = Generator::FromSeed(10);
  const PrivateBounds b = *ReleasePrivateBounds(source, o, gen);
  // Per coordinate: 2 steps at 2 * 1/2 / 2 / 2 = 0.25; radius: 2 steps at
  // 2 * 3/8 / 2 = 0.375; outside count: discrete Laplace at 2/8 = 0.25.
  const std::vector<double> steps = {0.25, 0.25, 0.25, 0.25, 0.375, 0.375};
  ASSERT_EQ(b.ledger.size(), 7u);
  for (std::size_t i = 0; i < b.ledger.size(); ++i) {
    const Release& r = b.ledger.releases()[i];
    EXPECT_EQ(r.mechanism, MechanismKind::kLaplace);
    EXPECT_EQ(r.sampling, NoiseSampling::kDiscrete);
    EXPECT_EQ(r.label.rfind(kBoundsLabelPrefix, 0), 0u) << r.label;
    if (i < steps.size()) {
      EXPECT_EQ(r.sensitivity, 1.0);
      EXPECT_DOUBLE_EQ(1.0 / r.NoiseMultiplier(), steps[i]);
      EXPECT_NE(r.label.find("exponential mechanism"), std::string::npos);
    } else {
      EXPECT_NEAR(1.0 / r.NoiseMultiplier(), 0.25, 1e-3);
    }
  }
  EXPECT_NEAR(b.epsilon, 2.0, 2e-3);
  // The linear accountant sums the pure epsilons of the ledger.
  EXPECT_NEAR(*ComputeEpsilon(b.ledger, 1e-5, AccountantKind::kLinear), b.epsilon, 1e-9);
}

TEST(PrivateBoundsTest, ComposingWithAFitAddsTheEpsilons) {
  const DataMatrix x = SquareAround(0.0, 0.0, 1.0, 200, 8);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  PrivateBoundsOptions o;
  o.epsilon = 0.1;
  Generator gen = Generator::FromSeed(2);
  const PrivateBounds b = *ReleasePrivateBounds(source, o, gen);
  PrivacyLedger fit;
  ASSERT_TRUE(fit.Record(Release{MechanismKind::kGaussian, 1.0, 5.0, "fit"}).ok());
  const double fit_eps = *ComputeEpsilon(fit, 1e-5, AccountantKind::kRdp);
  const ComposedGuarantee c = *ComposeBoundsWithFit(b, fit, fit_eps, 1e-5, AccountantKind::kRdp);
  EXPECT_EQ(c.ledger.size(), b.ledger.size() + 1);
  EXPECT_LE(c.epsilon, b.epsilon + fit_eps + 1e-12);
  EXPECT_GT(c.epsilon, fit_eps);
}

}  // namespace
}  // namespace dpem
