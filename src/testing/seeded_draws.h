// Test support: data drawn from a model's sampler with a seeded generator.
// Not part of the library.
#ifndef DPEM_TESTING_SEEDED_DRAWS_H_
#define DPEM_TESTING_SEEDED_DRAWS_H_

#include <cstdint>

#include <gtest/gtest.h>

#include "dpem/data/matrix.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::test_support {

// `n` records of sample(p, n, gen) (a model's sampler: Sample, FaSample)
// from a generator seeded with `seed`; a failed draw fails the test.
template <typename Sampler, typename Parameters>
DataMatrix SeededDraw(Sampler sample, const Parameters& p, Eigen::Index n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  StatusOr<DataMatrix> x = sample(p, n, gen);
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  return *x;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_SEEDED_DRAWS_H_
