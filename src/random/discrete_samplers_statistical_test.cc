// Exact distribution tests of the discrete samplers: Pearson chi-square over
// the support against the exact pmf (computed here from its closed form, not
// from the sampler), fixed seeds, size 1e-4. Label: statistical.
#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "dpem/random/discrete_samplers.h"

namespace dpem {
namespace {

constexpr int kDraws = 200000;
constexpr double kAlpha = 1e-4;
constexpr double kMinExpected = 20.0;  // Per bin; the tails are pooled.

// Exact pmf on [-limit, limit], normalised (the mass beyond is < 1e-30).
std::vector<double> Pmf(const std::function<double(long)>& unnormalised, long limit) {
  std::vector<double> p(2 * limit + 1);
  long double total = 0;
  for (long x = -limit; x <= limit; ++x) total += p[x + limit] = unnormalised(x);
  for (double& v : p) v = static_cast<double>(v / total);
  return p;
}

// Chi-square statistic of `counts` (value -> count) against `pmf` on
// [-limit, limit]: a bin per value with expected count >= kMinExpected, the
// rest pooled into two tail bins. Returns {statistic, degrees of freedom}.
std::pair<double, int> ChiSquare(const std::map<long, int>& counts, const std::vector<double>& pmf,
                                 long limit) {
  long inner = 0;
  while (inner + 1 <= limit && pmf[inner + 1 + limit] * kDraws >= kMinExpected) ++inner;
  double stat = 0, tail_expected = 0;
  int bins = 0;
  long tail_low = 0, tail_high = 0;
  for (long x = -limit; x <= limit; ++x) {
    if (std::abs(x) > inner) {
      tail_expected += pmf[x + limit];
      continue;
    }
    const double e = pmf[x + limit] * kDraws;
    const auto it = counts.find(x);
    const double o = it == counts.end() ? 0 : it->second;
    stat += (o - e) * (o - e) / e;
    ++bins;
  }
  for (const auto& [x, c] : counts) {
    if (x < -inner) tail_low += c;
    if (x > inner) tail_high += c;
  }
  const double e_tail = tail_expected / 2 * kDraws;  // Symmetric pmf.
  if (e_tail >= 5) {
    stat += (tail_low - e_tail) * (tail_low - e_tail) / e_tail +
            (tail_high - e_tail) * (tail_high - e_tail) / e_tail;
    bins += 2;
  }
  return {stat, bins - 1};
}

void ExpectChiSquareAccepts(const std::function<std::int64_t(Generator&)>& draw,
                            const std::function<double(long)>& unnormalised, long limit,
                            std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  std::map<long, int> counts;
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<long>(draw(gen))];
  const auto [stat, dof] = ChiSquare(counts, Pmf(unnormalised, limit), limit);
  const double critical =
      boost::math::quantile(boost::math::complement(boost::math::chi_squared(dof), kAlpha));
  std::printf("[chi-square] seed %llu: %.2f on %d dof (critical %.2f)\n",
              static_cast<unsigned long long>(seed), stat, dof, critical);
  EXPECT_LT(stat, critical) << dof << " degrees of freedom";
  EXPECT_GT(dof, 2);
}

class DiscreteGaussianExact : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(DiscreteGaussianExact, MatchesThePmfExactly) {
  const std::uint64_t sigma = GetParam();
  const double s2 = static_cast<double>(sigma * sigma);
  ExpectChiSquareAccepts([&](Generator& g) { return *SampleDiscreteGaussian(g, sigma); },
                         [&](long x) { return std::exp(-0.5 * x * x / s2); },
                         static_cast<long>(13 * sigma), 100 + sigma);
}

INSTANTIATE_TEST_SUITE_P(Sigmas, DiscreteGaussianExact, ::testing::Values(1, 2, 3, 10, 40));

class DiscreteLaplaceExact : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(DiscreteLaplaceExact, MatchesThePmfExactly) {
  const std::uint64_t t = GetParam();
  ExpectChiSquareAccepts([&](Generator& g) { return *SampleDiscreteLaplace(g, t); },
                         [&](long x) { return std::exp(-std::abs(static_cast<double>(x)) / t); },
                         static_cast<long>(80 * t), 200 + t);
}

INSTANTIATE_TEST_SUITE_P(Scales, DiscreteLaplaceExact, ::testing::Values(1, 2, 5, 20));

// At the mechanisms' grid scale, sigma = 2^20 + 1 (the acceptance test's
// denominators 2 sigma^2 t^2 k exceed 2^80), the support has millions of
// values: Pearson chi-square over 24 bins of width sigma / 4 on about
// [-3 sigma, 3 sigma) plus the two tails, with each bin's probability summed
// here from the pmf exp(-x^2 / (2 sigma^2)) over its integers (|x| <= 9 sigma:
// the mass beyond is below 1e-17).
TEST(DiscreteGaussianBinnedTest, MatchesThePmfAtTheGridScale) {
  constexpr long kSigma = (1L << 20) + 1;
  constexpr long kWidth = kSigma / 4;
  constexpr int kInner = 24;
  constexpr long kLow = -(kInner / 2) * kWidth;
  const double s2 = static_cast<double>(kSigma) * kSigma;
  // Bin b: 0 is the lower tail, 1..kInner the inner bins, kInner + 1 the upper tail.
  const auto bin = [&](long x) {
    if (x < kLow) return 0L;
    const long inner = (x - kLow) / kWidth;
    return inner < kInner ? inner + 1 : static_cast<long>(kInner) + 1;
  };
  std::vector<long double> mass(kInner + 2, 0.0L);
  long double total = 0;
  for (long x = -9 * kSigma; x <= 9 * kSigma; ++x) {
    const long double p = std::exp(-0.5L * static_cast<long double>(x) * x / s2);
    mass[static_cast<size_t>(bin(x))] += p;
    total += p;
  }
  Generator gen = Generator::FromSeed(131);
  std::vector<int> counts(kInner + 2, 0);
  for (int i = 0; i < kDraws; ++i) {
    ++counts[static_cast<size_t>(bin(static_cast<long>(*SampleDiscreteGaussian(gen, kSigma))))];
  }
  double stat = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    const double e = static_cast<double>(mass[b] / total) * kDraws;
    ASSERT_GE(e, 5.0) << "test design: bin " << b;
    stat += (counts[b] - e) * (counts[b] - e) / e;
  }
  const int dof = kInner + 1;
  const double critical =
      boost::math::quantile(boost::math::complement(boost::math::chi_squared(dof), kAlpha));
  std::printf("[chi-square] sigma 2^20 + 1, binned: %.2f on %d dof (critical %.2f)\n", stat, dof,
              critical);
  EXPECT_LT(stat, critical);
}

// Power: the discrete Gaussian with sigma = 3 is rejected against sigma = 3.3's pmf.
TEST(DiscreteSamplersPowerTest, ChiSquareRejectsAWrongSigma) {
  Generator gen = Generator::FromSeed(300);
  std::map<long, int> counts;
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<long>(*SampleDiscreteGaussian(gen, 3))];
  const auto pmf = Pmf([](long x) { return std::exp(-0.5 * x * x / (3.3 * 3.3)); }, 60);
  const auto [stat, dof] = ChiSquare(counts, pmf, 60);
  EXPECT_GT(stat, boost::math::quantile(
                      boost::math::complement(boost::math::chi_squared(dof), kAlpha)));
}

}  // namespace
}  // namespace dpem
