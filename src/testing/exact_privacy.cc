#include "testing/exact_privacy.h"

#include <cmath>

namespace dpem::test_support {

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double ExactGaussianDelta(double z, double eps) {
  return Phi(0.5 / z - eps * z) - std::exp(eps) * Phi(-0.5 / z - eps * z);
}

double ExactGaussianEpsilon(double z, double delta) {
  if (ExactGaussianDelta(z, 0.0) <= delta) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (ExactGaussianDelta(z, hi) > delta) hi *= 2.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ExactGaussianDelta(z, mid) > delta ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace dpem::test_support
