// The frames' clip correction and adaptive radii (models/gmm/gmm_frames.h).
// Expectations come from Monte Carlo samples and sample moments computed here,
// never from the code under test.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "models/gmm/gmm_frames.h"
#include "testing/gmm_frames_reference.h"

namespace dpem::internal::frames_testing {
namespace {

// Monte Carlo moments of z ~ N(delta e_1, c I_d) clipped to radius rho:
// E[min(||z||^2, rho^2)] and E[z_1 min(1, rho / ||z||)].
struct ClippedMoments {
  double squared_norm = 0.0;
  double first = 0.0;
};

ClippedMoments SampleClipped(int d, double c, double delta, double rho, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, std::sqrt(c));
  ClippedMoments m;
  Eigen::VectorXd v(d);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) v(j) = z(rng);
    v(0) += delta;
    const double w = std::min(1.0, rho / v.norm());
    m.squared_norm += std::min(v.squaredNorm(), rho * rho) / n;
    m.first += w * v(0) / n;
  }
  return m;
}

TEST(FrameClipCorrectionTest, RecoversTheScaleAndTheOffsetOfAGaussian) {
  constexpr int kSamples = 200000;
  for (int d : {1, 2, 5, 10}) {
    for (double c : {0.6, 1.0, 1.7}) {
      for (double rho : {NarrowFrameRadius(d), std::sqrt(static_cast<double>(d))}) {
        SCOPED_TRACE("d " + std::to_string(d) + " c " + std::to_string(c) + " rho " +
                     std::to_string(rho));
        const ClippedMoments centred = SampleClipped(d, c, 0.0, rho, kSamples, 11u + d);
        const ClipCorrection cc = FrameClipCorrection(centred.squared_norm, rho, d);
        // The corrected mean square is E||z||^2 = c d.
        EXPECT_NEAR(cc.second * centred.squared_norm / (c * d), 1.0, 0.01);
        EXPECT_GT(cc.second, 1.0);
        // The corrected mean of a small offset is the offset (first order).
        const double delta = 0.2 * std::sqrt(c);
        const ClippedMoments shifted = SampleClipped(d, c, delta, rho, kSamples, 23u + d);
        EXPECT_NEAR(cc.mean * shifted.first / delta, 1.0, 0.05);
        EXPECT_GT(cc.mean, 1.0);
      }
    }
  }
}

TEST(FrameClipCorrectionTest, NoClippingNeedsNoCorrection) {
  // A component far inside its frame (c tiny against rho^2) is left as it is.
  const ClipCorrection cc = FrameClipCorrection(1e-3 * 5, 3.0, 5);
  EXPECT_NEAR(cc.second, 1.0, 1e-9);
  EXPECT_NEAR(cc.mean, 1.0, 1e-9);
}

TEST(FrameClipCorrectionTest, DegenerateReleasesGetBoundedFactors) {
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  for (double observed : {0.0, -1.0, kNan, kInf}) {
    const ClipCorrection cc = FrameClipCorrection(observed, 2.5, 4);
    EXPECT_EQ(cc.second, 1.0);
    EXPECT_EQ(cc.mean, 1.0);
  }
  // Every record on the sphere (or noise beyond it): the cap, for both.
  for (double observed : {2.5 * 2.5, 10.0}) {
    const ClipCorrection cc = FrameClipCorrection(observed, 2.5, 4);
    EXPECT_EQ(cc.second, kMaxClipCorrection);
    EXPECT_EQ(cc.mean, kMaxClipCorrection);
  }
}

// Review 18: a component far inside its frame (records within 1e-4 frame
// radii of the origin: a cluster of near-duplicates, or a frame from a
// covariance that the component has since outgrown the other way) is not
// clipped at all, so the correction must be 1. The bisection's bracket starts
// at 1e-8 of the nominal scale; below it the scale was taken as the
// bracket's end and the second-moment factor grew as 1 / observed (clamped
// to 4), inflating such a component's second moment fourfold.
TEST(FrameClipCorrectionTest, AComponentFarInsideItsFrameNeedsNoCorrection) {
  for (int d : {1, 2, 5, 17}) {
    for (double rho : {NarrowFrameRadius(d), DefaultFrameRadius(d)}) {
      for (double fraction : {1e-6, 1e-8, 3e-9, 1e-9, 1e-10, 1e-12, 1e-20, 1e-300}) {
        const ClipCorrection cc = FrameClipCorrection(fraction * rho * rho, rho, d);
        EXPECT_NEAR(cc.second, 1.0, 1e-9) << "d " << d << " rho " << rho << " " << fraction;
        EXPECT_NEAR(cc.mean, 1.0, 1e-9) << "d " << d << " rho " << rho << " " << fraction;
      }
    }
  }
}

