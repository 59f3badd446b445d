// The framed statistics of a private pass in component frames
// (ComputeFramedStatistics): against an independent per-record computation,
// the unit-ball property every framed contribution must have, and the joint
// sensitivity by brute force over neighbouring data sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "dpem/mechanisms/joint_release.h"
#include "models/gmm/gmm_frames.h"
#include "testing/gmm_frames_reference.h"
#include "testing/gmm_reference.h"

namespace dpem::internal::frames_testing {
namespace {

using gmm_testing::kAllCovarianceTypes;

double MaxDifference(const GmmStatistics& a, const GmmStatistics& b) {
  double m = (a.counts - b.counts).cwiseAbs().maxCoeff();
  m = std::max(m, (a.sums - b.sums).cwiseAbs().maxCoeff());
  for (size_t k = 0; k < a.second_full.size(); ++k) {
    m = std::max(m, (a.second_full[k] - b.second_full[k]).cwiseAbs().maxCoeff());
  }
  if (a.second_diag.size()) m = std::max(m, (a.second_diag - b.second_diag).cwiseAbs().maxCoeff());
  if (a.second_trace.size()) {
    m = std::max(m, (a.second_trace - b.second_trace).cwiseAbs().maxCoeff());
  }
  return m;
}

Engine TwoThreads() {
  EngineOptions o;
  o.threads = 2;
  o.block_rows = 7;  // Many blocks: the merge is exercised.
  return *Engine::Create(o);
}

TEST(FramedStatisticsTest, GlobalFramesReproduceThePlainPass) {
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
    const DataMatrix x = Records(p, 301, 5);
    const MatrixRowSource src = *MatrixRowSource::Borrow(x);
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, kInf);
    const StatusOr<GmmStatistics> framed = ComputeFramedStatistics(p, frames, src, TwoThreads());
    const StatusOr<GmmStatistics> plain = ComputeStatistics(p, src, TwoThreads());
    ASSERT_TRUE(framed.ok() && plain.ok());
    EXPECT_LT(MaxDifference(*framed, *plain), 1e-12);
    EXPECT_NEAR(framed->log_likelihood, plain->log_likelihood, 1e-9);
  }
}

TEST(FramedStatisticsTest, MatchAnExplicitPerRecordComputation) {
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
    const DataMatrix x = Records(p, 400, 6);
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    const StatusOr<GmmStatistics> framed =
        ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), TwoThreads());
    ASSERT_TRUE(framed.ok()) << framed.status().ToString();
    int clipped = 0;
    const GmmStatistics expected = ExplicitFramed(p, x, 3.0, frames, &clipped);
    EXPECT_LT(MaxDifference(*framed, expected), 1e-9) << static_cast<int>(type);
    EXPECT_GT(clipped, 100);  // The comparison covers clipped records.
  }
}

// Every dimension's path (the compiled kernels up to
// kMaxFramedKernelDimension, Eigen's products above) and every block shape
// (whole groups of eight rows and a remainder, one row, the default size)
// against the record-by-record computation; the log-likelihood against
// MeanLogLikelihood.
TEST(FramedStatisticsTest, MatchThePerRecordComputationInEveryDimension) {
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 3, 10, 16, 17, 24}) {
      const GmmParameters p = SmallComponents(type, 4, d, 10u + static_cast<unsigned>(d));
      const DataMatrix x = DrawRecords(p, 301, 20u + static_cast<unsigned>(d));
      const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
      ASSERT_TRUE(frames[0].local && !frames[3].local) << d;
      int clipped = 0;
      const GmmStatistics expected = ExplicitFramed(p, x, 3.0, frames, &clipped);
      EXPECT_GT(clipped, 100);
      const double log_likelihood = *MeanLogLikelihood(p, x) * static_cast<double>(x.rows());
      for (Eigen::Index rows : {Eigen::Index{1}, Eigen::Index{37}, Eigen::Index{0}}) {
        EngineOptions o;
        o.threads = 2;
        o.block_rows = rows;
        const StatusOr<GmmStatistics> framed =
            ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), *Engine::Create(o));
        ASSERT_TRUE(framed.ok()) << framed.status().ToString();
        EXPECT_LT(MaxDifference(*framed, expected), 1e-9) << static_cast<int>(type) << " " << d;
        EXPECT_NEAR(framed->log_likelihood, log_likelihood, 1e-9 * std::abs(log_likelihood));
        for (const Eigen::MatrixXd& m : framed->second_full) EXPECT_EQ(m, m.transpose());
      }
    }
  }
}

