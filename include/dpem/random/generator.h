// The random bit generator behind every noise sample in dpem.
//
// Generator is a cryptographically secure pseudo-random generator: the
// ChaCha20 stream cipher (libsodium) keyed either from the operating system's
// entropy source (the default, for production) or from a 64-bit seed (for
// reproducible experiments and tests; a seeded stream is predictable by anyone
// who knows the seed, so outputs made with one record that fact, and every
// private fit made with one marks its guarantee void).
//
// Every sampler in dpem takes a Generator& explicitly; there is no global
// generator. Generator satisfies std::uniform_random_bit_generator.
//
// Thread safety: a Generator is not thread-safe; give each thread its own:
// Fork() once (it advances this generator), then Split(i) of the fork for
// thread or chunk i. Split() alone does not advance the generator, so two
// Split(i) with no draw in between give the same stream.
#ifndef DPEM_RANDOM_GENERATOR_H_
#define DPEM_RANDOM_GENERATOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "dpem/status.h"

namespace dpem {

class Collective;  // dpem/engine/collective.h

// What outputs made with a seeded generator say about it.
inline constexpr const char* kSeededGeneratorWarning =
    "seeded generator: the noise is reproducible by anyone who knows the seed; "
    "not for production releases";

class Generator {
 public:
  using result_type = std::uint64_t;

  // A generator keyed with 256 bits from the operating system's CSPRNG
  // (libsodium's randombytes_buf). Fails only if libsodium cannot initialise.
  static StatusOr<Generator> FromOsEntropy();

  // A reproducible generator: the key is a cryptographic hash of `seed`, so
  // nearby seeds give unrelated streams. Not for production use: noise drawn
  // from it is a function of the seed alone, so a release made with it is
  // not differentially private (the fits mark their guarantee void).
  static Generator FromSeed(std::uint64_t seed);

  // Not copyable: a copy would replay the same keystream, so two releases
  // would carry identical noise. Move it, or Fork() it for another stream.
  // A move leaves the source spent (its key wiped): drawing from, forking or
  // splitting a moved-from generator ends the process (std::abort, after one
  // line on stderr) instead of replaying the moved-to generator's stream.
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  Generator(Generator&& other) noexcept;
  Generator& operator=(Generator&& other) noexcept;

  // The seed this generator was made from, or nullopt for an OS-keyed one.
  // Model files and CLI outputs record it.
  std::optional<std::uint64_t> seed() const { return seed_; }
  bool seeded() const { return seed_.has_value(); }

  // The next 64 uniformly random bits.
  result_type operator()() {
    if (next_ == kBufferWords) Refill();
    return buffer_[next_++];
  }

  // `count` uniformly random bits (1 <= count <= 64) in the low bits of the
  // result, the others zero. The bits come from a reservoir of one stream
  // word at a time: when it holds fewer than `count`, its remaining bits are
  // discarded (never used) and the next word refills it, so no bit is ever
  // used twice. For exact samplers that need a few bits per decision
  // (random/discrete_samplers.h); a full word from operator() leaves the
  // reservoir as it is.
  std::uint64_t Bits(int count) {
    if (count > reservoir_bits_) {
      reservoir_ = (*this)();
      reservoir_bits_ = 64;
    }
    const std::uint64_t out =
        count == 64 ? reservoir_ : reservoir_ & ((std::uint64_t{1} << count) - 1);
    reservoir_ = count == 64 ? 0 : reservoir_ >> count;
    reservoir_bits_ -= count;
    return out;
  }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() {
    return std::numeric_limits<result_type>::max();
  }

  // A uniform double in the open interval (0, 1): 53 random bits, offset by
  // half a unit in the last place, so that 0 and 1 never occur.
  double UniformOpen01();

  // A new generator whose stream is independent of this one's and of other
  // Split() results, derived deterministically from this generator's key and
  // `stream_id` (e.g. a thread index). Does not advance this generator. The
  // new generator is never shared (ShareFromRank0).
  //
  // Because Split does not advance this generator, two Split(i) calls with
  // no draw in between return the SAME stream: noise drawn from both would
  // be identical, which breaks privacy. Code that splits streams for a
  // release must split them from a Fork() made for that release.
  Generator Split(std::uint64_t stream_id) const;

  // A new generator keyed by a hash of the next 256 bits of this
  // generator's stream (it advances this generator by four words). Every
  // Fork() therefore has a fresh key, independent of this generator's later
  // output and of every other Fork(): split per-release streams from it
  // (Fork().Split(i)). Keeps the seed. Of a shared generator
  // (ShareFromRank0) the fork has the same key on every rank (the words are
  // rank 0's), so every rank draws the same noise from it and its splits;
  // the fork itself is not shared (its draws are no collective step).
  Generator Fork();

  // From the next refill on, the words of this generator on every rank of
  // `collective` are rank 0's: rank 0 draws them from its own key and sends
  // them in blocks to the other ranks, which never use
  // theirs. Every release of a distributed fit thus has its noise drawn
  // once, by rank 0's CSPRNG, and every rank computes the same released
  // values (docs/distributed.md). Each refill is a collective step: every
  // rank must draw the same number of words in the same order, as the
  // ranks of one fit do. The words come in blocks of kSharedBlockWords,
  // one collective step each, and are the words rank 0's generator would
  // give unshared. A refill that the collective cannot complete ends
  // the process (std::abort, after one line on stderr): the ranks cannot
  // go on with different streams. Null, or a single rank, changes nothing.
  // Call it before the first draw; `collective` must outlive the draws.
  void ShareFromRank0(const Collective* collective);

 private:
  Generator(const std::array<unsigned char, 32>& key,
            std::optional<std::uint64_t> seed);
  void Refill();
  // Wipes the key and buffered words and marks this generator spent (the
  // source of a move); DieIfSpent() ends the process if it is.
  void MarkSpent();
  void DieIfSpent() const;
  void FillFromKeystream(std::uint64_t* out, std::size_t words);
  void RefillFromSharedBlock();

  // Words per collective step of a shared stream (64 KiB).
  static constexpr std::size_t kSharedBlockWords = 8192;

  static constexpr std::size_t kBufferWords = 64;
  static constexpr std::uint64_t kBlocksPerRefill = kBufferWords * 8 / 64;
  std::array<unsigned char, 32> key_{};
  // The ChaCha20 block counter of the next refill; each refill consumes
  // kBlocksPerRefill 64-byte blocks.
  std::uint64_t block_counter_ = 0;
  std::array<std::uint64_t, kBufferWords> buffer_{};
  std::size_t next_ = kBufferWords;  // Index of the next unread word.
  std::optional<std::uint64_t> seed_;
  std::uint64_t reservoir_ = 0;  // Unused bits for Bits(), lowest first.
  int reservoir_bits_ = 0;       // How many.
  const Collective* shared_ = nullptr;  // Rank 0's stream on every rank.
  std::vector<std::uint64_t> shared_words_;  // The latest shared block.
  std::size_t shared_next_ = 0;              // Its next unread word.
  bool spent_ = false;                       // Moved from (see the move).
};

}  // namespace dpem

#endif  // DPEM_RANDOM_GENERATOR_H_
