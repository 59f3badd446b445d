// Exact reduction of per-block statistics: what makes a released sum a
// function the sensitivity argument covers, whatever N, the thread count or
// the order in which blocks finish (docs/privacy.md, "What is computed").
//
// A pass computes each block's statistics from zero in floating point (a
// "block partial"), then folds the partial into an ExactSum: every entry is
// rounded to the fixed quantum kExactSumQuantum = 2^-kExactSumFractionBits
// and added as a 128-bit integer. Integer addition is exact and associative,
// so the total is the same for any thread count and merge order, and two
// data sets that differ in one record give totals that differ by exactly the
// difference of that record's block's rounded partials: every other block's
// partial is computed from the same rows by the same code and cancels. The
// floating-point error of a sum therefore enters the sensitivity once, for
// one block of at most kMaxBlockRowsOption rows, instead of growing with N
// (kComputedSumMargin in dpem/mechanisms/additive_noise.h).
//
// Private to the library. Thread safety: an ExactSum is a value; one
// thread per instance.
#ifndef DPEM_ENGINE_EXACT_SUM_H_
#define DPEM_ENGINE_EXACT_SUM_H_

#include <Eigen/Core>

#include <span>
#include <utility>
#include <vector>

#include "dpem/status.h"

namespace dpem::internal {

// The quantum of exact sums: 2^-52. A block partial's entries are rounded to
// it (an error of at most 2^-53 per entry and block).
inline constexpr int kExactSumFractionBits = 52;
// Block partial entries are clamped to +-2^kExactSumMaxBits (4.5e15) before
// rounding: a contraction, which cannot raise a sensitivity, and never
// reached by sums of at most 2^16 records in the unit ball. Each block then
// adds at most 2^104 units. Every entry is kept as two 128-bit words,
// hi 2^kExactSumCarryBits + lo with |lo| < 2^kExactSumCarryBits after each
// fold, so no number of blocks can overflow it; a total beyond
// +-2^kExactSumTotalBits units is clamped when it is written (a contraction
// of the total: neighbours' totals still differ by at most their one block).
inline constexpr int kExactSumMaxBits = 52;
inline constexpr int kExactSumCarryBits = 96;
inline constexpr int kExactSumTotalBits = 126;
// The quantum as a number.
inline constexpr double kExactSumQuantum = 1.0 / 4503599627370496.0;  // 2^-52

// A signed 128-bit integer (a GCC and Clang extension; __extension__ keeps
// -Wpedantic quiet about it).
__extension__ typedef __int128 Int128;

// One contiguous array of doubles in a statistic: its first entry and size.
using StatisticArray = std::pair<double*, Eigen::Index>;

class ExactSum {
 public:
  ExactSum() = default;
  // `size` zero entries.
  explicit ExactSum(Eigen::Index size) : units_(static_cast<size_t>(size)) {}

  Eigen::Index size() const { return static_cast<Eigen::Index>(units_.size()); }

  // Adds the arrays, in order (their sizes must add up to size()), each
  // entry rounded to the quantum, then sets every entry of the arrays to 0:
  // the next block starts its partial from zero.
  void FoldAndZero(const std::vector<StatisticArray>& arrays);

  // Adds another ExactSum of the same size (exact).
  void Add(const ExactSum& other);

  // Writes the sums into the arrays, in order, each the nearest double to
  // the exact total clamped to +-2^kExactSumTotalBits units.
  void WriteTo(const std::vector<StatisticArray>& arrays) const;

  // The exact units as bytes (32 per entry), for another process running
  // the same binary to add with AddBytes: how the ranks of a distributed
  // fit combine their sums exactly (src/engine/rank_combine.h).
  std::vector<unsigned char> ToBytes() const;
  // Adds the units of ToBytes() of an ExactSum of the same size (exact).
  // InvalidArgument if the byte count does not match.
  Status AddBytes(std::span<const unsigned char> bytes);

 private:
  // One entry: hi 2^kExactSumCarryBits + lo units, |lo| < 2^kExactSumCarryBits.
  struct Units {
    Int128 hi = 0;
    Int128 lo = 0;
    void Add(Int128 hi_part, Int128 lo_part);
  };
  std::vector<Units> units_;
};

// The exact sum of per-thread ExactSums, merged in thread order (the order
// does not change the result); parts of size 0 (never allocated) are
// skipped.
ExactSum MergeExactSums(std::vector<ExactSum>& parts);

// The same for per-thread workers that each own an ExactSum `member` (moved
// out of them).
template <typename Worker>
ExactSum MergeExactSums(std::vector<Worker>& workers, ExactSum Worker::*member) {
  std::vector<ExactSum> parts;
  parts.reserve(workers.size());
  for (Worker& w : workers) parts.push_back(std::move(w.*member));
  return MergeExactSums(parts);
}

// The value WriteTo gives for an entry of an ExactSum that received exactly
// one fold, of the value x: x clamped as a fold clamps it (NaN as 0),
// rounded to the nearest multiple of kExactSumQuantum (ties to even), +0 for
// zero. Bit for bit the same, computed without the 128-bit units: the exact
// sum of ONE block partial, entry by entry.
double SingleFoldValue(double x);

// The number of entries of `arrays` together: the size of their ExactSum.
inline Eigen::Index TotalSize(const std::vector<StatisticArray>& arrays) {
  Eigen::Index n = 0;
  for (const StatisticArray& a : arrays) n += a.second;
  return n;
}

}  // namespace dpem::internal

#endif  // DPEM_ENGINE_EXACT_SUM_H_