TEST(FramedStatisticsTest, RefuseFramesChosenForOtherParameters) {
  const GmmParameters p = SmallComponents(CovarianceType::kFull, 3, 4, 1u);
  std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
  frames[0].origin(1) += 1e-3;
  const DataMatrix x = DrawRecords(p, 10, 2u);
  const StatusOr<GmmStatistics> s =
      ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), TwoThreads());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

TEST(FramedStatisticsTest, EveryFramedContributionLiesInTheUnitBall) {
  // One record at a time, N = 1: sums_k = g_k u_k and T(u_k) has norm
  // ||u_k||^2, so ||sums_k|| <= counts_k and trace / norm <= counts_k. The
  // records sit exactly on, just inside and just outside the frames'
  // boundaries, at their centres and far away.
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    const Engine engine = *Engine::Create(EngineOptions{});
    double largest = 0.0, clipped_smallest = kInf;
    for (int k = 0; k < 2; ++k) {
      for (double angle = 0.0; angle < 6.283; angle += 0.1) {
        for (double r : {0.0, 0.999999999999, 1.0, 1.000000000001, 1.5, 40.0}) {
          const Eigen::Vector2d dir(std::cos(angle), std::sin(angle));
          Eigen::Vector2d x = frames[static_cast<size_t>(k)].origin +
                              frames[static_cast<size_t>(k)].scale * (r * dir);
          if (x.norm() > 1.0) x.normalize();
          const DataMatrix row = x.transpose();
          const StatusOr<GmmStatistics> s =
              ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(row), engine);
          ASSERT_TRUE(s.ok());
          for (int c = 0; c < 3; ++c) {
            if (s->counts(c) < 1e-6) continue;
            const double norm = s->sums.row(c).norm() / s->counts(c);
            largest = std::max(largest, norm);
            if (c == k && r > 1.0) clipped_smallest = std::min(clipped_smallest, norm);
          }
        }
      }
    }
    EXPECT_LE(largest, 1.0 + 1e-12);
    EXPECT_GT(clipped_smallest, 1.0 - 1e-9);  // Clipped onto the boundary, not inside.
  }
}

// The block-normalised release vector of framed statistics (joint_release.h).
Eigen::VectorXd Normalised(const GmmStatistics& s, const JointNoiseScales& split) {
  std::vector<double> v;
  for (Eigen::Index k = 0; k < s.counts.size(); ++k) v.push_back(s.counts(k) / split.counts);
  for (Eigen::Index i = 0; i < s.sums.size(); ++i) v.push_back(s.sums.reshaped()(i) / split.sums);
  for (const Eigen::MatrixXd& m : s.second_full) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = i; j < m.cols(); ++j) {
        v.push_back(m(i, j) * (i == j ? 1.0 : std::sqrt(2.0)) / split.second);
      }
    }
  }
  for (Eigen::Index i = 0; i < s.second_diag.size(); ++i) {
    v.push_back(s.second_diag.reshaped()(i) / split.second);
  }
  for (Eigen::Index i = 0; i < s.second_trace.size(); ++i) {
    v.push_back(s.second_trace(i) / split.second);
  }
  return Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

