// Exhaustive tests of the exact discrete samplers' building blocks: the real
// discrete_samplers.cc, compiled against a scripted Generator
// (testing/scripted_generator), driven through every outcome of its draws.
//
// - BernoulliRational(n, d) compares a uniform U in [0, 1) with n/d digit by
//   digit. Enumerating every outcome of its draws up to B random bits, the
//   outcomes answering "true" must have total probability EXACTLY
//   floor(n 2^B / d) / 2^B (the first B digits of U below those of n/d), the
//   rest splitting into "false" and undecided: so P(true) = n/d, not merely
//   close. Both paths: d <= 2^56 (eight digits per draw) and d > 2^56 (one).
// - UniformBelow64(n) (Lemire): a word x is rejected iff its low product
//   x n mod 2^64 is below 2^64 mod n, and otherwise gives floor(x n / 2^64).
#include "random/discrete_samplers.cc"  // NOLINT: the internal functions.

#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <vector>

namespace dpem {
namespace {

using boost::multiprecision::cpp_int;

cpp_int Big(U128 x) {
  return (cpp_int(static_cast<std::uint64_t>(x >> 64)) << 64) |
         cpp_int(static_cast<std::uint64_t>(x));
}

struct Enumerated {
  cpp_int yes, no, undecided;  // In units of 2^-max_bits.
};

// Every outcome of BernoulliRational(n, d)'s draws up to max_bits bits.
Enumerated EnumerateBernoulliRational(U128 n, U128 d, int max_bits) {
  Enumerated out;
  struct Node {
    std::vector<std::uint64_t> script;
    int bits;
  };
  std::vector<Node> stack{{{}, 0}};
  while (!stack.empty()) {
    Node node = std::move(stack.back());
    stack.pop_back();
    Generator gen(node.script);
    try {
      const bool result = BernoulliRational(gen, n, d);
      (result ? out.yes : out.no) += cpp_int(1) << (max_bits - node.bits);
    } catch (const ScriptExhausted& need) {
      EXPECT_LE(need.bits, 8) << "a Bernoulli digit comparison asked for a whole word";
      if (need.bits > 8) return out;
      if (node.bits + need.bits > max_bits) {
        out.undecided += cpp_int(1) << (max_bits - node.bits);
        continue;
      }
      for (std::uint64_t v = 0; v < (std::uint64_t{1} << need.bits); ++v) {
        Node child{node.script, node.bits + need.bits};
        child.script.push_back(v);
        stack.push_back(std::move(child));
      }
    }
  }
  return out;
}

void ExpectExactBernoulli(U128 n, U128 d, int max_bits) {
  const Enumerated e = EnumerateBernoulliRational(n, d, max_bits);
  const cpp_int total = cpp_int(1) << max_bits;
  const cpp_int expected_yes = n >= d ? total : (Big(n) << max_bits) / Big(d);
  EXPECT_EQ(e.yes + e.no + e.undecided, total) << Big(n) << "/" << Big(d);
  EXPECT_EQ(e.yes, expected_yes) << Big(n) << "/" << Big(d);
  // What is undecided is at most one outcome of the last draw.
  EXPECT_LE(e.undecided * 256, total) << Big(n) << "/" << Big(d);
}

TEST(BernoulliRationalExhaustiveTest, EveryRatioWithASmallDenominatorIsExact) {
  for (std::uint64_t d = 1; d <= 40; ++d) {
    for (std::uint64_t n = 0; n <= d; ++n) ExpectExactBernoulli(n, d, 40);
  }
}

TEST(BernoulliRationalExhaustiveTest, DenominatorsUpTo2To56AreExact) {
  const std::uint64_t two56 = std::uint64_t{1} << 56;
  for (const std::uint64_t d : {std::uint64_t{255}, std::uint64_t{256}, std::uint64_t{257},
                                (std::uint64_t{1} << 32) + 1, (std::uint64_t{1} << 55) + 1,
                                two56 - 3, two56 - 1, two56}) {
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, d / 3, d / 2, d / 2 + 1,
                                  (d / 7) * 5 + 3, d - 1, d}) {
      if (n <= d) ExpectExactBernoulli(n, d, 48);
    }
  }
}

TEST(BernoulliRationalExhaustiveTest, DenominatorsAbove2To56AreExact) {
  const U128 two56 = U128{1} << 56;
  for (const U128 d : {two56 + 1, two56 * 3 + 7, ~U128{0} >> 64, (U128{1} << 64) + 1,
                       (U128{1} << 100) + 12345, U128{1} << 127, (U128{1} << 127) + 1,
                       ~U128{0} - 1, ~U128{0}}) {
    for (const U128 n : {U128{0}, U128{1}, d / 3, d / 2, d / 2 + 1, (d / 7) * 5 + 3, d - 1, d}) {
      ExpectExactBernoulli(n, d, 72);
    }
  }
}

// Lemire's rule, word by word: script one word x (and a marker word after it).
void ExpectLemireRule(std::uint64_t n, std::uint64_t x) {
  // Accepted for every n >= 2 (its low product 2^64 - n is >= 2^64 mod n): gives n - 1.
  constexpr std::uint64_t kMarker = ~std::uint64_t{0};
  Generator gen({x, kMarker});
  const std::uint64_t out = UniformBelow64(gen, n);
  const U128 product = U128{x} * n;
  const auto low = static_cast<std::uint64_t>(product);
  const std::uint64_t threshold = static_cast<std::uint64_t>((U128{1} << 64) % n);
  const bool rejected = n > 1 && low < threshold;
  if (n <= 1) {
    EXPECT_EQ(out, 0u);
  } else if (rejected) {
    EXPECT_EQ(gen.used(), 2u) << "n " << n << " x " << x;  // Drew the marker.
    EXPECT_EQ(out, n - 1);
  } else {
    EXPECT_EQ(gen.used(), 1u) << "n " << n << " x " << x;
    EXPECT_EQ(out, static_cast<std::uint64_t>(product >> 64)) << "n " << n << " x " << x;
  }
}

TEST(UniformBelowExhaustiveTest, RejectsExactlyTheWordsOfLemiresRule) {
  const std::uint64_t top = ~std::uint64_t{0};
  for (const std::uint64_t n : {std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{7},
                                std::uint64_t{1000003}, (std::uint64_t{1} << 24) + 1,
                                (std::uint64_t{1} << 62) * 3, (std::uint64_t{1} << 63) + 1, top - 1,
                                top}) {
    const std::uint64_t threshold = static_cast<std::uint64_t>((U128{1} << 64) % n);
    // Words whose low product lands just below, at and above the threshold,
    // and in the run of small low products.
    std::vector<std::uint64_t> words = {0, 1, 2, 3, top, top - 1};
    // x with x n = threshold - 1, threshold, threshold + 1 (mod 2^64), when n is odd.
    if (n % 2 == 1) {
      U128 inverse = 1;  // n^-1 mod 2^64 by Newton's iteration.
      for (int i = 0; i < 7; ++i) inverse = inverse * (2 - U128{n} * inverse);
      const auto inv = static_cast<std::uint64_t>(inverse);
      for (const std::uint64_t target : {threshold - 1, threshold, threshold + 1, n - 1, n}) {
        words.push_back(inv * target);
      }
    }
    std::uint64_t state = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 2000; ++i) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      words.push_back(state);
    }
    for (const std::uint64_t x : words) ExpectLemireRule(n, x);
  }
}

}  // namespace
}  // namespace dpem
