// The void reason every private fit shares: a seeded generator. Private to
// the library: not installed.
#ifndef DPEM_INTERNAL_GUARANTEE_H_
#define DPEM_INTERNAL_GUARANTEE_H_

#include <string>
#include <vector>

#include "dpem/random/generator.h"

namespace dpem::internal {

// Why a private fit whose noise came from a seeded generator has no guarantee.
inline constexpr const char* kSeededGeneratorVoidReason =
    "the generator was seeded (--seed, Generator::FromSeed): the noise is reproducible from "
    "the seed, which the output records (and a small one is found by brute force), so the "
    "release is not differentially private; seeds are for tests and experiments only";

// Appends kSeededGeneratorVoidReason to `void_reasons` if the fit is private
// and `gen` is seeded (a Split() of a seeded generator is seeded too). The
// noise of such a fit is a function of the seed alone: whoever holds the seed
// refits both neighbouring data sets with it and tells them apart exactly, so
// epsilon is infinite. The caller marks its guarantee void when
// `void_reasons` is not empty. Non-private fits claim nothing to void.
inline void AppendSeededGeneratorVoidReason(const Generator& gen, bool is_private,
                                            std::vector<std::string>& void_reasons) {
  if (gen.seeded() && is_private) void_reasons.emplace_back(kSeededGeneratorVoidReason);
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_GUARANTEE_H_
