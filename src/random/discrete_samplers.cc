// Exact integer samplers of Canonne, Kamath and Steinke (2020). See
// discrete_samplers.h.
#include "dpem/random/discrete_samplers.h"

#include <bit>
#include <string>

namespace dpem {
namespace {

__extension__ typedef unsigned __int128 U128;  // GCC and Clang.

constexpr U128 kU128Max = ~U128{0};
// Proposals at least this large are rejected (see the header).
constexpr std::uint64_t kMaxProposal = std::uint64_t{1} << 38;

// Number of significant bits of x.
int BitWidth(U128 x) {
  const auto high = static_cast<std::uint64_t>(x >> 64);
  if (high != 0) return 64 + std::bit_width(high);
  return std::bit_width(static_cast<std::uint64_t>(x));
}

// A uniform integer in [0, n), n >= 1, from as many 64-bit words as needed.
U128 UniformBelow128(Generator& gen, U128 n) {
  const int bits = BitWidth(n - 1);
  if (bits == 0) return 0;
  const U128 mask = bits >= 128 ? kU128Max : ((U128{1} << bits) - 1);
  while (true) {
    U128 u = gen();
    if (bits > 64) u |= U128{gen()} << 64;
    u &= mask;
    if (u < n) return u;
  }
}

// Bernoulli(n / d), 0 <= n <= d, d >= 1.
bool BernoulliRational(Generator& gen, U128 n, U128 d) {
  return UniformBelow128(gen, d) < n;
}

// Bernoulli(exp(-n/d)) for n <= d (CKS Alg. 1, gamma in [0, 1]).
bool BernoulliExpNegAtMostOne(Generator& gen, U128 n, U128 d) {
  U128 k = 1;
  while (true) {
    if (d > kU128Max / (k + 1)) break;  // Reached with probability 1/k!: see header.
    if (!BernoulliRational(gen, n, d * k)) break;
    ++k;
  }
  return (k & 1) == 1;
}

// Bernoulli(exp(-n/d)) for any n >= 0, d >= 1 (CKS Alg. 1).
bool BernoulliExpNeg(Generator& gen, U128 n, U128 d) {
  for (U128 i = n / d; i > 0; --i) {
    if (!BernoulliExpNegAtMostOne(gen, 1, 1)) return false;
  }
  return BernoulliExpNegAtMostOne(gen, n % d, d);
}

// CKS Alg. 2 with s = 1: the discrete Laplace with scale t.
std::int64_t DiscreteLaplace(Generator& gen, std::uint64_t t) {
  while (true) {
    const std::uint64_t u = SampleUniformBelow(gen, t);
    if (!BernoulliExpNeg(gen, u, t)) continue;
    std::uint64_t v = 0;
    while (BernoulliExpNegAtMostOne(gen, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = (gen() & 1) == 1;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

Status CheckScale(const char* function, std::uint64_t scale) {
  if (scale >= 1 && scale <= kMaxDiscreteNoiseScale) return OkStatus();
  return InvalidArgumentError(std::string(function) + ": scale must be in [1, 2^24], got " +
                              std::to_string(scale));
}

}  // namespace

std::uint64_t SampleUniformBelow(Generator& gen, std::uint64_t n) {
  return n <= 1 ? 0 : static_cast<std::uint64_t>(UniformBelow128(gen, n));
}

StatusOr<bool> SampleBernoulliExpNeg(Generator& gen, std::uint64_t numerator,
                                     std::uint64_t denominator) {
  if (denominator == 0) {
    return InvalidArgumentError("SampleBernoulliExpNeg: denominator must be >= 1");
  }
  return BernoulliExpNeg(gen, numerator, denominator);
}

StatusOr<std::int64_t> SampleDiscreteLaplace(Generator& gen, std::uint64_t scale) {
  DPEM_RETURN_IF_ERROR(CheckScale("SampleDiscreteLaplace", scale));
  return DiscreteLaplace(gen, scale);
}

StatusOr<std::int64_t> SampleDiscreteGaussian(Generator& gen, std::uint64_t sigma) {
  DPEM_RETURN_IF_ERROR(CheckScale("SampleDiscreteGaussian", sigma));
  const U128 s2 = U128{sigma} * sigma;
  const std::uint64_t t = sigma + 1;  // floor(sigma) + 1.
  const U128 denominator = 2 * s2 * t * t;
  while (true) {
    const std::int64_t y = DiscreteLaplace(gen, t);
    const std::uint64_t abs_y =
        y < 0 ? static_cast<std::uint64_t>(-y) : static_cast<std::uint64_t>(y);
    if (abs_y >= kMaxProposal) continue;  // See the header.
    // gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2) = (|Y| t - sigma^2)^2 / (2 sigma^2 t^2).
    const U128 yt = U128{abs_y} * t;
    const U128 diff = yt >= s2 ? yt - s2 : s2 - yt;
    if (BernoulliExpNeg(gen, diff * diff, denominator)) return y;
  }
}

}  // namespace dpem
