// Unit tests of the exact integer samplers: parameter checks, determinism,
// and the Bernoulli(exp(-gamma)) building block against exp(-gamma) (fixed
// seeds; binomial tolerance of 5.5 standard deviations, so each check is
// deterministic and fails only if the sampler is wrong).
#include "dpem/random/discrete_samplers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace dpem {
namespace {

TEST(SampleUniformBelowTest, StaysInRange) {
  Generator gen = Generator::FromSeed(1);
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{7},
                          (std::uint64_t{1} << 63) + 1, ~std::uint64_t{0}}) {
    for (int i = 0; i < 1000; ++i) EXPECT_LT(SampleUniformBelow(gen, n), n) << n;
  }
}

TEST(SampleUniformBelowTest, HitsEveryValueOfASmallRange) {
  Generator gen = Generator::FromSeed(2);
  int seen[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 5000; ++i) ++seen[SampleUniformBelow(gen, 5)];
  for (int c : seen) EXPECT_NEAR(c, 1000, 5.5 * std::sqrt(5000 * 0.2 * 0.8));
}

// Each of 3 values has probability 1/3 (a range that is not a power of two,
// so draws are rejected), and the top value of a 64-bit range occurs.
TEST(SampleUniformBelowTest, FrequenciesOfThreeValuesAreEqual) {
  Generator gen = Generator::FromSeed(21);
  constexpr int kDraws = 90000;
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < kDraws; ++i) ++seen[SampleUniformBelow(gen, 3)];
  for (int c : seen) EXPECT_NEAR(c, kDraws / 3.0, 5.5 * std::sqrt(kDraws * (1.0 / 3) * (2.0 / 3)));
  int high = 0;  // P(u >= 2^63) = 1/2 for n = 2^64 - 1.
  for (int i = 0; i < 1000; ++i) high += SampleUniformBelow(gen, ~std::uint64_t{0}) >> 63;
  EXPECT_NEAR(high, 500, 5.5 * std::sqrt(250.0));
}

// Lemire's rejection is visible only when n is a large fraction of 2^64:
// for n = 3 2^62 the words x = 4m + r map to 3m + (0, 0, 1, 2), so without
// the rejection of the words whose low product is below 2^64 mod n = 2^62,
// u mod 3 would be 0 with probability 1/2. With it, each residue has 1/3.
// (The test above, at n = 3, cannot see a wrong threshold: its bias is 2^-63.)
TEST(SampleUniformBelowTest, ResiduesOfThreeQuartersOf2To64AreEqual) {
  Generator gen = Generator::FromSeed(22);
  constexpr int kDraws = 90000;
  const std::uint64_t n = (std::uint64_t{1} << 62) * 3;
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t u = SampleUniformBelow(gen, n);
    ASSERT_LT(u, n);
    ++seen[u % 3];
  }
  for (int c : seen) EXPECT_NEAR(c, kDraws / 3.0, 5.5 * std::sqrt(kDraws * (1.0 / 3) * (2.0 / 3)));
}

TEST(SampleBernoulliExpNegTest, RejectsAZeroDenominator) {
  Generator gen = Generator::FromSeed(3);
  EXPECT_EQ(SampleBernoulliExpNeg(gen, 1, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(SampleBernoulliExpNegTest, GammaZeroIsAlwaysOne) {
  Generator gen = Generator::FromSeed(4);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(*SampleBernoulliExpNeg(gen, 0, 7));
}

TEST(SampleBernoulliExpNegTest, HugeGammaIsZero) {
  Generator gen = Generator::FromSeed(5);  // P(one) = e^-1000.
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(*SampleBernoulliExpNeg(gen, 3000, 3));
}

// Frequencies of 200000 draws against exp(-n/d), for gamma below, at and
// above 1, with and without an integer part.
TEST(SampleBernoulliExpNegTest, FrequencyMatchesExpMinusGamma) {
  struct Case { std::uint64_t n, d; };
  Generator gen = Generator::FromSeed(6);
  constexpr int kDraws = 200000;
  for (const Case c : {Case{1, 2}, Case{1, 1}, Case{3, 2}, Case{7, 3}, Case{5, 1},
                       Case{123456789, 1000000000},
                       // Denominators near 2^64: the trials' d k need 128 bits.
                       Case{(std::uint64_t{1} << 63) - 1, ~std::uint64_t{0}},
                       Case{~std::uint64_t{0} - 12345, (std::uint64_t{1} << 62) + 3}}) {
    const double p = std::exp(-static_cast<double>(c.n) / static_cast<double>(c.d));
    int ones = 0;
    for (int i = 0; i < kDraws; ++i) ones += *SampleBernoulliExpNeg(gen, c.n, c.d) ? 1 : 0;
    EXPECT_NEAR(ones, kDraws * p, 5.5 * std::sqrt(kDraws * p * (1 - p)))
        << "gamma = " << c.n << "/" << c.d;
  }
}

TEST(DiscreteSamplersTest, RejectScalesOutOfRange) {
  Generator gen = Generator::FromSeed(7);
  for (std::uint64_t bad : {std::uint64_t{0}, kMaxDiscreteNoiseScale + 1}) {
    EXPECT_EQ(SampleDiscreteLaplace(gen, bad).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(SampleDiscreteGaussian(gen, bad).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(SampleDiscreteGaussian(gen, kMaxDiscreteNoiseScale).ok());
  EXPECT_TRUE(SampleDiscreteLaplace(gen, kMaxDiscreteNoiseScale).ok());
}

TEST(DiscreteSamplersTest, AreDeterministicGivenTheSeed) {
  Generator a = Generator::FromSeed(8), b = Generator::FromSeed(8);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(*SampleDiscreteGaussian(a, 1 << 20), *SampleDiscreteGaussian(b, 1 << 20));
    EXPECT_EQ(*SampleDiscreteLaplace(a, 5), *SampleDiscreteLaplace(b, 5));
  }
}

// At the mechanisms' grid scale (sigma in [2^20, 2^21]) the sample standard
// deviation is sigma to within 5.5 standard errors (sd of s^2 ~ s^2 sqrt(2/n)).
TEST(DiscreteSamplersTest, LargeSigmaHasTheRightSpread) {
  Generator gen = Generator::FromSeed(9);
  constexpr std::uint64_t kSigma = 1500001;
  constexpr int kDraws = 20000;
  double sum2 = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double y = static_cast<double>(*SampleDiscreteGaussian(gen, kSigma));
    sum2 += y * y;
  }
  const double s2 = static_cast<double>(kSigma) * kSigma;
  EXPECT_NEAR(sum2 / kDraws / s2, 1.0, 5.5 * std::sqrt(2.0 / kDraws));
}

}  // namespace
}  // namespace dpem
