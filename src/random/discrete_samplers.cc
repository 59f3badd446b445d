// Exact integer samplers of Canonne, Kamath and Steinke (2020). See
// discrete_samplers.h.
#include "dpem/random/discrete_samplers.h"

#include <bit>
#include <string>

namespace dpem {
namespace {

__extension__ typedef unsigned __int128 U128;  // GCC and Clang.

// Proposals at least this large are rejected (see the header).
constexpr std::uint64_t kMaxProposal = std::uint64_t{1} << 38;

// A uniform integer in [0, n), n >= 1, exactly: Lemire's multiply-and-reject
// ("Fast random integer generation in an interval", ACM TOMACS 2019, Alg. 5):
// for a uniform 64-bit word x, floor(x n / 2^64) is uniform once the words
// whose low product (x n mod 2^64) is below 2^64 mod n are rejected, which
// happens with probability below n / 2^64 (so the branch is predictable).
std::uint64_t UniformBelow64(Generator& gen, std::uint64_t n) {
  if (n <= 1) return 0;
  U128 product = U128{gen()} * n;
  auto low = static_cast<std::uint64_t>(product);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n.
    while (low < threshold) {
      product = U128{gen()} * n;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

// The largest denominator of BernoulliRationalSmall.
constexpr std::uint64_t kSmallDenominator = std::uint64_t{1} << 56;

// BernoulliRational for d <= 2^56, eight digits at a time: the next eight
// digits of p are floor(256 rem / d) (rem < d, so 256 rem < 2^64), and U's
// eight digits decide unless they are equal (probability 1/256). One 64-bit
// division and one decisive comparison per trial, almost always.
bool BernoulliRationalSmall(Generator& gen, std::uint64_t n, std::uint64_t d) {
  if (n >= d) return true;
  std::uint64_t rem = n;
  while (rem != 0) {
    const std::uint64_t scaled = rem << 8;
    const std::uint64_t p_digits = scaled / d;
    rem = scaled - p_digits * d;
    const std::uint64_t u_digits = gen.Bits(8);
    if (u_digits != p_digits) return u_digits < p_digits;
  }
  return false;
}

bool BernoulliRational(Generator& gen, U128 n, U128 d) {
  if (d <= kSmallDenominator) {
    return BernoulliRationalSmall(gen, static_cast<std::uint64_t>(n),
                                  static_cast<std::uint64_t>(d));
  }
  if (n >= d) return true;
  U128 rem = n;
  while (rem != 0) {
    // The next digit of p is 1 iff 2 rem >= d; 2 rem may not fit in 128 bits,
    // so compare rem with d - rem (> 0).
    const U128 rest = d - rem;
    const bool p_digit = rem >= rest;
    rem = p_digit ? rem - rest : rem + rem;
    const bool u_digit = gen.Bits(1) != 0;
    if (u_digit != p_digit) return p_digit;
  }
  return false;
}

// Bernoulli(exp(-n/d)) for n <= d (CKS Alg. 1, gamma in [0, 1]): the trials
// Bernoulli(gamma / k) from k = `first_k` on (the series so far succeeded).
bool BernoulliExpNegAtMostOneFrom(Generator& gen, U128 n, U128 d, U128 first_k) {
  U128 k = first_k;
  while (true) {
    // d (k + 1) overflowing 128 bits, i.e. d > (2^128 - 1) / (k + 1):
    // reached with probability 1/k!, see the header.
    U128 next_denominator;
    if (__builtin_mul_overflow(d, k + 1, &next_denominator)) break;
    if (!BernoulliRational(gen, n, d * k)) break;
    ++k;
  }
  return (k & 1) == 1;
}

// The same series for d <= 2^32 (the discrete Laplace's u/t and 1/1): the
// trials in 64-bit arithmetic while d k <= 2^56 (k up to 2^24 at least,
// which the series reaches with probability 1/(2^24)!), then the general
// loop from the same k: the same trials either way.
bool BernoulliExpNegAtMostOneSmall(Generator& gen, std::uint64_t n, std::uint64_t d) {
  const std::uint64_t small_k = kSmallDenominator / d;
  std::uint64_t k = 1;
  for (; k <= small_k; ++k) {
    if (!BernoulliRationalSmall(gen, n, d * k)) return (k & 1) == 1;
  }
  return BernoulliExpNegAtMostOneFrom(gen, n, d, k);
}

bool BernoulliExpNegAtMostOne(Generator& gen, U128 n, U128 d) {
  if (d <= (U128{1} << 32)) {
    return BernoulliExpNegAtMostOneSmall(gen, static_cast<std::uint64_t>(n),
                                         static_cast<std::uint64_t>(d));
  }
  return BernoulliExpNegAtMostOneFrom(gen, n, d, 1);
}

// Bernoulli(exp(-n/d)) for any n >= 0, d >= 1 (CKS Alg. 1).
bool BernoulliExpNeg(Generator& gen, U128 n, U128 d) {
  if (n < d) return BernoulliExpNegAtMostOne(gen, n, d);  // No 128-bit division.
  for (U128 i = n / d; i > 0; --i) {
    if (!BernoulliExpNegAtMostOneSmall(gen, 1, 1)) return false;
  }
  return BernoulliExpNegAtMostOne(gen, n % d, d);
}

// CKS Alg. 2 with s = 1: the discrete Laplace with scale t.
std::int64_t DiscreteLaplace(Generator& gen, std::uint64_t t) {
  while (true) {
    const std::uint64_t u = UniformBelow64(gen, t);  // t >= 1.
    if (!BernoulliExpNegAtMostOneSmall(gen, u, t)) continue;  // u < t <= 2^24 + 1.
    std::uint64_t v = 0;
    while (BernoulliExpNegAtMostOneSmall(gen, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = gen.Bits(1) != 0;
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
  return UniformBelow64(gen, n);  // 0 for n <= 1.
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
