// Statistical tests of the private robust mean (wang-dp-gradient-em Theorem 2
// and Appendix F) on heavy-tailed data: Student-t with 3 degrees of freedom
// (finite variance 3, infinite fourth moment), shifted to mean 1.
#include <gtest/gtest.h>

#include <cmath>

#include "dpem/mechanisms/robust_mean.h"
#include "dpem/random/samplers.h"

namespace dpem {
namespace {

constexpr double kMu = 1.0;
constexpr double kSecondMoment = kMu * kMu + 3.0;  // E x^2 for t_3 + 1.

// t_nu = Z / sqrt(V / nu), V ~ chi^2_nu = Gamma(nu / 2, 2).
Eigen::VectorXd StudentT3(Eigen::Index n, Generator& gen) {
  Eigen::VectorXd x(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double v = *SampleGamma(gen, 1.5, 2.0);
    x(i) = kMu + SampleStandardNormal(gen) / std::sqrt(v / 3.0);
  }
  return x;
}

PrivateMeanOptions Options() {
  PrivateMeanOptions o;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  o.tau = kSecondMoment;
  o.zeta = 0.05;
  return o;
}

// The explicit bound of Appendix E, eq. (34) and its mirror: with
// probability >= 1 - 2 zeta, |x-hat - E x| <= E x^2 (1/beta + 1) / (2 s) +
// (s/n)(beta/2 + log(1/zeta)); the Gaussian noise adds at most
// sigma sqrt(2 log(2/zeta)) with probability >= 1 - zeta. So the bound fails
// in at most a fraction 3 zeta = 0.15 of the trials (expected <= 30 of 200;
// 45 is three binomial standard deviations above).
TEST(RobustMeanStatisticalTest, CentralErrorWithinTheorem2BoundOnStudentT3) {
  Generator gen = Generator::FromSeed(2024);
  const PrivateMeanOptions o = Options();
  const int trials = 200;
  const Eigen::Index n = 4000;
  int failures = 0;
  for (int k = 0; k < trials; ++k) {
    const Eigen::VectorXd x = StudentT3(n, gen);
    const PrivateMeanResult r = *PrivateRobustMean(x, o, gen);
    const double s = r.parameters.scale, beta = r.parameters.beta;
    const double bound = kSecondMoment * (1.0 / beta + 1.0) / (2.0 * s) +
                         s / n * (beta / 2.0 + std::log(1.0 / o.zeta)) +
                         r.noise_stddev * std::sqrt(2.0 * std::log(2.0 / o.zeta));
    failures += std::abs(r.mean - kMu) > bound;
  }
  EXPECT_LE(failures, 45);
}

// The error shrinks with n, centrally like n^{-1/2} and locally like n^{-1/4}
// (eq. 15 and 39): a 16-fold n must cut the mean absolute error by well over
// a factor 2 centrally and by more than 1.4 locally (the rates give 4 and 2).
TEST(RobustMeanStatisticalTest, ErrorDecaysWithNCentrallyAndLocally) {
  Generator gen = Generator::FromSeed(77);
  const PrivateMeanOptions o = Options();
  auto mean_error = [&](Eigen::Index n, bool local) {
    double total = 0.0;
    for (int k = 0; k < 60; ++k) {
      const Eigen::VectorXd x = StudentT3(n, gen);
      const PrivateMeanResult r =
          local ? *LocalPrivateRobustMean(x, o, gen) : *PrivateRobustMean(x, o, gen);
      total += std::abs(r.mean - kMu);
    }
    return total / 60.0;
  };
  const double central_small = mean_error(1000, false), central_big = mean_error(16000, false);
  EXPECT_GT(central_small / central_big, 2.5) << central_small << " " << central_big;
  const double local_small = mean_error(1000, true), local_big = mean_error(16000, true);
  EXPECT_GT(local_small / local_big, 1.4) << local_small << " " << local_big;
}

}  // namespace
}  // namespace dpem
