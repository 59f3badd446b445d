// Numerical helpers shared by the accountants and calibration.
// Private to the library: not installed.
#ifndef DPEM_INTERNAL_NUMERIC_H_
#define DPEM_INTERNAL_NUMERIC_H_

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "dpem/status.h"

namespace dpem::internal {

// InvalidArgument "<name> must be finite and > 0" unless `value` is finite
// and positive.
inline Status CheckFinitePositive(double value, const std::string& name) {
  if (std::isfinite(value) && value > 0.0) return OkStatus();
  return InvalidArgumentError(name + " must be finite and > 0");
}

// Relative safety margin added to every privacy parameter an accountant
// reports, so that floating-point rounding in its evaluation (relative error
// far below 1e-12 for the formulas here) can never make it report a value
// below the exact one.
inline constexpr double kConservativeRelativeMargin = 1e-12;

// x rounded up by kConservativeRelativeMargin and one ulp.
inline double RoundUpConservatively(double x) {
  if (!std::isfinite(x)) return x;
  const double up = x + std::fabs(x) * kConservativeRelativeMargin;
  return std::nextafter(up, std::numeric_limits<double>::infinity());
}

// Standard normal CDF Phi(x), accurate in both tails (via erfc).
inline double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// log Phi(x), accurate in both tails. For x > 0 it is log1p(-Phi(-x)); for
// kLogNormalCdfSeriesBelow <= x <= 0 it is log(Phi(x)) via erfc (relative
// error a few ulps); below that, where erfc would soon underflow (Phi(x) <
// DBL_MIN for x < about -37.5), it uses the asymptotic Mills-ratio series
// (Abramowitz and Stegun 26.2.12)
//   Phi(x) = phi(x)/|x| * sum_{k>=0} (-1)^k (2k-1)!! / x^{2k},
// truncated after kLogNormalCdfSeriesTerms terms; the series is enveloping, so
// the truncation error is below the first omitted term (< 1e-23 relative at
// x = -30). Returns -inf for x = -inf and NaN for NaN.
inline constexpr double kLogNormalCdfSeriesBelow = -30.0;
inline constexpr int kLogNormalCdfSeriesTerms = 12;
double LogNormalCdf(double x);

// log(exp(a) + exp(b)) without overflow.
inline double LogAddExp(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// Bisection for a predicate that is false below some threshold and true at
// and above it, on [lo, hi] with pred(lo) == false and pred(hi) == true
// (checked). Returns the final bracket [lo, hi], of relative width at most
// `relative_tolerance` (or absolute width `absolute_tolerance` near zero):
// `hi` satisfies the predicate, `lo` does not.
struct Bracket {
  double lo;
  double hi;
};
StatusOr<Bracket> BisectThreshold(const std::function<bool(double)>& pred,
                                  double lo, double hi,
                                  double relative_tolerance,
                                  double absolute_tolerance = 0.0,
                                  int max_iterations = 2000);

// Expands `hi` geometrically (hi *= factor) until pred(hi) is true, at most
// `max_doublings` times; OutOfRange if it never becomes true. Requires hi > 0.
StatusOr<double> ExpandUntil(const std::function<bool(double)>& pred, double hi,
                             double factor = 2.0, int max_doublings = 200);

// Golden-section search for the minimum of a unimodal f on [lo, hi]; returns
// the best point evaluated (any point's value is a valid bound for the
// callers, so imprecision only costs tightness).
double GoldenSectionMinimise(const std::function<double(double)>& f, double lo,
                             double hi, int iterations = 100);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_NUMERIC_H_
