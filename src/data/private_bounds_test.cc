#include "dpem/data/private_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

TEST(PrivateBoundsTest, ExactEpsilonRoundsDownToADyadicRational) {
  EXPECT_EQ(ExactEpsilonAtMost(0.25)->value(), 0.25);
  EXPECT_EQ(ExactEpsilonAtMost(0.375)->value(), 0.375);
  for (double e : {0.1, 0.05 * 3 / 16, 1.0 / 3, 7.3, 1e-9}) {
    const ExactEpsilon x = *ExactEpsilonAtMost(e);
    EXPECT_LE(x.value(), e);
    EXPECT_GE(x.value(), e * (1 - std::ldexp(1.0, -31)));
    EXPECT_LT(x.numerator, std::uint64_t{1} << 32);
  }
  EXPECT_FALSE(ExactEpsilonAtMost(0.0).ok());
  EXPECT_FALSE(ExactEpsilonAtMost(std::nan("")).ok());
}

// Permute-and-flip's law, computed independently by enumerating the 4! = 24
// orders: in order (r_1, ..., r_4), r_i is the output with probability
// prod_{k<i} (1 - p(r_k)) p(r_i), p(r) = exp(-e (u* - u_r) / 2).
std::vector<double> EnumeratedPermuteAndFlip(const std::vector<std::int64_t>& u, double e) {
  const std::int64_t top = *std::max_element(u.begin(), u.end());
  std::vector<int> order(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) order[i] = static_cast<int>(i);
  std::vector<double> p(u.size(), 0.0);
  double orders = 0.0;
  do {
    orders += 1.0;
    double none_yet = 1.0;
    for (int r : order) {
      const double accept = std::exp(-e * static_cast<double>(top - u[r]) / 2);
      p[r] += none_yet * accept;
      none_yet *= 1.0 - accept;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  for (double& x : p) x /= orders;
  return p;
}

TEST(PrivateBoundsTest, PermuteAndFlipMatchesTheEnumeratedProbabilities) {
  const std::vector<std::int64_t> u = {0, -1, -1, -3};
  const ExactEpsilon e = *ExactEpsilonAtMost(1.5);
  const std::vector<double> p = EnumeratedPermuteAndFlip(u, e.value());
  constexpr int kDraws = 200000;
  std::vector<int> counts(u.size(), 0);
  Generator gen = Generator::FromSeed(7);
  for (int i = 0; i < kDraws; ++i) ++counts[*SamplePermuteAndFlip(u, e, gen)];
  double chi2 = 0.0;
  for (std::size_t r = 0; r < u.size(); ++r) {
    const double expected = p[r] * kDraws;
    chi2 += (counts[r] - expected) * (counts[r] - expected) / expected;
  }
  // 4 categories, 3 degrees of freedom: P(chi2 > 30) < 2e-6.
  EXPECT_LT(chi2, 30.0);
  // Permute-and-flip's known closed form for the top candidate of two
  // candidates with gap g: (1 + (1 - a)) / 2 = 1 - a/2, a = exp(-e g / 2).
  const std::vector<double> two = EnumeratedPermuteAndFlip({0, -2}, 1.0);
  EXPECT_NEAR(two[0], 1 - std::exp(-1.0) / 2, 1e-12);
}

TEST(PrivateBoundsTest, PermuteAndFlipHandlesExtremeGaps) {
  const std::vector<std::int64_t> u = {std::numeric_limits<std::int64_t>::min(), 5,
                                       std::numeric_limits<std::int64_t>::max()};
  Generator gen = Generator::FromSeed(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(*SamplePermuteAndFlip(u, *ExactEpsilonAtMost(1), gen), 2u);
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

// The bounds of `x` released at `epsilon` with a generator seeded by `seed`.
StatusOr<PrivateBounds> ReleaseBounds(const DataMatrix& x, double epsilon, std::uint64_t seed) {
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  PrivateBoundsOptions o;
  o.epsilon = epsilon;
  Generator gen = Generator::FromSeed(seed);
  return ReleasePrivateBounds(source, o, gen);
}

TEST(PrivateBoundsTest, ReleasesAUsefulDomainFarFromTheOrigin) {
  StatusOr<PrivateBounds> b = ReleaseBounds(SquareAround(40.7, -74.0, 0.2, 4000, 5), 1.0, 9);
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
  const PrivateBounds b = *ReleaseBounds(SquareAround(1.0, 2.0, 0.5, 500, 6), 2.0, 10);
  // Per coordinate: 2 steps at 2 * 1/2 / 2 / 2 = 0.25; radius: 2 * 7/16 =
  // 0.875 split 3/4 (0.65625), 1/4 (0.21875); outside count: discrete
  // Laplace at 2/16 = 0.125. All dyadic, so recorded exactly.
  const std::vector<double> steps = {0.25, 0.25, 0.25, 0.25, 0.65625, 0.21875};
  ASSERT_EQ(b.ledger.size(), 7u);
  for (std::size_t i = 0; i < b.ledger.size(); ++i) {
    const Release& r = b.ledger.releases()[i];
    EXPECT_EQ(r.mechanism, MechanismKind::kLaplace);
    EXPECT_EQ(r.sampling, NoiseSampling::kDiscrete);
    EXPECT_EQ(r.label.rfind(kBoundsLabelPrefix, 0), 0u) << r.label;
    if (i < steps.size()) {
      EXPECT_EQ(r.sensitivity, 1.0);
      EXPECT_DOUBLE_EQ(1.0 / r.NoiseMultiplier(), steps[i]);
      EXPECT_NE(r.label.find("permute-and-flip"), std::string::npos);
    } else {
      EXPECT_NEAR(1.0 / r.NoiseMultiplier(), 0.125, 1e-3);
    }
  }
  EXPECT_NEAR(b.epsilon, 2.0, 2e-3);
  // The linear accountant sums the pure epsilons of the ledger.
  EXPECT_NEAR(*ComputeEpsilon(b.ledger, 1e-5, AccountantKind::kLinear), b.epsilon, 1e-9);
}

TEST(PrivateBoundsTest, ComposingWithAFitAddsTheEpsilons) {
  const PrivateBounds b = *ReleaseBounds(SquareAround(0.0, 0.0, 1.0, 200, 8), 0.1, 2);
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
