// Statistical test of the noise a private k-means fit really adds: with one
// cluster, one iteration and N records at the origin, the released sums are
// pure noise and the fitted centre is noise / (N + noise on the count). Over
// many seeds, N times the centre's coordinates must have the standard
// deviation the ledger records (Gaussian sigma, Laplace sqrt(2) b) and the
// shape of the mechanism (excess kurtosis 0 for Gaussian, 3 for Laplace).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "dpem/models/kmeans/kmeans.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

constexpr int kRepeats = 3000;
constexpr Eigen::Index kRecords = 4000;

struct Moments {
  double stddev = 0.0;
  double excess_kurtosis = 0.0;
};

Moments MomentsOf(const std::vector<double>& v) {
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double m2 = 0.0, m4 = 0.0;
  for (double x : v) {
    m2 += std::pow(x - mean, 2);
    m4 += std::pow(x - mean, 4);
  }
  m2 /= static_cast<double>(v.size());
  m4 /= static_cast<double>(v.size());
  return {std::sqrt(m2), m4 / (m2 * m2) - 3.0};
}

TEST(KmeansNoiseStatisticalTest, CentreNoiseMatchesTheLedger) {
  const DataMatrix zeros = DataMatrix::Zero(kRecords, 2);
  for (KmeansMethod m : test_support::kAllKmeansMethods) {
    KmeansFitOptions o = test_support::MakeKmeansOptions(m, /*components=*/1, /*iterations=*/1,
                                                         /*epsilon=*/5.0, /*delta=*/1e-4);
    o.domain.data_norm = 1.0;
    std::vector<double> samples;
    double scale = 0.0;
    bool laplace = false;
    for (int r = 0; r < kRepeats; ++r) {
      Generator gen = Generator::FromSeed(static_cast<std::uint64_t>(1000 + r));
      const StatusOr<KmeansFit> fit = FitKmeans(zeros, o, gen);
      ASSERT_TRUE(fit.ok()) << fit.status().ToString();
      const Release& sums = fit->guarantee.ledger.releases().back();
      laplace = sums.mechanism == MechanismKind::kLaplace;
      scale = sums.noise_scale * (laplace ? std::sqrt(2.0) : 1.0);
      for (Eigen::Index j = 0; j < 2; ++j) {
        samples.push_back(static_cast<double>(kRecords) * fit->centres(0, j));
      }
    }
    const Moments mo = MomentsOf(samples);
    const std::string name(KmeansMethodName(m));
    // 6000 draws: the standard deviation's relative standard error is about
    // 1% (Gaussian) to 2% (Laplace); the count's noise changes it by < 0.1%.
    EXPECT_NEAR(mo.stddev / scale, 1.0, 0.07) << name;
    if (laplace) {
      EXPECT_GT(mo.excess_kurtosis, 2.0) << name;
    } else {
      EXPECT_LT(std::abs(mo.excess_kurtosis), 0.5) << name;
    }
  }
}

}  // namespace
}  // namespace dpem
