// Test support: what the fits' void reasons say, checked against the words
// the privacy review asked for rather than the library's own strings.
// Not part of the library.
#ifndef DPEM_TESTING_VOID_REASONS_H_
#define DPEM_TESTING_VOID_REASONS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dpem::test_support {

// The number of entries of `reasons` that contain `needle`.
inline int CountReasonsMentioning(const std::vector<std::string>& reasons,
                                  const std::string& needle) {
  int count = 0;
  for (const std::string& r : reasons) count += r.find(needle) != std::string::npos;
  return count;
}

// Whether `reason` is a seeded generator's: it says that the generator was
// seeded, that the noise is reproducible from the seed, that the release is
// therefore not differentially private, and that seeds are for tests and
// experiments.
inline bool IsSeededGeneratorReason(const std::string& reason) {
  for (const char* needle : {"seeded", "reproducible from the seed", "not differentially private",
                             "tests and experiments"}) {
    if (reason.find(needle) == std::string::npos) return false;
  }
  return true;
}

// The number of entries of `reasons` that are a seeded generator's.
inline int CountSeededGeneratorReasons(const std::vector<std::string>& reasons) {
  int count = 0;
  for (const std::string& r : reasons) count += IsSeededGeneratorReason(r);
  return count;
}

// Success if `g` (any model's guarantee: is_private, guarantee_void,
// void_reasons) is a private guarantee voided by a seeded generator alone.
template <typename Guarantee>
::testing::AssertionResult IsVoidedOnlyBySeed(const Guarantee& g) {
  if (!g.is_private) return ::testing::AssertionFailure() << "not a private guarantee";
  if (!g.guarantee_void) return ::testing::AssertionFailure() << "the guarantee is not void";
  if (g.void_reasons.size() != 1 || !IsSeededGeneratorReason(g.void_reasons[0])) {
    return ::testing::AssertionFailure() << "void reasons other than the seed's";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_VOID_REASONS_H_
