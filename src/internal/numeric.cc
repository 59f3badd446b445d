#include "internal/numeric.h"

#include <cmath>
#include <limits>
#include <string>

namespace dpem::internal {

// log Phi(x): see numeric.h (Abramowitz and Stegun 26.2.12 in the far tail).
double LogNormalCdf(double x) {
  if (std::isnan(x)) return x;
  if (x > 0.0) return std::log1p(-NormalCdf(-x));
  if (x >= kLogNormalCdfSeriesBelow) return std::log(NormalCdf(x));
  if (std::isinf(x)) return -std::numeric_limits<double>::infinity();
  const double inv_x2 = 1.0 / (x * x);
  double term = 1.0;
  double series_minus_one = 0.0;
  for (int k = 1; k < kLogNormalCdfSeriesTerms; ++k) {
    term *= -(2.0 * k - 1.0) * inv_x2;
    series_minus_one += term;
  }
  // log(phi(x)/|x|) = -x^2/2 - log|x| - log(2 pi)/2.
  constexpr double kHalfLogTwoPi = 0.91893853320467274178;
  return -0.5 * x * x - std::log(-x) - kHalfLogTwoPi + std::log1p(series_minus_one);
}

StatusOr<Bracket> BisectThreshold(const std::function<bool(double)>& pred,
                                  double lo, double hi,
                                  double relative_tolerance,
                                  double absolute_tolerance,
                                  int max_iterations) {
  if (!(lo < hi)) return InternalError("bisection: empty bracket");
  if (pred(lo)) return InternalError("bisection: predicate holds at the low end");
  if (!pred(hi)) return InternalError("bisection: predicate fails at the high end");
  for (int i = 0; i < max_iterations; ++i) {
    const double width = hi - lo;
    if (width <= relative_tolerance * std::fabs(hi) || width <= absolute_tolerance) {
      return Bracket{lo, hi};
    }
    // Bisect in log space when the bracket spans orders of magnitude.
    double mid = (lo > 0.0 && hi / lo > 4.0) ? std::sqrt(lo * hi) : 0.5 * (lo + hi);
    if (!(mid > lo && mid < hi)) return Bracket{lo, hi};  // Floating-point limit.
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return Bracket{lo, hi};
}

StatusOr<double> ExpandUntil(const std::function<bool(double)>& pred, double hi,
                             double factor, int max_doublings) {
  if (!(hi > 0.0) || !(factor > 1.0)) return InternalError("expand: bad arguments");
  for (int i = 0; i <= max_doublings; ++i) {
    if (pred(hi)) return hi;
    hi *= factor;
  }
  return OutOfRangeError("no value up to " + std::to_string(hi) +
                         " satisfies the condition");
}

double GoldenSectionMinimise(const std::function<double(double)>& f, double lo,
                             double hi, int iterations) {
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = lo, b = hi;
  double c = b - inv_phi * (b - a), d = a + inv_phi * (b - a);
  double fc = f(c), fd = f(d);
  double best_x = fc < fd ? c : d, best_f = fc < fd ? fc : fd;
  for (int i = 0; i < iterations && b - a > 1e-15 * (std::fabs(a) + std::fabs(b)); ++i) {
    if (fc < fd) {
      b = d; d = c; fd = fc;
      c = b - inv_phi * (b - a); fc = f(c);
      if (fc < best_f) { best_f = fc; best_x = c; }
    } else {
      a = c; c = d; fc = fd;
      d = a + inv_phi * (b - a); fd = f(d);
      if (fd < best_f) { best_f = fd; best_x = d; }
    }
  }
  return best_x;
}

}  // namespace dpem::internal
