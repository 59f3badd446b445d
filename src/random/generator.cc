// ChaCha20 (libsodium) behind dpem::Generator. See generator.h.
#include "dpem/random/generator.h"

#include <sodium.h>

#include "dpem/engine/collective.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace dpem {
namespace {

using Key = std::array<unsigned char, 32>;

// Domain-separation prefixes of the two key derivations; changing either
// changes every seeded stream.
constexpr std::string_view kSeedDomain = "dpem.generator.seed.v1";
constexpr std::string_view kSplitDomain = "dpem.generator.split.v1";
constexpr std::string_view kForkDomain = "dpem.generator.fork.v1";

static_assert(crypto_stream_chacha20_KEYBYTES == 32);
static_assert(crypto_generichash_BYTES == 32);

// Appends the 8 bytes of `x`, least significant first.
void AppendLittleEndian(std::uint64_t x, std::vector<unsigned char>& out) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<unsigned char>(x >> (8 * i)));
  }
}

// BLAKE2b-256 of `message`.
Key Blake2b256(const std::vector<unsigned char>& message) {
  Key key{};
  crypto_generichash(key.data(), key.size(), message.data(), message.size(),
                     nullptr, 0);
  return key;
}

// sodium_init() or abort: for FromSeed, which cannot return a Status.
void InitSodiumOrDie() {
  if (sodium_init() < 0) {
    std::fputs("dpem: libsodium failed to initialise (sodium_init)\n", stderr);
    std::abort();
  }
}

}  // namespace

StatusOr<Generator> Generator::FromOsEntropy() {
  if (sodium_init() < 0) {
    return InternalError("libsodium failed to initialise (sodium_init)");
  }
  Key key{};
  randombytes_buf(key.data(), key.size());
  return Generator(key, std::nullopt);
}

Generator Generator::FromSeed(std::uint64_t seed) {
  InitSodiumOrDie();
  std::vector<unsigned char> message(kSeedDomain.begin(), kSeedDomain.end());
  AppendLittleEndian(seed, message);
  return Generator(Blake2b256(message), seed);
}

Generator::Generator(const std::array<unsigned char, 32>& key,
                     std::optional<std::uint64_t> seed)
    : key_(key), seed_(seed) {}

Generator::Generator(Generator&& other) noexcept { *this = std::move(other); }

Generator& Generator::operator=(Generator&& other) noexcept {
  if (this == &other) return *this;
  key_ = other.key_;
  block_counter_ = other.block_counter_;
  buffer_ = other.buffer_;
  next_ = other.next_;
  seed_ = other.seed_;
  reservoir_ = other.reservoir_;
  reservoir_bits_ = other.reservoir_bits_;
  shared_ = other.shared_;
  shared_words_ = std::move(other.shared_words_);
  shared_next_ = other.shared_next_;
  spent_ = other.spent_;
  other.MarkSpent();
  return *this;
}

void Generator::MarkSpent() {
  sodium_memzero(key_.data(), key_.size());
  sodium_memzero(buffer_.data(), sizeof(buffer_));
  next_ = kBufferWords;  // The next draw refills, and Refill() dies.
  reservoir_ = 0;
  reservoir_bits_ = 0;
  shared_ = nullptr;
  shared_words_.clear();
  shared_next_ = 0;
  spent_ = true;
}

void Generator::DieIfSpent() const {
  if (!spent_) return;
  std::fputs("dpem: a moved-from Generator was used (it would replay another's stream)\n",
             stderr);
  std::abort();
}

double Generator::UniformOpen01() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;  // 2^-53
  return (static_cast<double>((*this)() >> 11) + 0.5) * kTwoToMinus53;
}

Generator Generator::Split(std::uint64_t stream_id) const {
  DieIfSpent();
  std::vector<unsigned char> message(kSplitDomain.begin(), kSplitDomain.end());
  message.insert(message.end(), key_.begin(), key_.end());
  AppendLittleEndian(stream_id, message);
  return Generator(Blake2b256(message), seed_);
}

Generator Generator::Fork() {
  std::vector<unsigned char> message(kForkDomain.begin(), kForkDomain.end());
  for (int i = 0; i < 4; ++i) AppendLittleEndian((*this)(), message);
  return Generator(Blake2b256(message), seed_);
}

void Generator::ShareFromRank0(const Collective* collective) {
  shared_ = IsSingleProcess(collective) ? nullptr : collective;
}

void Generator::Refill() {
  DieIfSpent();
  if (shared_ != nullptr) {
    RefillFromSharedBlock();
    return;
  }
  FillFromKeystream(buffer_.data(), kBufferWords);
  next_ = 0;
}

// The next `words` words of this generator's keystream (ChaCha20 from
// block_counter_ on, little-endian words). Consecutive calls continue one
// keystream, so any split of it into calls gives the same words.
void Generator::FillFromKeystream(std::uint64_t* out, std::size_t words) {
  static constexpr std::array<unsigned char, kBufferWords * 8> kZeros{};
  static constexpr std::array<unsigned char, crypto_stream_chacha20_NONCEBYTES>
      kNonce{};
  std::array<unsigned char, kBufferWords * 8> bytes;  // The keystream.
  for (std::size_t done = 0; done < words; done += kBufferWords) {
    crypto_stream_chacha20_xor_ic(bytes.data(), kZeros.data(), bytes.size(),
                                  kNonce.data(), block_counter_, key_.data());
    block_counter_ += kBlocksPerRefill;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out + done, bytes.data(), bytes.size());  // The same little-endian words.
      continue;
    }
    for (std::size_t w = 0; w < kBufferWords; ++w) {
      std::uint64_t word = 0;
      for (std::size_t b = 0; b < 8; ++b) {
        word |= static_cast<std::uint64_t>(bytes[8 * w + b]) << (8 * b);
      }
      out[done + w] = word;
    }
  }
}

namespace {
[[noreturn]] void DieOnBrokenStream(const Status& s) {
  std::fprintf(stderr, "dpem: the ranks' shared random stream broke: %s\n",
               s.message().c_str());
  std::abort();
}
}  // namespace

// A shared stream comes in blocks of kSharedBlockWords words, one collective
// step each: rank 0 draws them from its keystream (the same words, in the
// same order, as its unshared refills would be) and broadcasts them; every
// rank then refills its buffer from the block.
void Generator::RefillFromSharedBlock() {
  if (shared_next_ == shared_words_.size()) {
    shared_words_.resize(kSharedBlockWords);
    if (shared_->rank() == 0) FillFromKeystream(shared_words_.data(), kSharedBlockWords);
    const std::span<unsigned char> bytes(reinterpret_cast<unsigned char*>(shared_words_.data()),
                                         kSharedBlockWords * sizeof(std::uint64_t));
    if (const Status s = shared_->Broadcast(bytes); !s.ok()) DieOnBrokenStream(s);
    shared_next_ = 0;
  }
  std::copy_n(shared_words_.begin() + static_cast<std::ptrdiff_t>(shared_next_), kBufferWords,
              buffer_.begin());
  shared_next_ += kBufferWords;
  next_ = 0;
}

}  // namespace dpem
