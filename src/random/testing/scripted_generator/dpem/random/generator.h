// A stand-in for dpem/random/generator.h, for discrete_samplers_exhaustive_test
// only: it compiles the real src/random/discrete_samplers.cc against a
// Generator whose words and bits come from a script, so that a test can drive
// the samplers through EVERY outcome of their random draws and compute their
// output distribution exactly. Never linked with the library.
#ifndef DPEM_RANDOM_GENERATOR_H_
#define DPEM_RANDOM_GENERATOR_H_

#include <cstdint>
#include <vector>

namespace dpem {

// Thrown when the script has no value left: `bits` is the width asked for
// (64 for a whole word).
struct ScriptExhausted {
  int bits;
};

class Generator {
 public:
  using result_type = std::uint64_t;
  explicit Generator(std::vector<std::uint64_t> script) : script_(std::move(script)) {}
  std::uint64_t operator()() { return Take(64); }
  std::uint64_t Bits(int count) { return Take(count); }
  std::size_t used() const { return next_; }

 private:
  std::uint64_t Take(int bits) {
    if (next_ == script_.size()) throw ScriptExhausted{bits};
    return script_[next_++];
  }
  std::vector<std::uint64_t> script_;
  std::size_t next_ = 0;
};

}  // namespace dpem

#endif  // DPEM_RANDOM_GENERATOR_H_
