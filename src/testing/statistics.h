// Test support: reference statistics shared by dpem's statistical tests.
// Independent of the code under test (plain formulas and Boost.Math CDFs).
// Not part of the library.
#ifndef DPEM_TESTING_STATISTICS_H_
#define DPEM_TESTING_STATISTICS_H_

#include <cstddef>
#include <functional>
#include <vector>

#include <boost/math/distributions.hpp>
#include <gtest/gtest.h>

namespace dpem::test_support {

// P(K > c) for the limiting Kolmogorov distribution of sqrt(n) D_n:
// 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 c^2).
double KolmogorovSurvival(double c);

// c(alpha) with KolmogorovSurvival(c) = alpha, by bisection on [0.3, 10]
// (c(1e-4) = 2.2253 = sqrt(ln(2e4) / 2) to four digits).
double KolmogorovCriticalValue(double alpha);

// The KS statistic sup_x |F_n(x) - F(x)| of `samples` against `cdf`.
double KsStatistic(std::vector<double> samples, const std::function<double(double)>& cdf);

// The asymptotic critical value of D_n at level alpha. For finite n the law
// of sqrt(n) D_n is stochastically smaller than its limit, so this is
// slightly conservative.
double KsCriticalValue(std::size_t n, double alpha);

// Pearson correlation of two equally long samples.
double Correlation(const std::vector<double>& a, const std::vector<double>& b);

// Expects `samples` to pass a KS test of size `alpha` against the Boost
// distribution `dist`.
template <typename Distribution>
void ExpectKsAccepts(const std::vector<double>& samples, const Distribution& dist,
                     double alpha) {
  const double d =
      KsStatistic(samples, [&dist](double x) { return boost::math::cdf(dist, x); });
  EXPECT_LT(d, KsCriticalValue(samples.size(), alpha)) << "KS statistic, n = " << samples.size();
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_STATISTICS_H_
