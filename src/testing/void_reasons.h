// Test support: what the fits' void reasons say, checked against the words
// the privacy review asked for rather than the library's own strings.
// Not part of the library.
#ifndef DPEM_TESTING_VOID_REASONS_H_
#define DPEM_TESTING_VOID_REASONS_H_

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

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_VOID_REASONS_H_
