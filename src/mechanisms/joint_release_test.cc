// ReleaseJointStatistics and CheckJointRelease: the noise of a joint release
// by block, what the ledger records (continuous and discrete noise), and the
// refusals (the sensitivity itself: joint_sensitivity_test.cc).
#include "dpem/mechanisms/joint_release.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/gmm/gmm.h"

namespace dpem {
namespace {

// ---- ReleaseJointStatistics: the noise and what the ledger records. ----

constexpr double kZ = 2.0;     // Noise multiplier of the release tests.
constexpr int kNoiseRuns = 2000;

// K = 2 components in d = 2 (values arbitrary, symmetric second moments).
GmmStatistics SmallStatistics(CovarianceType type, double scale = 1.0) {
  GmmStatistics s;
  s.type = type;
  s.n = 10;
  s.counts = Eigen::Vector2d(4.0, 6.0) * scale;
  s.sums = (Eigen::MatrixXd(2, 2) << 0.5, -0.25, 1.0, 0.75).finished() * scale;
  const Eigen::MatrixXd a = (Eigen::MatrixXd(2, 2) << 1.5, 0.3, 0.3, 0.7).finished() * scale;
  if (type == CovarianceType::kFull) s.second_full = {a, 2.0 * a};
  if (type == CovarianceType::kDiagonal) s.second_diag = Eigen::MatrixXd::Constant(2, 2, scale);
  if (type == CovarianceType::kSpherical) s.second_trace = Eigen::Vector2d(2.2, 3.1) * scale;
  return s;
}

// Released coordinates of SmallStatistics: K + K d + K (d (d + 1) / 2 | d | 1).
double SmallCoordinates(CovarianceType type) {
  return 2 + 4 + (type == CovarianceType::kFull ? 6 : type == CovarianceType::kDiagonal ? 4 : 2);
}

// The noise of one release as (block-normalised value, block) pairs: block 0
// counts, 1 sums, 2 second-moment diagonal / trace, 3 full off-diagonal.
// The normalised value divides by the block's scale (split_2 / sqrt(2) off
// the diagonal), so with noise scale sigma every block's noise is N(0, sigma^2).
std::vector<std::pair<double, int>> NoiseCoordinates(const GmmStatistics& s,
                                               const JointNoiseScales& w) {
  std::vector<std::pair<double, int>> out;
  for (double v : s.counts) out.push_back({v / w.counts, 0});
  for (double v : s.sums.reshaped()) out.push_back({v / w.sums, 1});
  for (const Eigen::MatrixXd& m : s.second_full) {
    for (int i = 0; i < 2; ++i) {
      out.push_back({m(i, i) / w.second, 2});
      for (int j = i + 1; j < 2; ++j) out.push_back({std::sqrt(2.0) * m(i, j) / w.second, 3});
    }
  }
  for (double v : s.second_diag.reshaped()) out.push_back({v / w.second, 2});
  for (double v : s.second_trace) out.push_back({v / w.second, 2});
  return out;
}

TEST(JointReleaseTest, NoiseHasTheBlockScalesAndTheLedgerTheRelease) {
  const JointNoiseScales split{0.7, 1.3, 2.1};
  for (NoiseSampling sampling : {NoiseSampling::kContinuous, NoiseSampling::kDiscrete}) {
    for (CovarianceType type :
         {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
      const bool discrete = sampling == NoiseSampling::kDiscrete;
      SCOPED_TRACE(std::string(CovarianceTypeName(type)) + (discrete ? " discrete" : ""));
      const GmmStatistics base = SmallStatistics(type);
      const auto exact = NoiseCoordinates(base, split);
      const double delta = JointSensitivity(type, split);
      // Granularity rule of additive_noise.h: 2^floor(log2(z Delta)) / 2^20.
      const double g = std::ldexp(std::exp2(std::floor(std::log2(kZ * delta))), -kDiscreteGridBits);
      // additive_noise.h, "What is computed": the floating-point margin
      // 2^-19, the exact sums' quantum 2^-52 over the smallest weight
      // (an off-diagonal entry's, 2.1 / sqrt(2), or the counts' 0.7), and
      // 5/4 g per sqrt(coordinate).
      const double quantum = std::exp2(-52.0) / std::min(0.7, 2.1 / std::sqrt(2.0));
      const double charged = delta * (1 + std::exp2(-19.0)) +
                             (quantum + 1.25 * g) * std::sqrt(SmallCoordinates(type));
      Generator gen = Generator::FromSeed(31);
      PrivacyLedger ledger;
      double sq[4] = {0, 0, 0, 0}, n[4] = {0, 0, 0, 0};
      for (int run = 0; run < kNoiseRuns; ++run) {
        GmmStatistics s = base;
        ASSERT_TRUE(ReleaseJointStatistics(s, split, kZ, "r", gen, ledger, sampling).ok());
        EXPECT_TRUE(std::isnan(s.log_likelihood));
        for (const Eigen::MatrixXd& m : s.second_full) EXPECT_EQ(m(0, 1), m(1, 0));
        const auto noisy = NoiseCoordinates(s, split);
        ASSERT_EQ(noisy.size(), static_cast<size_t>(SmallCoordinates(type)));
        for (size_t i = 0; i < noisy.size(); ++i) {
          const double e = noisy[i].first - exact[i].first;
          sq[noisy[i].second] += e * e;
          n[noisy[i].second] += 1;
          // Discrete: every normalised output is an integer number of grid units.
          const double units = noisy[i].first / g;
          if (discrete) ASSERT_NEAR(units, std::nearbyint(units), 1e-6) << i;
        }
      }
      ASSERT_EQ(ledger.size(), static_cast<size_t>(kNoiseRuns));
      const Release& r = ledger.releases()[0];
      EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
      EXPECT_GE(r.NoiseMultiplier(), kZ);
      if (discrete) {  // The charged sensitivity, and t g >= z Delta' with t an integer.
        EXPECT_GE(r.sensitivity, charged);
        EXPECT_LE(r.sensitivity, charged * (1 + 1e-15));
        EXPECT_EQ(r.noise_scale / g, std::ceil(r.noise_scale / g));
        EXPECT_LT(r.noise_scale, kZ * r.sensitivity + g);
      } else {
        EXPECT_EQ(r.sensitivity, delta);
        EXPECT_EQ(r.noise_scale, std::nextafter(kZ * delta, INFINITY));
      }
      for (int b = 0; b < 4; ++b) {  // Relative sd of the estimate about 1.1% (counts).
        if (n[b] > 0) EXPECT_NEAR(std::sqrt(sq[b] / n[b]) / r.noise_scale, 1.0, 0.07) << b;
      }
    }
  }
}

TEST(JointReleaseTest, DiscreteGridDependsOnPublicQuantitiesOnly) {
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 2, 2);
  PrivacyLedger ledger;
  Generator gen = Generator::FromSeed(32);
  for (double scale : {1.0, 1e-3, 250.0}) {
    GmmStatistics s = SmallStatistics(CovarianceType::kFull, scale);
    ASSERT_TRUE(ReleaseJointStatistics(s, split, kZ, "r", gen, ledger).ok());  // Default.
  }
  for (const Release& r : ledger.releases()) {
    EXPECT_EQ(r.sensitivity, ledger.releases()[0].sensitivity);
    EXPECT_EQ(r.noise_scale, ledger.releases()[0].noise_scale);
  }
  EXPECT_GT(ledger.releases()[0].sensitivity, JointSensitivity(CovarianceType::kFull, split));
}

TEST(JointReleaseTest, ErrorsRecordNothingAndLeaveTheStatistics) {
  const JointNoiseScales split{1.0, 1.0, 1.0};
  Generator gen = Generator::FromSeed(33);
  PrivacyLedger ledger;
  GmmStatistics bad = SmallStatistics(CovarianceType::kSpherical);
  bad.sums(0, 0) = NAN;
  for (NoiseSampling sampling : {NoiseSampling::kContinuous, NoiseSampling::kDiscrete}) {
    EXPECT_EQ(ReleaseJointStatistics(bad, split, kZ, "r", gen, ledger, sampling).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(ReleaseJointStatistics(bad, split, 0.0, "r", gen, ledger, sampling).code(),
              StatusCode::kInvalidArgument);
  }
  GmmStatistics good = SmallStatistics(CovarianceType::kSpherical);
  EXPECT_EQ(ReleaseJointStatistics(good, split, kZ, "r", gen, ledger,
                                   static_cast<NoiseSampling>(7))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(good.counts, SmallStatistics(CovarianceType::kSpherical).counts);
  EXPECT_EQ(good.log_likelihood, 0.0);
  EXPECT_EQ(ledger.size(), 0u);
}

// CheckJointRelease refuses, on public values and drawing nothing, exactly
// the joint releases that ReleaseJointStatistics refuses: here a discrete
// release of K = 10 full 100-dimensional components (51,510 coordinates)
// whose multiplier is so large that the rounding charge leaves no grid.
TEST(CheckJointReleaseTest, AgreesWithTheRelease) {
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 100, 10);
  for (double z : {10.0, 1e5}) {
    const Status check = CheckJointRelease(CovarianceType::kFull, split, z, 10, 100);
    GmmStatistics zero;
    zero.type = CovarianceType::kFull;
    zero.counts = Eigen::VectorXd::Zero(10);
    zero.sums = Eigen::MatrixXd::Zero(10, 100);
    zero.second_full.assign(10, Eigen::MatrixXd::Zero(100, 100));
    Generator gen = Generator::FromSeed(1);
    PrivacyLedger ledger;
    const Status release = ReleaseJointStatistics(zero, split, z, "r", gen, ledger);
    EXPECT_EQ(check.ok(), release.ok()) << "z = " << z << ": " << check.ToString();
    EXPECT_EQ(check.ok(), z == 10.0);
  }
  EXPECT_TRUE(CheckJointRelease(CovarianceType::kFull, split, 1e5, 10, 100,
                                NoiseSampling::kContinuous)
                  .ok());
  EXPECT_FALSE(CheckJointRelease(CovarianceType::kFull, {0.0, 1.0, 1.0}, 10.0, 10, 100).ok());
}

}  // namespace
}  // namespace dpem