// The more of the frame the records fill, the more the clip shrinks them:
// both factors never decrease as the observed mean square grows from 0 to
// rho^2 (no jump anywhere, in particular not at the bisection's bracket).
TEST(FrameClipCorrectionTest, FactorsNeverDecreaseWithTheObservedMeanSquare) {
  for (int d : {1, 3, 10}) {
    const double rho = NarrowFrameRadius(d);
    ClipCorrection previous{1.0, 1.0};
    for (double fraction = 1e-300; fraction < 1.2; fraction *= 1.25) {
      const ClipCorrection cc = FrameClipCorrection(fraction * rho * rho, rho, d);
      EXPECT_GE(cc.second, previous.second - 1e-12) << "d " << d << " fraction " << fraction;
      EXPECT_GE(cc.mean, previous.mean - 1e-12) << "d " << d << " fraction " << fraction;
      previous = cc;
    }
  }
}

// One component in d = 5, records drawn from `truth`; the frame is chosen from
// `frame_params` (a little off, as a noisy previous release would be).
struct OneComponent {
  GmmParameters truth, frame_params;
  DataMatrix x;
};

OneComponent MakeOneComponent(CovarianceType type = CovarianceType::kFull) {
  constexpr int kD = 5;
  OneComponent o;
  o.truth = SmallComponents(type, 2, kD, 5);
  o.truth.weights = Eigen::VectorXd::Ones(1);
  o.truth.means.conservativeResize(1, kD);
  o.truth.covariances.resize(1);
  o.x = DrawRecords(o.truth, 100000, 17);
  o.frame_params = o.truth;
  o.frame_params.covariances[0] *= 1.2;
  const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(o.truth.covariances[0]).matrixL();
  o.frame_params.means.row(0) += (0.6 * l.col(0)).transpose();
  return o;
}

// The covariance and mean that the framed statistics give back.
void Moments(const GmmStatistics& framed, const std::vector<ComponentFrame>& frames,
             Eigen::VectorXd& mean, Eigen::MatrixXd& cov) {
  const GmmStatistics g = FramedToGlobal(framed, frames);
  const double n = g.counts(0);
  mean = g.sums.row(0).transpose() / n;
  cov = g.second_full[0] / n - mean * mean.transpose();
}

TEST(CorrectFrameClippingTest, UndoesTheShrinkageOfAGaussianComponent) {
  const OneComponent o = MakeOneComponent();
  const double rho = NarrowFrameRadius(5);
  const std::vector<ComponentFrame> frames = *ChooseFrames(o.frame_params, rho);
  ASSERT_TRUE(frames[0].local);
  const GmmStatistics framed = ExplicitFramed(o.frame_params, o.x, rho, frames);
  const Eigen::VectorXd sample_mean = o.x.colwise().mean().transpose();
  const Eigen::MatrixXd centred = o.x.rowwise() - sample_mean.transpose();
  const Eigen::MatrixXd sample_cov = centred.transpose() * centred / o.x.rows();
  const double sd = std::sqrt(sample_cov.trace() / 5);

  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  Moments(framed, frames, mean, cov);  // Uncorrected: shrunk.
  EXPECT_GT((cov - sample_cov).norm() / sample_cov.norm(), 0.06);  // 9.3%.
  EXPECT_GT((mean - sample_mean).norm() / sd, 0.02);                 // 3.3%.

  GmmStatistics corrected = framed;
  CorrectFrameClipping(corrected, frames);
  EXPECT_EQ(corrected.counts, framed.counts);
  Moments(corrected, frames, mean, cov);
  EXPECT_LT((cov - sample_cov).norm() / sample_cov.norm(), 0.03);  // 1.2%.
  EXPECT_LT((mean - sample_mean).norm() / sd, 0.01);                 // 0.2%.
}

// The total variance (trace of the covariance) that the framed statistics
// give back, for the diagonal and spherical types.
double TotalVariance(const GmmStatistics& framed, const std::vector<ComponentFrame>& frames) {
  const GmmStatistics g = FramedToGlobal(framed, frames);
  const double n = g.counts(0);
  const double mean_square = (g.sums.row(0) / n).squaredNorm();
  const double second = g.type == CovarianceType::kDiagonal ? g.second_diag.row(0).sum()
                                                            : g.second_trace(0);
  return second / n - mean_square;
}

