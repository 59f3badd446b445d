// The released noise of a whole private fit has the calibrated scale.
//
// With K = 1 every responsibility is 1 whatever the initialisation, and the
// simplex projection of the noisy count gives N~ = N exactly. So over
// repeated fits on fixed data the fitted mean varies only by the noise on the
// released sum divided by N, and each fitted covariance entry by the noise on
// the released second moment divided by N (to first order; the mean's noise
// enters quadratically, and the data are centred so that the linear term
// mu . noise vanishes). Comparing the empirical standard deviations with the
// ledger's noise scales catches a variance used as a standard deviation, a
// wrong sensitivity or a missing release anywhere between calibration and the
// M-step. Label: statistical. Fixed seeds, no retries.
//
// The average of a fit's last iterates (GmmFitOptions::iterate_averaging)
// has the variance that its weights give independent noise.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

constexpr int kFits = 1500;
constexpr Eigen::Index kRecords = 2000;

DataMatrix CentredData() {
  Generator gen = Generator::FromSeed(99);
  DataMatrix x(kRecords, 2);
  for (Eigen::Index i = 0; i < kRecords; ++i) {
    x(i, 0) = 0.2 * SampleStandardNormal(gen);
    x(i, 1) = 0.15 * SampleStandardNormal(gen);
  }
  x.rowwise() -= x.colwise().mean();  // mu = 0 exactly (up to rounding).
  return x;
}

double StdDev(const std::vector<double>& v) {
  double mean = 0, sq = 0;
  for (double a : v) mean += a;
  mean /= static_cast<double>(v.size());
  for (double a : v) sq += (a - mean) * (a - mean);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

// Five standard errors of a sample standard deviation of n Gaussian draws,
// relative: 5 / sqrt(2 (n - 1)) = 9.1% for n = 1500.
double Tolerance() { return 5.0 / std::sqrt(2.0 * (kFits - 1)); }

// One full-covariance component, one iteration by `mechanisms` from the
// random start (so the ledger holds that iteration's releases only), at
// epsilon = 8: small noise, so floors and clamps never engage.
GmmFitOptions OneIterationOptions(GmmMechanisms mechanisms) {
  GmmFitOptions o = test_support::MakeGmmOptions(/*components=*/1, /*iterations=*/1,
                                                 /*epsilon=*/8.0, /*delta=*/1e-5,
                                                 /*data_norm=*/2.0);
  o.covariance = CovarianceType::kFull;
  o.mechanisms = mechanisms;
  o.init = GmmInit::kRandom;
  return o;
}

TEST(PrivateGmmStatisticalTest, FittedParametersVaryByTheLedgersNoiseScales) {
  const DataMatrix x = CentredData();
  const GmmFitOptions o = OneIterationOptions(GmmMechanisms::kGgg);
  std::vector<double> mean0, cov00, cov01;
  double sums_scale = 0, second_scale = 0;
  for (int f = 0; f < kFits; ++f) {
    Generator gen = Generator::FromSeed(1000 + f);
    StatusOr<GmmFit> fit = FitGmm(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    const std::vector<Release>& r = fit->guarantee.ledger.releases();
    ASSERT_EQ(r.size(), 3u);
    sums_scale = r[1].noise_scale;    // Unit-ball units.
    second_scale = r[2].noise_scale;
    mean0.push_back(fit->parameters.means(0, 0));
    cov00.push_back(fit->parameters.covariances[0](0, 0));
    cov01.push_back(fit->parameters.covariances[0](0, 1));
  }
  const double r = o.domain.data_norm, n = static_cast<double>(kRecords);
  // Original units: a mean scales by R, a covariance by R^2.
  EXPECT_NEAR(StdDev(mean0) / (r * sums_scale / n), 1.0, Tolerance());
  EXPECT_NEAR(StdDev(cov00) / (r * r * second_scale / n), 1.0, Tolerance());
  // Off-diagonal entries carry the same sigma (Analyze Gauss: one draw per
  // upper-triangle entry, mirrored).
  EXPECT_NEAR(StdDev(cov01) / (r * r * second_scale / n), 1.0, Tolerance());
}

}  // namespace
}  // namespace dpem

