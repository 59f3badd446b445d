#include "engine/exact_sum.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

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
__int128 ToUnits(double x) {
  const double clamped = std::isnan(x) ? 0.0 : std::clamp(x, -kLimit, kLimit);
  const double a = std::nearbyint(clamped);
  const double b = clamped - a;
  const auto whole = static_cast<__int128>(static_cast<std::int64_t>(a)) << kExactSumFractionBits;
  return whole + static_cast<std::int64_t>(std::llrint(b * kScale));
}

// The nearest double to units * quantum: the conversion rounds once, the
// scaling is exact (the result is far from the subnormal range or zero).
double FromUnits(__int128 units) {
  return std::ldexp(static_cast<double>(units), -kExactSumFractionBits);
}

}  // namespace

void ExactSum::FoldAndZero(const std::vector<StatisticArray>& arrays) {
  size_t i = 0;
  for (const StatisticArray& a : arrays) {
    for (Eigen::Index j = 0; j < a.second && i < units_.size(); ++j, ++i) {
      units_[i] += ToUnits(a.first[j]);
      a.first[j] = 0.0;
    }
  }
}

void ExactSum::Add(const ExactSum& other) {
  const size_t n = std::min(units_.size(), other.units_.size());
  for (size_t i = 0; i < n; ++i) units_[i] += other.units_[i];
}

void ExactSum::WriteTo(const std::vector<StatisticArray>& arrays) const {
  size_t i = 0;
  for (const StatisticArray& a : arrays) {
    for (Eigen::Index j = 0; j < a.second && i < units_.size(); ++j, ++i) {
      a.first[j] = FromUnits(units_[i]);
    }
  }
}

ExactSum MergeExactSums(std::vector<ExactSum>& parts) {
  ExactSum total = std::move(parts.at(0));
  for (size_t t = 1; t < parts.size(); ++t) total.Add(parts[t]);
  return total;
}

}  // namespace dpem::internal
