// Test support for the gradient EM tests: data of a model from
// GenerateGradientEmData at SNR 3 with sigma = 1. Not part of the library.
#ifndef DPEM_TESTING_GRADIENT_EM_DATA_H_
#define DPEM_TESTING_GRADIENT_EM_DATA_H_

#include <cstdint>

#include "dpem/data/generators.h"
#include "dpem/random/generator.h"

namespace dpem::test_support {

// `n` records in `d` dimensions of `model` (covariates missing with
// probability `pm`, rmc) from a generator seeded with `seed`.
inline GeneratedData MakeGradientEmData(GradientEmModel model, Eigen::Index n, Eigen::Index d,
                                        double pm, std::uint64_t seed) {
  GeneratorOptions o;
  o.model = model;
  o.n = n;
  o.d = d;
  o.snr = 3.0;
  o.sigma = 1.0;
  o.missing_prob = pm;
  Generator gen = Generator::FromSeed(seed);
  return *GenerateGradientEmData(o, gen);
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_GRADIENT_EM_DATA_H_
