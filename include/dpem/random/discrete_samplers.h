// Exact samplers for noise on the integers: the building blocks of dpem's
// floating-point-safe (discrete) noise, the default of the additive-noise
// mechanisms (mechanisms/additive_noise.h, NoiseSampling::kDiscrete).
//
// Why: textbook floating-point Laplace or Gaussian samples have a support
// that depends on the value they are added to; Mironov (2012, "On
// significance of the least significant bits for differential privacy")
// recovers the input from the low-order bits of x + noise. These samplers use
// only integer arithmetic and the Generator's uniform bits, so their
// output distribution is EXACTLY the stated one (Canonne, Kamath, Steinke
// 2020, "The Discrete Gaussian for Differential Privacy", Alg. 1-3), and the
// mechanisms add them to statistics rounded to a grid, so that the released
// value is an exact function of an integer.
//
// Exactness caveats (events of probability far below 2^-1000, documented in
// docs/randomness.md): a discrete-Gaussian proposal |Y| >= 2^38 is rejected
// (its acceptance probability is below exp(-2^27)); in the Bernoulli(exp(-g))
// series, a counter k that would overflow 128-bit arithmetic (k >= 2^28 for
// the largest denominators) ends the series as if the coin came up 0 (the
// series reaches k with probability 1/k!).
//
// Thread safety: as safe as the Generator passed in (one per thread).
#ifndef DPEM_RANDOM_DISCRETE_SAMPLERS_H_
#define DPEM_RANDOM_DISCRETE_SAMPLERS_H_

#include <cstdint>

#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Largest integer noise scale (discrete Laplace t or discrete Gaussian sigma)
// the samplers accept: 2^24, which keeps every intermediate of CKS Alg. 3 in
// 128-bit integers.
inline constexpr std::uint64_t kMaxDiscreteNoiseScale = std::uint64_t{1} << 24;

// A uniform integer in [0, n), n >= 1, exactly: Lemire's multiply-and-reject
// (ACM TOMACS 2019) on 64-bit words.
std::uint64_t SampleUniformBelow(Generator& gen, std::uint64_t n);

// Bernoulli(exp(-numerator / denominator)), exactly (CKS 2020, Alg. 1): for
// gamma = n/d in [0, 1], K is the index of the first failure of the
// Bernoulli(gamma / k) trials, k = 1, 2, ..., and the result is "K odd"
// (each trial, Bernoulli(n / (d k)), compares a uniform in [0, 1) with
// n / (d k) digit by digit: docs/randomness.md);
// gamma > 1 is floor(gamma) Bernoulli(exp(-1)) trials and one
// Bernoulli(exp(-(gamma - floor(gamma)))). Requires denominator >= 1.
StatusOr<bool> SampleBernoulliExpNeg(Generator& gen, std::uint64_t numerator,
                                     std::uint64_t denominator);

// The discrete Laplace distribution on Z with integer scale t >= 1:
// P(x) = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|x|/t} (CKS 2020, Alg. 2 with
// s = 1). Requires 1 <= t <= kMaxDiscreteNoiseScale.
StatusOr<std::int64_t> SampleDiscreteLaplace(Generator& gen, std::uint64_t scale);

// The discrete Gaussian N_Z(0, sigma^2) on Z with integer sigma >= 1:
// P(x) proportional to exp(-x^2 / (2 sigma^2)) (CKS 2020, Alg. 3: discrete
// Laplace proposals with t = sigma + 1, accepted with probability
// exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))). Requires 1 <= sigma <=
// kMaxDiscreteNoiseScale.
StatusOr<std::int64_t> SampleDiscreteGaussian(Generator& gen, std::uint64_t sigma);

}  // namespace dpem

#endif  // DPEM_RANDOM_DISCRETE_SAMPLERS_H_
