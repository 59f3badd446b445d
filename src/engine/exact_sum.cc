#include "engine/exact_sum.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace dpem::internal {
namespace {

// x / quantum, clamped and rounded to the nearest integer (ties to even).
// Scaling by a power of two is exact, so the only rounding is the last one.
__int128 ToUnits(double x) {
  const double limit = std::ldexp(1.0, kExactSumMaxBits);
  const double clamped = std::isnan(x) ? 0.0 : std::clamp(x, -limit, limit);
  return static_cast<__int128>(std::nearbyint(std::ldexp(clamped, kExactSumFractionBits)));
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
