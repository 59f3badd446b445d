#include "dpem/random/generator.h"

#include <sodium.h>

#include <algorithm>
#include <concepts>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <utility>

#include <memory>

namespace dpem {
namespace {

static_assert(std::uniform_random_bit_generator<Generator>);

// The first `n` words of `gen`'s stream.
std::vector<std::uint64_t> Words(Generator& gen, std::size_t n) {
  std::vector<std::uint64_t> out(n);
  for (auto& w : out) w = gen();
  return out;
}

TEST(GeneratorTest, SameSeedGivesIdenticalStreams) {
  Generator a = Generator::FromSeed(42);
  Generator b = Generator::FromSeed(42);
  EXPECT_EQ(Words(a, 1000), Words(b, 1000));
}

TEST(GeneratorTest, DifferentSeedsGiveDifferentStreams) {
  Generator a = Generator::FromSeed(1);
  Generator b = Generator::FromSeed(2);
  const auto wa = Words(a, 1000);
  const auto wb = Words(b, 1000);
  int equal = 0;
  for (std::size_t i = 0; i < wa.size(); ++i) equal += wa[i] == wb[i];
  EXPECT_EQ(equal, 0);
}

TEST(GeneratorTest, ReportsSeed) {
  const Generator gen = Generator::FromSeed(123456789);
  ASSERT_TRUE(gen.seed().has_value());
  EXPECT_EQ(*gen.seed(), 123456789u);
  EXPECT_TRUE(gen.seeded());
}

TEST(GeneratorTest, OsEntropyIsUnseededAndVaries) {
  StatusOr<Generator> a = Generator::FromOsEntropy();
  StatusOr<Generator> b = Generator::FromOsEntropy();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(a->seed().has_value());
  EXPECT_FALSE(a->seeded());
  // Two 256-bit OS keys coincide with probability 2^-256.
  EXPECT_NE(Words(*a, 4), Words(*b, 4));
}

TEST(GeneratorTest, SplitIsDeterministicAndIndependent) {
  const Generator parent = Generator::FromSeed(7);
  Generator s1 = parent.Split(1);
  Generator s1_again = parent.Split(1);
  Generator s2 = parent.Split(2);
  Generator parent_stream = Generator::FromSeed(7);  // The parent's own stream.
  const auto w1 = Words(s1, 100);
  EXPECT_EQ(w1, Words(s1_again, 100));
  EXPECT_NE(w1, Words(s2, 100));
  EXPECT_NE(w1, Words(parent_stream, 100));
}

TEST(GeneratorTest, SplitKeepsSeedAndDoesNotAdvanceParent) {
  Generator parent = Generator::FromSeed(99);
  const std::uint64_t first = Generator::FromSeed(99)();
  const Generator child = parent.Split(0);
  EXPECT_EQ(child.seed(), std::optional<std::uint64_t>(99));
  EXPECT_EQ(parent(), first);
}

TEST(GeneratorTest, SplitsOfDifferentSeedsDiffer) {
  Generator a = Generator::FromSeed(1).Split(5);
  Generator b = Generator::FromSeed(2).Split(5);
  EXPECT_NE(Words(a, 16), Words(b, 16));
}

// Fork() advances the parent by exactly four words (the next word of the
// parent is the fifth word of a fresh same-seed stream), and consecutive
// forks, and the parent's later words, are different streams.
TEST(GeneratorTest, ForkAdvancesTheParentAndGivesFreshStreams) {
  Generator reference = Generator::FromSeed(17);
  const auto words = Words(reference, 5);
  Generator parent = Generator::FromSeed(17);
  Generator first = parent.Fork();
  EXPECT_EQ(parent(), words[4]);
  Generator second = parent.Fork();
  EXPECT_EQ(first.seed(), std::optional<std::uint64_t>(17));
  const auto a = Words(first, 16);
  const auto b = Words(second, 16);
  EXPECT_NE(a, b);
  EXPECT_NE(a, Words(parent, 16));
  // Splits of the two forks with the same id differ too (what a chunked
  // release relies on).
  Generator first_split = first.Split(0);
  Generator second_split = second.Split(0);
  EXPECT_NE(Words(first_split, 4), Words(second_split, 4));
}

// Bits() hands out the bits of one stream word, lowest first, and discards
// what is left of the word when a request does not fit in it.
TEST(GeneratorTest, BitsComeFromTheStreamWordsLowestFirst) {
  const auto words = [] {
    Generator g = Generator::FromSeed(23);
    return Words(g, 3);
  }();
  Generator gen = Generator::FromSeed(23);
  EXPECT_EQ(gen.Bits(1), words[0] & 1);
  EXPECT_EQ(gen.Bits(20), (words[0] >> 1) & 0xFFFFF);
  EXPECT_EQ(gen.Bits(43), words[0] >> 21);  // Exactly the rest of the word.
  EXPECT_EQ(gen.Bits(60), words[1] & ((std::uint64_t{1} << 60) - 1));
  EXPECT_EQ(gen.Bits(5), words[2] & 31);  // 4 bits left: discarded.
}

TEST(GeneratorTest, BitsOfAllWidthsStayInRangeAndSixtyFourIsAWord) {
  Generator gen = Generator::FromSeed(29);
  for (int count = 1; count < 64; ++count) {
    for (int i = 0; i < 100; ++i) EXPECT_LT(gen.Bits(count), std::uint64_t{1} << count);
  }
  Generator a = Generator::FromSeed(31);
  Generator b = Generator::FromSeed(31);
  EXPECT_EQ(a.Bits(64), b());
}

TEST(GeneratorTest, UniformOpen01StaysInsideOpenInterval) {
  Generator gen = Generator::FromSeed(3);
  double lo = 1.0;
  double hi = 0.0;
  for (int i = 0; i < 1000000; ++i) {
    const double u = gen.UniformOpen01();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  // Sanity: a million uniforms spread over (almost) the whole interval.
  EXPECT_LT(lo, 1e-4);
  EXPECT_GT(hi, 1.0 - 1e-4);
}

TEST(GeneratorTest, UniformOpen01UsesTop53BitsOfNextWord) {
  Generator words = Generator::FromSeed(11);
  Generator uniforms = Generator::FromSeed(11);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = words();
    const double expected = std::ldexp(static_cast<double>(x >> 11) + 0.5, -53);
    EXPECT_EQ(uniforms.UniformOpen01(), expected);
  }
}

TEST(GeneratorTest, LongStreamAcrossRefillsIsDeterministic) {
  Generator a = Generator::FromSeed(5);
  Generator b = Generator::FromSeed(5);
  // 100,003 words cross more than 1,500 refills of 64 words.
  EXPECT_EQ(Words(a, 100003), Words(b, 100003));
  // Moving a generator mid-buffer keeps its position in the stream.
  Generator c = std::move(a);
  EXPECT_EQ(Words(c, 200), Words(b, 200));
}

TEST(GeneratorTest, IsNotCopyable) {
  // A copy would replay the same noise in two releases.
  static_assert(!std::is_copy_constructible_v<Generator>);
  static_assert(!std::is_copy_assignable_v<Generator>);
  static_assert(std::is_move_constructible_v<Generator>);
}

// A move carries the stream on exactly (the moved-to generator continues
// where the source was, buffered words and Bits' reservoir included) and
// leaves the source spent: any draw, fork or split of it ends the process
// rather than replaying the moved-to stream (review finding, 2026-11-24).
TEST(GeneratorTest, AMoveCarriesTheStreamOnAndSpendsTheSource) {
  Generator reference = Generator::FromSeed(31);
  Generator source = Generator::FromSeed(31);
  EXPECT_EQ(source(), reference());
  EXPECT_EQ(source.Bits(5), reference.Bits(5));
  Generator moved(std::move(source));
  Generator assigned = Generator::FromSeed(99);
  assigned = std::move(moved);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(assigned.Bits(7), reference.Bits(7)) << i;
  for (int i = 0; i < 200; ++i) ASSERT_EQ(assigned(), reference()) << i;
  EXPECT_EQ(assigned.seed(), std::optional<std::uint64_t>(31));
}

TEST(GeneratorDeathTest, AMovedFromGeneratorIsNeverDrawnFrom) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto moved_from = [] {
    auto source = std::make_unique<Generator>(Generator::FromSeed(32));
    Generator taken(std::move(*source));
    return source;
  };
  EXPECT_DEATH((*moved_from())(), "moved-from Generator");
  EXPECT_DEATH(moved_from()->Bits(3), "moved-from Generator");
  EXPECT_DEATH(moved_from()->Fork(), "moved-from Generator");
  EXPECT_DEATH(moved_from()->Split(1), "moved-from Generator");
}

// An independent path to the same definition: BLAKE2b-256 of the domain
// string and the little-endian seed keys ChaCha20 (zero nonce, counter 0).
std::vector<std::uint64_t> ReferenceWords(std::uint64_t seed,
                                          std::size_t n_words) {
  EXPECT_GE(sodium_init(), 0);
  constexpr std::string_view kDomain = "dpem.generator.seed.v1";
  std::vector<unsigned char> message(kDomain.begin(), kDomain.end());
  for (int i = 0; i < 8; ++i) message.push_back((seed >> (8 * i)) & 0xff);
  unsigned char key[32];
  crypto_generichash(key, sizeof(key), message.data(), message.size(),
                     nullptr, 0);
  const unsigned char nonce[crypto_stream_chacha20_NONCEBYTES] = {};
  std::vector<unsigned char> stream(8 * n_words);
  crypto_stream_chacha20(stream.data(), stream.size(), nonce, key);
  std::vector<std::uint64_t> out(n_words, 0);
  for (std::size_t w = 0; w < n_words; ++w) {
    for (int b = 7; b >= 0; --b) out[w] = (out[w] << 8) | stream[8 * w + b];
  }
  return out;
}

TEST(GeneratorTest, KnownAnswerMatchesDirectLibsodiumKeystream) {
  Generator gen = Generator::FromSeed(0);
  const std::vector<std::uint64_t> reference = ReferenceWords(0, 1);
  EXPECT_EQ(gen(), reference[0]);
}

TEST(GeneratorTest, StreamMatchesContiguousKeystreamAcrossRefills) {
  // 200 words span four refills: the block counter must advance by exactly
  // the blocks consumed, making the stream one contiguous ChaCha20 keystream.
  Generator gen = Generator::FromSeed(0xdeadbeef);
  EXPECT_EQ(Words(gen, 200), ReferenceWords(0xdeadbeef, 200));
}

}  // namespace
}  // namespace dpem
