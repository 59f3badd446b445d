#include "engine/exact_sum.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <string>

namespace dpem::internal {
namespace {

constexpr double kLimit = 4503599627370496.0;  // 2^kExactSumMaxBits
constexpr double kScale = 4503599627370496.0;  // 2^kExactSumFractionBits

// x / quantum, clamped and rounded to the nearest integer (ties to even),
// without the slow double -> 128-bit conversion: x = a + b with a = round(x)
// (|a| <= 2^52, so a 64-bit integer) and b = x - a, exact by Sterbenz's lemma
// (|b| <= 1/2); a 2^52 is an integer, so round(x 2^52) = a 2^52 +
// round(b 2^52), ties to even as the whole (a 2^52 is even). Scaling by a
// power of two is exact.
Int128 ToUnits(double x) {
  const double clamped = std::isnan(x) ? 0.0 : std::clamp(x, -kLimit, kLimit);
  const double a = std::nearbyint(clamped);
  const double b = clamped - a;
  const auto whole = static_cast<Int128>(static_cast<std::int64_t>(a)) << kExactSumFractionBits;
  return whole + static_cast<std::int64_t>(std::llrint(b * kScale));
}

constexpr Int128 kOne = 1;

// The nearest double to units * quantum, the units clamped to
// +-2^kExactSumTotalBits: the conversion rounds once, the scaling is exact
// (the result is far from the subnormal range or zero).
double FromUnits(Int128 hi, Int128 lo) {
  const Int128 limit = kOne << kExactSumTotalBits;
  const Int128 hi_limit = kOne << (kExactSumTotalBits - kExactSumCarryBits);
  Int128 total = 0;
  if (hi >= hi_limit) {
    total = limit;
  } else if (hi <= -hi_limit) {
    total = -limit;
  } else {  // |hi 2^96| < 2^126 and |lo| < 2^96: no overflow.
    total = std::clamp(hi * (kOne << kExactSumCarryBits) + lo, -limit, limit);
  }
  return std::ldexp(static_cast<double>(total), -kExactSumFractionBits);
}

}  // namespace

// Both parts below 2^127 in magnitude before the carry: |lo| < 2^96 and the
// addend < 2^105 (a fold) or 2^96 (a merged lo). The carry is the floor of
// lo / 2^96 (arithmetic shift), so lo returns to [0, 2^96); hi moves by at
// most 2^9 + 1 per call and cannot overflow in any feasible number of calls.
void ExactSum::Units::Add(Int128 hi_part, Int128 lo_part) {
  lo += lo_part;
  const Int128 carry = lo >> kExactSumCarryBits;
  lo -= carry * (kOne << kExactSumCarryBits);
  hi += hi_part + carry;
}

void ExactSum::FoldAndZero(const std::vector<StatisticArray>& arrays) {
  size_t i = 0;
  for (const StatisticArray& a : arrays) {
    for (Eigen::Index j = 0; j < a.second && i < units_.size(); ++j, ++i) {
      units_[i].Add(0, ToUnits(a.first[j]));
      a.first[j] = 0.0;
    }
  }
}

void ExactSum::Add(const ExactSum& other) {
  const size_t n = std::min(units_.size(), other.units_.size());
  for (size_t i = 0; i < n; ++i) units_[i].Add(other.units_[i].hi, other.units_[i].lo);
}

void ExactSum::WriteTo(const std::vector<StatisticArray>& arrays) const {
  size_t i = 0;
  for (const StatisticArray& a : arrays) {
    for (Eigen::Index j = 0; j < a.second && i < units_.size(); ++j, ++i) {
      a.first[j] = FromUnits(units_[i].hi, units_[i].lo);
    }
  }
}

std::vector<unsigned char> ExactSum::ToBytes() const {
  static_assert(std::is_trivially_copyable_v<Units>);
  std::vector<unsigned char> bytes(units_.size() * sizeof(Units));
  if (!units_.empty()) std::memcpy(bytes.data(), units_.data(), bytes.size());
  return bytes;
}

Status ExactSum::AddBytes(std::span<const unsigned char> bytes) {
  if (bytes.size() != units_.size() * sizeof(Units)) {
    return InvalidArgumentError("an exact sum of " + std::to_string(bytes.size()) +
                                " bytes cannot be added to one of " +
                                std::to_string(units_.size()) + " entries");
  }
  for (size_t i = 0; i < units_.size(); ++i) {
    Units u;
    std::memcpy(&u, bytes.data() + i * sizeof(Units), sizeof(Units));
    units_[i].Add(u.hi, u.lo);
  }
  return OkStatus();
}

// ToUnits(x) is the integer nearest x 2^52 (ties to even) after the clamp:
// below 2 in magnitude x 2^52 is below 2^53, and from 2 on it is an integer
// already, so in both cases that integer is a double, and FromUnits of a
// single fold converts it back exactly. Scaling by 2^52 and 2^-52 is exact
// here (no overflow; a non-zero result is at least 2^-52, not subnormal).
// Adding +0 turns the -0 that nearbyint gives small negative values into
// the integer sum's +0.
double SingleFoldValue(double x) {
  const double clamped = std::isnan(x) ? 0.0 : std::clamp(x, -kLimit, kLimit);
  return std::nearbyint(clamped * kScale) * (1.0 / kScale) + 0.0;
}

ExactSum MergeExactSums(std::vector<ExactSum>& parts) {
  // Parts of size 0 (a thread that got no block and never allocated) add
  // nothing; the first allocated part is the base.
  size_t base = 0;
  while (base + 1 < parts.size() && parts[base].size() == 0) ++base;
  ExactSum total = std::move(parts.at(base));
  for (size_t t = base + 1; t < parts.size(); ++t) {
    if (parts[t].size() != 0) total.Add(parts[t]);
  }
  return total;
}

}  // namespace dpem::internal