namespace dpem {
namespace {

// The same for the joint mechanism: one release per iteration whose block
// scales are split x the recorded noise scale; off-diagonal covariance entries
// carry 1/sqrt(2) of the diagonal's noise (the sqrt(2)-scaled upper triangle).
TEST(PrivateGmmStatisticalTest, JointReleaseBlocksHaveTheirScales) {
  const DataMatrix x = CentredData();
  const GmmFitOptions o = OneIterationOptions(GmmMechanisms::kJoint);
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 2, 1);
  std::vector<double> mean0, cov00, cov01;
  double sigma = 0;
  for (int f = 0; f < kFits; ++f) {
    Generator gen = Generator::FromSeed(5000 + f);
    StatusOr<GmmFit> fit = FitGmm(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    ASSERT_EQ(fit->guarantee.ledger.size(), 1u);
    sigma = fit->guarantee.ledger.releases()[0].noise_scale;
    mean0.push_back(fit->parameters.means(0, 0));
    cov00.push_back(fit->parameters.covariances[0](0, 0));
    cov01.push_back(fit->parameters.covariances[0](0, 1));
  }
  const double r = o.domain.data_norm, n = static_cast<double>(kRecords);
  EXPECT_NEAR(StdDev(mean0) / (r * split.sums * sigma / n), 1.0, Tolerance());
  EXPECT_NEAR(StdDev(cov00) / (r * r * split.second * sigma / n), 1.0, Tolerance());
  EXPECT_NEAR(StdDev(cov01) / (r * r * split.second * sigma / (std::sqrt(2.0) * n)), 1.0,
              Tolerance());
}

// 2,000 records in 2-D, two clusters far apart (centres (+-0.5, 0),
// standard deviation 0.05): responsibilities are 0 or 1.
DataMatrix TwoFarClusters() {
  Generator data_gen = Generator::FromSeed(41);
  const Eigen::Index n = 2000;
  DataMatrix x(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = (i % 2 == 0 ? 0.5 : -0.5) + 0.05 * SampleStandardNormal(data_gen);
    x(i, 1) = 0.05 * SampleStandardNormal(data_gen);
  }
  return x;
}

TEST(PrivateGmmStatisticalTest, AveragingTheLastIteratesShrinksTheNoise) {
  // Two clusters far apart (responsibilities 0 or 1), J = 10 from the
  // private start in the noisy regime (r >= kQuietCentreRatio) at epsilon
  // = 1, where a mean's noise (about 0.01 per coordinate) is small against
  // the clusters' spread (0.05), so that the frames clip almost nothing and
  // each iterate's mean is the data's cluster mean plus that iteration's
  // noise alone. The average of the last 5 iterates, weighted 1 to 5 (equal
  // budgets in d = 2), then has sum(i^2) / sum(i)^2 = 55 / 225 = 0.244 of
  // one iterate's noise variance. Over 400 fits each way the ratio of the
  // sample variances of a fitted mean's coordinate is within about 10% of
  // it (one standard error; the two samples share their seeds); the test
  // allows [0.17, 0.34]. (At epsilon = 0.3 the noise, 0.08 per coordinate,
  // is larger than the clusters, the frames follow the noisy means and
  // successive iterates correlate by 0.1 to 0.2: the ratio was 0.36 there.)
  const DataMatrix x = TwoFarClusters();
  GmmFitOptions o = test_support::MakeGmmOptions(2, 10, 1.0, 1e-5, 1.0);
  o.accountant = AccountantKind::kZcdp;
  std::vector<double> averaged, last;
  for (int fit = 0; fit < 400; ++fit) {
    for (bool on : {true, false}) {
      o.iterate_averaging = on;
      Generator gen = Generator::FromSeed(5000 + fit);
      StatusOr<GmmFit> f = FitGmm(x, o, gen);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      ASSERT_EQ(f->guarantee.averaged_iterations, on ? 5 : 1);  // The noisy regime.
      const Eigen::Index right = f->parameters.means(0, 0) > 0.0 ? 0 : 1;
      (on ? averaged : last).push_back(f->parameters.means(right, 1));
    }
  }
  const double ratio = std::pow(StdDev(averaged) / StdDev(last), 2);
  EXPECT_GT(ratio, 0.17);
  EXPECT_LT(ratio, 0.34);
}

TEST(PrivateGmmStatisticalTest, ASettledAdaptiveFitHasTheNoiseOfTheThreeIterationFit) {
  // The data of the test above (TwoFarClusters) at the default J, where the
  // noise is large for it: the adaptive schedule (GmmFitOptions::adaptive_iterations)
  // against J = 3. A settled adaptive fit pools its third iteration's
  // release (30% of the J = 3 fit's third share) with three re-releases of
  // the same statistics (the other 70%), so its fitted means carry the
  // noise variance of the J = 3 fit's (inverse-variance weights: docs/gmm.md,
  // "Adaptive J"). Over 400 fits each way the ratio of the sample variances
  // of a fitted mean's coordinate has a standard error of about 0.1; the
  // test allows [0.75, 1.33]. Not every fit settles: the movement statistic
  // is normalised by the widest frame, and with frames this wide the noise
  // alone brings it near the threshold; 300 of 400 fits settled here (the
  // test requires half). The others ran three more iterations at the held-
  // back budget and averaged them, with more noise: over all 400 fits the
  // variance ratio was 1.24 (the test allows up to 1.6; docs/gmm.md,
  // "Adaptive J").
  const DataMatrix x = TwoFarClusters();
  GmmFitOptions o = test_support::MakeGmmOptions(2, 0, 1.0, 1e-5, 1.0);
  o.accountant = AccountantKind::kZcdp;
  std::vector<double> adaptive, three, all;
  int settled = 0;
  for (int fit = 0; fit < 400; ++fit) {
    for (bool on : {true, false}) {
      o.adaptive_iterations = on;
      Generator gen = Generator::FromSeed(9000 + fit);
      StatusOr<GmmFit> f = FitGmm(x, o, gen);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      ASSERT_EQ(f->iterations, on ? kAdaptiveIterations : kDefaultPrivateStartIterations);
      const Eigen::Index right = f->parameters.means(0, 0) > 0.0 ? 0 : 1;
      if (on) all.push_back(f->parameters.means(right, 1));
      if (on && !f->guarantee.settled) continue;
      settled += on;
      (on ? adaptive : three).push_back(f->parameters.means(right, 1));
    }
  }
  EXPECT_GE(settled, 200);
  const double ratio = std::pow(StdDev(adaptive) / StdDev(three), 2);
  EXPECT_GT(ratio, 0.75);
  EXPECT_LT(ratio, 1.33);
  EXPECT_LT(std::pow(StdDev(all) / StdDev(three), 2), 1.6);
}

}  // namespace
}  // namespace dpem