TEST(CorrectFrameClippingTest, UndoesTheShrinkageForDiagonalAndSphericalTypes) {
  for (CovarianceType type : {CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    const OneComponent o = MakeOneComponent(type);
    const double rho = NarrowFrameRadius(5);
    const std::vector<ComponentFrame> frames = *ChooseFrames(o.frame_params, rho);
    ASSERT_TRUE(frames[0].local);
    const GmmStatistics framed = ExplicitFramed(o.frame_params, o.x, rho, frames);
    const Eigen::MatrixXd centred = o.x.rowwise() - o.x.colwise().mean();
    const double sample = centred.squaredNorm() / o.x.rows();
    EXPECT_LT(TotalVariance(framed, frames) / sample, 0.95);  // Shrunk by the clip.
    GmmStatistics corrected = framed;
    CorrectFrameClipping(corrected, frames);
    EXPECT_NEAR(TotalVariance(corrected, frames) / sample, 1.0, 0.02);
  }
}

// Review 18: near-duplicate records at a local frame's origin (spread 1e-6
// in a frame of standard deviation 0.1): nothing is clipped, and the
// correction leaves the released statistics as they are.
TEST(CorrectFrameClippingTest, LeavesATightComponentAlone) {
  GmmParameters p;
  p.type = CovarianceType::kFull;
  p.weights = Eigen::VectorXd::Ones(1);
  p.means = Eigen::RowVector2d(0.3, -0.2);
  p.covariances = {0.01 * Eigen::Matrix2d::Identity()};
  const double rho = DefaultFrameRadius(2);
  const std::vector<ComponentFrame> frames = *ChooseFrames(p, rho);
  ASSERT_TRUE(frames[0].local);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z(0.0, 1e-6);
  DataMatrix x(200, 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    x.row(i) = p.means.row(0) + Eigen::RowVector2d(z(rng), z(rng));
  }
  const GmmStatistics framed = ExplicitFramed(p, x, rho, frames);
  GmmStatistics corrected = framed;
  CorrectFrameClipping(corrected, frames);
  EXPECT_LE((corrected.second_full[0] - framed.second_full[0]).norm(),
            1e-9 * framed.second_full[0].norm());
  EXPECT_LE((corrected.sums - framed.sums).norm(), 1e-9 * framed.sums.norm());
}

TEST(CorrectFrameClippingTest, LeavesGlobalFramesAlone) {
  const GmmParameters p = TwoSmallOneBroad(CovarianceType::kFull);
  const DataMatrix x = Records(p, 400, 3);
  const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
  ASSERT_FALSE(frames[2].local);
  const GmmStatistics framed = ExplicitFramed(p, x, 3.0, frames);
  GmmStatistics corrected = framed;
  CorrectFrameClipping(corrected, frames);
  EXPECT_EQ(corrected.sums.row(2), framed.sums.row(2));
  EXPECT_EQ(corrected.second_full[2], framed.second_full[2]);
  EXPECT_NE(corrected.second_full[0], framed.second_full[0]);
}

TEST(AdaptiveFrameRadiiTest, NoiseNarrowsTheFramesBetweenTheBounds) {
  const Eigen::Index d = 4;
  const double lo = NarrowFrameRadius(d), hi = DefaultFrameRadius(d);
  EXPECT_DOUBLE_EQ(lo, 2.5);
  EXPECT_DOUBLE_EQ(hi, 4.0);
  const Eigen::VectorXd weights = Eigen::Vector3d(0.01, 0.09, 0.9);
  const double n = 10000;  // Counts 100, 900, 9000: square roots 10, 30, 94.9.
  // Noise 1: rho^2 = sqrt(N_k), clamped to [6.25, 16].
  const Eigen::VectorXd r = AdaptiveFrameRadii(weights, n, 1.0, d);
  EXPECT_DOUBLE_EQ(r(0), std::sqrt(10.0));
  EXPECT_DOUBLE_EQ(r(1), hi);
  EXPECT_DOUBLE_EQ(r(2), hi);
  // Much noise: every frame narrow; no noise information: every frame wide.
  EXPECT_EQ(AdaptiveFrameRadii(weights, n, 100.0, d), Eigen::VectorXd::Constant(3, lo));
  EXPECT_EQ(AdaptiveFrameRadii(weights, n, 0.0, d), Eigen::VectorXd::Constant(3, hi));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(AdaptiveFrameRadii(Eigen::Vector3d(nan, -1.0, 0.0), n, 1.0, d),
            Eigen::VectorXd::Constant(3, lo));
}

TEST(ChooseFramesTest, TakesARadiusPerComponent) {
  const GmmParameters p = TwoSmallOneBroad(CovarianceType::kFull);
  const std::vector<ComponentFrame> f = *ChooseFrames(p, Eigen::Vector3d(2.0, 3.0, kInf));
  EXPECT_TRUE(f[0].local && f[1].local);
  EXPECT_FALSE(f[2].local);
  EXPECT_EQ(f[0].radius, 2.0);
  EXPECT_EQ(f[1].radius, 3.0);
  EXPECT_FALSE(ChooseFrames(p, Eigen::Vector2d(2.0, 3.0)).ok());
  EXPECT_FALSE(ChooseFrames(p, Eigen::Vector3d(2.0, 0.0, 3.0)).ok());
}

}  // namespace
}  // namespace dpem::internal::frames_testing
