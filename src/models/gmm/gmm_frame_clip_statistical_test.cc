// The order of an iteration's release and its clip correction
// (ReleaseIterationStatistics, models/gmm/gmm_releases.h): release, then
// correct. Both orders give the same expected statistics (the noise has mean
// zero and the correction is a scale), so only the noise tells them apart:
// corrected after the release, the noise is scaled with the statistics by the
// correction's factor F; corrected before it, the statistics are scaled and
// the noise is not, which also means the release saw statistics beyond its
// sensitivity bound. An adversarial review of the frame change (2026-11-24)
// swapped the order and no test failed; this one does, by comparing the
// empirical noise of repeated releases with the plan's public noise scale
// times F.
//
// The component's framed records fill 90% of the frame (framed statistics
// are in units of the radius), so F is far from 1. The tested entries are
// zero before the noise (the framed sums and an off-diagonal second moment),
// so that their spread is the noise alone, times a factor that the noise
// moves only at second order. Label: statistical. Fixed seeds, no retries.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpem/mechanisms/joint_release.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_releases.h"

namespace dpem::internal {
namespace {

constexpr Eigen::Index kD = 5;
constexpr double kRecords = 1e5;
constexpr double kFilled = 0.9;  // Mean square of a framed record, / rho^2.
constexpr int kReleases = 400;

double Variance(const std::vector<double>& v) {
  double mean = 0.0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

struct Spread {
  double sum = 0.0;     // Variance of a framed sum's coordinate.
  double second = 0.0;  // Variance of an off-diagonal framed second moment.
};

// The spread of kReleases releases of the same framed statistics.
Spread ReleasedSpread(const GmmReleasePlan& plan, bool correct, std::uint64_t seed) {
  const double rho = NarrowFrameRadius(kD);
  GmmStatistics framed;
  framed.type = CovarianceType::kFull;
  framed.counts = Eigen::VectorXd::Constant(1, kRecords);
  framed.sums = Eigen::MatrixXd::Zero(1, kD);
  framed.second_full = {kRecords * kFilled / kD * Eigen::MatrixXd::Identity(kD, kD)};
  framed.n = static_cast<Eigen::Index>(kRecords);
  ComponentFrame frame;
  frame.local = true;
  frame.origin = Eigen::VectorXd::Zero(kD);
  frame.scale = rho * Eigen::MatrixXd::Identity(kD, kD);
  frame.radius = rho;
  const std::vector<ComponentFrame> frames = {frame};

  Generator gen = Generator::FromSeed(seed);
  PrivacyLedger ledger;
  std::vector<double> sums, seconds;
  for (int r = 0; r < kReleases; ++r) {
    GmmStatistics s = framed;
    const Status status =
        ReleaseIterationStatistics(s, plan, frames, correct, false, 1, kRecords, gen, ledger);
    EXPECT_TRUE(status.ok()) << status.ToString();
    sums.push_back(s.sums(0, 1));
    seconds.push_back(s.second_full[0](0, 1));
  }
  return {Variance(sums), Variance(seconds)};
}

TEST(ReleaseIterationStatisticsTest, TheCorrectionScalesTheReleasedNoise) {
  const double rho = NarrowFrameRadius(kD);
  const ClipCorrection factor = FrameClipCorrection(kFilled * rho * rho, rho, kD);
  ASSERT_GT(factor.second, 1.5);
  ASSERT_GT(factor.mean, 1.3);

  GmmReleasePlan plan;
  plan.joint = true;
  plan.split = DefaultJointNoiseSplit(CovarianceType::kFull, kD, 1);
  // Noise of 0.2% of a diagonal second moment: the factor barely moves.
  plan.joint_multiplier = 2e-3 * kRecords * kFilled / kD / plan.split.second;
  // The public noise scales: a sum's coordinate, and an off-diagonal second
  // moment (released as the sqrt(2)-scaled upper triangle: half the variance).
  const double sum_var = std::pow(plan.SumsNoise(), 2);
  const double second_var = std::pow(plan.SecondNoise(), 2) / 2.0;

  // Without the correction the spread is the plan's: the test sees the noise.
  const Spread plain = ReleasedSpread(plan, false, 7);
  EXPECT_NEAR(plain.sum / sum_var, 1.0, 0.25);
  EXPECT_NEAR(plain.second / second_var, 1.0, 0.25);

  // With it, the noise is scaled with the statistics: F^2 (about 2 and 3
  // here). Corrected before the release, both ratios would be 1.
  const Spread corrected = ReleasedSpread(plan, true, 7);
  EXPECT_NEAR(corrected.sum / (sum_var * factor.mean * factor.mean), 1.0, 0.25);
  EXPECT_NEAR(corrected.second / (second_var * factor.second * factor.second), 1.0, 0.25);
}

}  // namespace
}  // namespace dpem::internal