TEST(FramedStatisticsTest, NeighboursNeverDifferByMoreThanTheJointSensitivity) {
  // Replace one record of a small data set by adversarial candidates (frame
  // boundaries of different components, opposite points, far points) and by
  // random points; the released vectors never differ by more than
  // JointSensitivity, and the largest difference comes close to it.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  for (CovarianceType type : kAllCovarianceTypes) {
    GmmParameters p = TwoSmallOneBroad(type);
    p.weights = Eigen::Vector3d(0.495, 0.495, 0.01);  // Frame boundaries stay responsible.
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    const JointNoiseScales split = DefaultJointNoiseSplit(type, 2, 3);
    const double bound = JointSensitivity(type, split);
    DataMatrix base = Records(p, 6, 8);
    std::vector<Eigen::Vector2d> candidates;
    for (int k = 0; k < 2; ++k) {
      for (double angle = 0.0; angle < 6.283; angle += 0.3927) {
        for (double r : {1.0, 1.5, 2.5}) {
          const Eigen::Vector2d dir(std::cos(angle), std::sin(angle));
          candidates.push_back(frames[static_cast<size_t>(k)].origin +
                               frames[static_cast<size_t>(k)].scale * dir * r);
        }
      }
    }
    for (int i = 0; i < 40; ++i) candidates.emplace_back(unif(rng), unif(rng));
    for (Eigen::Vector2d& c : candidates) {
      if (c.norm() > 1.0) c.normalize();
    }
    const Engine engine = *Engine::Create(EngineOptions{});
    std::vector<Eigen::VectorXd> released;
    for (const Eigen::Vector2d& c : candidates) {
      base.row(0) = c.transpose();
      const StatusOr<GmmStatistics> s =
          ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(base), engine);
      ASSERT_TRUE(s.ok());
      released.push_back(Normalised(*s, split));
    }
    double worst = 0.0;
    for (size_t a = 0; a < released.size(); ++a) {
      for (size_t b = a + 1; b < released.size(); ++b) {
        worst = std::max(worst, (released[a] - released[b]).norm());
      }
    }
    std::printf("[frames] type %d: largest neighbour distance %.6f, bound %.6f (%.1f%%)\n",
                static_cast<int>(type), worst, bound, 100.0 * worst / bound);
    EXPECT_LE(worst, bound * (1.0 + 1e-9));
    EXPECT_GT(worst, 0.9 * bound);
  }
}

TEST(FramedStatisticsTest, LargeDuplicatedDataKeepTheSensitivityInATinyFrame) {
  // 20,000 copies of one point in a frame of variance 1e-6: the framed sums
  // are large, and rounding that a frame map amplified by 1 / (rho^2
  // lambda) would show up here; accumulating u directly keeps neighbours
  // within the sensitivity.
  GmmParameters p = TwoSmallOneBroad(CovarianceType::kFull);
  p.means.row(0) << 0.6, 0.3;
  p.covariances[0] = Eigen::Vector2d(1e-6, 2e-6).asDiagonal();
  const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
  ASSERT_TRUE(frames[0].local);
  const JointNoiseScales split = DefaultJointNoiseSplit(CovarianceType::kFull, 2, 3);
  const double bound = JointSensitivity(CovarianceType::kFull, split);
  DataMatrix x(20000, 2);
  x.rowwise() = Eigen::RowVector2d(0.6 + 1e-4, 0.3 - 2e-4);
  const Engine engine = *Engine::Create({2, 0});
  const Eigen::VectorXd base =
      Normalised(*ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), engine), split);
  double worst = 0.0;
  for (const Eigen::RowVector2d& other :
       {Eigen::RowVector2d(0.6 - 3e-3, 0.3), Eigen::RowVector2d(-0.5, 0.2),
        Eigen::RowVector2d(0.6, 0.3 + 1e-3), Eigen::RowVector2d(0.0, -1.0)}) {
    DataMatrix y = x;
    y.row(7) = other;
    const Eigen::VectorXd v = Normalised(
        *ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(y), engine), split);
    worst = std::max(worst, (v - base).norm());
  }
  EXPECT_LE(worst, bound * (1.0 + 1e-9));
  EXPECT_GT(worst, 0.5 * bound);
}

}  // namespace
}  // namespace dpem::internal::frames_testing
