#include "testing/statistics.h"

#include <algorithm>
#include <cmath>

namespace dpem::test_support {

double KolmogorovSurvival(double c) {
  double sum = 0.0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * c * c);
    sum += (k % 2 == 1 ? term : -term);
    if (term < 1e-300) break;
  }
  return 2.0 * sum;
}

double KolmogorovCriticalValue(double alpha) {
  double lo = 0.3;
  double hi = 10.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (KolmogorovSurvival(mid) > alpha ? lo : hi) = mid;
  }
  return hi;
}

double KsStatistic(std::vector<double> samples, const std::function<double(double)>& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0.0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(samples[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  return d;
}

double KsCriticalValue(std::size_t n, double alpha) {
  return KolmogorovCriticalValue(alpha) / std::sqrt(static_cast<double>(n));
}

double Correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0.0, mb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mb += b[i] / n;
  }
  double sab = 0.0, saa = 0.0, sbb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

}  // namespace dpem::test_support
