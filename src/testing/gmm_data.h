// Test support: small data sets that the Gaussian-mixture tests fit. Not
// part of the library.
#ifndef DPEM_TESTING_GMM_DATA_H_
#define DPEM_TESTING_GMM_DATA_H_

#include <cstdint>

#include "dpem/data/matrix.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace dpem::test_support {

// The centres of ThreeClusters, inside the unit ball.
inline constexpr double kThreeClusterCentres[3][2] = {{-0.5, -0.3}, {0.4, -0.4}, {0.0, 0.5}};

// n records in 2-D, record i from cluster i mod 3: its centre plus
// isotropic Gaussian noise of standard deviation 0.08, drawn from a
// generator seeded with `seed`.
inline DataMatrix ThreeClusters(Eigen::Index n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  DataMatrix x(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % 3);
    x(i, 0) = kThreeClusterCentres[c][0] + 0.08 * SampleStandardNormal(gen);
    x(i, 1) = kThreeClusterCentres[c][1] + 0.08 * SampleStandardNormal(gen);
  }
  return x;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_GMM_DATA_H_
