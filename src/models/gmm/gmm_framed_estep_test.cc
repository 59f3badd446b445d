// The framed statistics of a private pass in component frames
// (ComputeFramedStatistics): against an independent per-record computation,
// the unit-ball property every framed contribution must have, and the joint
// sensitivity by brute force over neighbouring data sets.
#include <gtest/gtest.h>

#include <Eigen/QR>

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

// The largest distance between the released (normalised) framed statistics
// of `base` with row `row` replaced by each of `candidates` in turn: the
// brute-force neighbour sensitivity.
template <typename Candidates>
double LargestNeighbourDistance(const GmmParameters& p, const std::vector<ComponentFrame>& frames,
                                const JointNoiseScales& split, const DataMatrix& base,
                                Eigen::Index row, const Candidates& candidates,
                                const Engine& engine) {
  std::vector<Eigen::VectorXd> released;
  for (const auto& c : candidates) {
    DataMatrix y = base;
    y.row(row) = c.transpose();
    const StatusOr<GmmStatistics> s =
        ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(y), engine);
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return std::numeric_limits<double>::infinity();
    released.push_back(Normalised(*s, split));
  }
  double worst = 0.0;
  for (size_t a = 0; a < released.size(); ++a) {
    for (size_t b = a + 1; b < released.size(); ++b) {
      worst = std::max(worst, (released[a] - released[b]).norm());
    }
  }
  return worst;
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
    const double worst = LargestNeighbourDistance(p, frames, split, base, 0, candidates,
                                                  *Engine::Create(EngineOptions{}));
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

// ---------------------------------------------------------------------------
// Adversarial review (review15): every compiled kernel's lanes and tail, the
// general path, hostile frames, and the frame check.

Engine MakeEngine(int threads, Eigen::Index block_rows) {
  EngineOptions o;
  o.threads = threads;
  o.block_rows = block_rows;
  return *Engine::Create(o);
}

// Component 0: a hostile frame at m0 = -0.5 e_1 (condition number `cond`,
// largest variance 1e-3); component 1: a tiny round component at +0.5 e_1
// where the filler records sit. A filler record's responsibility for
// component 0 underflows to exactly 0, so component 0's statistics are
// exactly the one hostile record's contribution (when its g_0 is 1).
GmmParameters HostileFramePair(CovarianceType type, int d, double cond, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector2d(0.5, 0.5);
  p.means = Eigen::MatrixXd::Zero(2, d);
  p.means(0, 0) = -0.5;
  p.means(1, 0) = 0.5;
  Eigen::MatrixXd a(d, d);
  for (Eigen::Index i = 0; i < a.size(); ++i) a(i) = z(rng);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  const Eigen::MatrixXd q = qr.householderQ();
  Eigen::VectorXd eig(d);
  for (int j = 0; j < d; ++j) {
    eig(j) = 1e-3 * std::pow(cond, -(d == 1 ? 0.0 : static_cast<double>(j) / (d - 1)));
  }
  Eigen::MatrixXd c = q * eig.asDiagonal() * q.transpose();
  c = 0.5 * (c + c.transpose());
  if (type == CovarianceType::kDiagonal) c = Eigen::MatrixXd(eig.asDiagonal());
  if (type == CovarianceType::kSpherical) c = 1e-3 * Eigen::MatrixXd::Identity(d, d);
  p.covariances.push_back(c);
  p.covariances.push_back(1e-8 * Eigen::MatrixXd::Identity(d, d));
  return p;
}

// Every computed contribution g (1, u, u u^T) lies in the unit ball, in long
// double, whatever the lane of the compiled kernel (rows 0..7 of a group of
// eight), the scalar tail, the general path (d > 16), the block size and
// the frame: records exactly on, just inside and just outside the frame's
// boundary, far away, along the frame's axes and at random directions.
TEST(FramedStatisticsReviewTest, EveryLaneAndTailKeepsItsContributionInTheUnitBall) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 2, 3, 7, 8, 9, 15, 16, 17, 24}) {
      for (double cond : {1.0, 1e4, 1e8}) {
        const GmmParameters p = HostileFramePair(type, d, cond, 100u + static_cast<unsigned>(d));
        const double rho = DefaultFrameRadius(d);
        const std::vector<ComponentFrame> frames = *ChooseFrames(p, rho);
        ASSERT_TRUE(frames[0].local && frames[1].local) << d;
        const Eigen::MatrixXd& s0 = frames[0].scale;
        const Eigen::VectorXd m0 = frames[0].origin;
        const int n = 13;  // One group of eight and a tail of five.
        DataMatrix x(n, d);
        for (int i = 0; i < n; ++i) x.row(i) = p.means.row(1);
        long double largest = 0.0L, clipped_smallest = 1.0L;
        int checked = 0;
        for (int trial = 0; trial < 16; ++trial) {
          Eigen::VectorXd dir(d);
          if (trial < d && trial < 8) {
            dir = Eigen::VectorXd::Unit(d, trial);  // Frame axes.
          } else {
            for (int j = 0; j < d; ++j) dir(j) = z(rng);
            dir.normalize();
          }
          for (double r : {0.0, 0.5, 1.0 - 1e-12, 1.0 - 1e-13, 1.0, 1.0 + 1e-15, 1.0 + 1e-13,
                           1.0 + 1e-12, 1.5, 40.0}) {
            Eigen::VectorXd v = m0 + s0 * (r * dir);
            if (v.norm() > 1.0) v.normalize();
            for (int row : {0, 3, 7, 8, 12}) {
              for (Eigen::Index block : {Eigen::Index{0}, Eigen::Index{1}, Eigen::Index{5}}) {
                DataMatrix y = x;
                y.row(row) = v.transpose();
                const StatusOr<GmmStatistics> st = ComputeFramedStatistics(
                    p, frames, *MatrixRowSource::Borrow(y), MakeEngine(1, block));
                ASSERT_TRUE(st.ok()) << st.status().ToString();
                if (st->counts(0) != 1.0) continue;  // g_0 must be exactly 1.
                ++checked;
                const Eigen::VectorXd u = st->sums.row(0).transpose();
                long double sq = 0.0L;
                for (int j = 0; j < d; ++j) sq += static_cast<long double>(u(j)) * u(j);
                const long double norm = std::sqrt(sq);
                largest = std::max(largest, norm);
                if (r > 1.0 + 1e-12) clipped_smallest = std::min(clipped_smallest, norm);
                long double t = 0.0L;  // ||T(u)|| (in the released representation).
                if (type == CovarianceType::kFull) {
                  const Eigen::MatrixXd& m = st->second_full[0];
                  for (Eigen::Index i = 0; i < m.size(); ++i) {
                    t += static_cast<long double>(m(i)) * m(i);
                  }
                } else if (type == CovarianceType::kDiagonal) {
                  for (int j = 0; j < d; ++j) {
                    t += static_cast<long double>(st->second_diag(0, j)) * st->second_diag(0, j);
                  }
                } else {
                  t = static_cast<long double>(st->second_trace(0)) * st->second_trace(0);
                }
                ASSERT_LE(norm, 1.0L) << "type " << static_cast<int>(type) << " d " << d
                                      << " cond " << cond << " r " << r << " row " << row;
                ASSERT_LE(std::sqrt(t), 1.0L) << "type " << static_cast<int>(type) << " d " << d;
              }
            }
          }
        }
        EXPECT_GT(checked, 100) << d;
        EXPECT_LE(largest, 1.0L);
        EXPECT_GT(clipped_smallest, 1.0L - 1e-9L) << "type " << static_cast<int>(type) << " d " << d;
      }
    }
  }
}

// An ill-conditioned (kappa 1e4 to 1e8), tiny component around a mean of
// norm 0.98, through ComputeFramedStatistics itself (the pass clips with
// its own vectorised scales, ClipScales, inside the kernels), each record
// alone in component 0
// at every position of a block of 16 (two groups of eight lanes) and of 13
// (a scalar tail): every accumulated u, in long double, has norm <= 1.
TEST(FramedStatisticsReviewTest, AccumulatedContributionsAreInTheBallForIllConditionedOffCentreFrames) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  for (double small : {1e-6, 1e-8, 1e-10}) {
    GmmParameters p;
    p.type = CovarianceType::kFull;
    p.weights = Eigen::Vector2d(0.5, 0.5);
    p.means = Eigen::MatrixXd(2, 2);
    p.means << 0.69, 0.69, -0.5, 0.0;
    const double a = 0.6;
    Eigen::Matrix2d r;
    r << std::cos(a), -std::sin(a), std::sin(a), std::cos(a);
    p.covariances = {r * Eigen::Vector2d(small, 1e-2).asDiagonal() * r.transpose(),
                     1e-8 * Eigen::MatrixXd::Identity(2, 2)};
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    ASSERT_TRUE(frames[0].local);
    const ComponentFrame& f = frames[0];
    long double largest = 0.0L;
    int checked = 0;
    for (int n : {16, 13}) {
      DataMatrix filler(n, 2);
      filler.rowwise() = p.means.row(1);
      for (int t = 0; t < 200; ++t) {
        const Eigen::Vector2d dir = Eigen::Vector2d(z(rng), z(rng)).normalized();
        constexpr double kRadii[] = {1.0, 1.0 - 1e-13, 1.0 + 1e-13, 1e3};
        Eigen::Vector2d v = f.origin + f.scale * (kRadii[t % 4] * dir);
        if (v.norm() > 1.0) v.normalize();
        for (int row = 0; row < n; ++row) {
          DataMatrix x = filler;
          x.row(row) = v.transpose();
          const StatusOr<GmmStatistics> st = ComputeFramedStatistics(
              p, frames, *MatrixRowSource::Borrow(x), MakeEngine(1, 0));
          ASSERT_TRUE(st.ok());
          if (st->counts(0) != 1.0) continue;
          ++checked;
          const long double sq = static_cast<long double>(st->sums(0, 0)) * st->sums(0, 0) +
                                 static_cast<long double>(st->sums(0, 1)) * st->sums(0, 1);
          largest = std::max(largest, sq);
        }
      }
    }
    EXPECT_GT(checked, 4000);
    EXPECT_LE(largest, 1.0L) << small;
    EXPECT_GT(largest, 1.0L - 1e-11L) << small;
  }
}

// Neighbours (one record replaced, in a lane of the compiled kernel or in
// its scalar tail) never differ by more than the joint sensitivity, for
// K = 1 and K = 2, in the dimensions at the kernels' edges, for block sizes
// 1, 8 and the default.
TEST(FramedStatisticsReviewTest, NeighboursAtTheKernelsEdgesStayWithinTheSensitivity) {
  std::mt19937_64 rng(13);
  std::normal_distribution<double> z(0.0, 1.0);
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 16, 17}) {
      for (int k_count : {1, 2}) {
        GmmParameters p = SmallComponents(type, k_count + 1, d, 30u + static_cast<unsigned>(d));
        // Drop the broad component (K = k_count local frames).
        p.weights = Eigen::VectorXd::Constant(k_count, 1.0 / k_count);
        p.means.conservativeResize(k_count, d);
        p.covariances.resize(static_cast<size_t>(k_count));
        const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
        for (const ComponentFrame& f : frames) ASSERT_TRUE(f.local);
        const JointNoiseScales split = DefaultJointNoiseSplit(type, d, k_count);
        const double bound = JointSensitivity(type, split);
        DataMatrix base = DrawRecords(p, 13, 5u);
        std::vector<Eigen::VectorXd> candidates;
        for (int k = 0; k < k_count; ++k) {
          const ComponentFrame& f = frames[static_cast<size_t>(k)];
          for (int t = 0; t < 8; ++t) {
            Eigen::VectorXd dir(d);
            for (int j = 0; j < d; ++j) dir(j) = z(rng);
            dir.normalize();
            for (double r : {1.0, 1.0 + 1e-12, 3.0}) candidates.push_back(f.origin + f.scale * dir * r);
          }
        }
        for (int t = 0; t < 10; ++t) {
          Eigen::VectorXd v(d);
          for (int j = 0; j < d; ++j) v(j) = z(rng);
          candidates.push_back(v.normalized());
        }
        for (Eigen::VectorXd& c : candidates) {
          if (c.norm() > 1.0) c.normalize();
        }
        for (int row : {0, 12}) {
          for (Eigen::Index block : {Eigen::Index{0}, Eigen::Index{1}, Eigen::Index{8}}) {
            const double worst = LargestNeighbourDistance(p, frames, split, base, row,
                                                          candidates, MakeEngine(2, block));
            EXPECT_LE(worst, bound * (1.0 + 1e-9))
                << "type " << static_cast<int>(type) << " d " << d << " K " << k_count;
            EXPECT_GT(worst, 0.5 * bound);
          }
        }
      }
    }
  }
}

// The statistics are bitwise the same for every thread count (the blocks
// are fixed by block_rows; each block's partial is summed exactly).
TEST(FramedStatisticsReviewTest, ThreadCountsGiveBitwiseIdenticalStatistics) {
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 5, 16, 17}) {
      const GmmParameters p = SmallComponents(type, 4, d, 40u + static_cast<unsigned>(d));
      const DataMatrix x = DrawRecords(p, 1001, 41u);
      const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
      for (Eigen::Index block : {Eigen::Index{1}, Eigen::Index{7}, Eigen::Index{64}, Eigen::Index{0}}) {
        const GmmStatistics one =
            *ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), MakeEngine(1, block));
        for (int threads : {2, 3}) {
          const GmmStatistics many = *ComputeFramedStatistics(
              p, frames, *MatrixRowSource::Borrow(x), MakeEngine(threads, block));
          EXPECT_EQ(MaxDifference(one, many), 0.0) << d << " " << block << " " << threads;
        }
      }
    }
  }
}

// Parameters a fit never produces but ValidateParameters accepts: covariances
// down to subnormal eigenvalues (frame maps and whitening maps that
// overflow), a huge radius (rho^2 near the largest double), weights near 0.
// Every record's statistics stay finite, its responsibilities a point of the
// simplex and its framed contributions in the unit ball.
TEST(FramedStatisticsReviewTest, HostileParametersKeepEveryContributionFiniteAndInTheBall) {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> z(0.0, 1.0);
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 3, 16, 17}) {
      for (double tiny : {1e-10, 1e-200, 1e-300, 1e-310}) {
        for (double rho : {0.5, 3.0, 1e100, 1e140}) {
          GmmParameters p;
          p.type = type;
          p.weights = Eigen::Vector3d(1e-300, 0.5, 0.5);
          p.weights /= p.weights.sum();
          p.means = Eigen::MatrixXd::Zero(3, d);
          p.means(1, 0) = 0.3;
          p.means(2, 0) = -0.3;
          p.covariances = {tiny * Eigen::MatrixXd::Identity(d, d),
                           tiny * Eigen::MatrixXd::Identity(d, d),
                           0.5 * Eigen::MatrixXd::Identity(d, d)};
          if (!ValidateParameters(p).ok()) continue;
          const std::vector<ComponentFrame> frames = *ChooseFrames(p, rho);
          DataMatrix x(21, d);
          for (int i = 0; i < x.rows(); ++i) {
            Eigen::VectorXd v(d);
            for (int j = 0; j < d; ++j) v(j) = z(rng);
            v *= (i % 3 == 0 ? 1e-160 : 1.0) / v.norm();  // On the sphere, or at the origin.
            if (i % 5 == 0) v = p.means.row(1).transpose();
            x.row(i) = v.transpose();
          }
          for (int row = 0; row < x.rows(); ++row) {
            const DataMatrix one = x.row(row);
            const StatusOr<GmmStatistics> s = ComputeFramedStatistics(
                p, frames, *MatrixRowSource::Borrow(one), MakeEngine(1, 0));
            ASSERT_TRUE(s.ok()) << s.status().ToString();
            EXPECT_TRUE(s->counts.allFinite() && s->sums.allFinite());
            EXPECT_LE(s->counts.sum(), 1.0 + 1e-15);
            EXPECT_GE(s->counts.minCoeff(), 0.0);
            for (int k = 0; k < 3; ++k) {
              EXPECT_LE(s->sums.row(k).norm(), s->counts(k) * (1.0 + 1e-15))
                  << "type " << static_cast<int>(type) << " d " << d << " tiny " << tiny
                  << " rho " << rho << " k " << k;
            }
          }
        }
      }
    }
  }
}

// A frame marked local whose origin and scale are not this component's
// (here: left empty, or of another dimension) is refused, like any other
// frame not chosen for these parameters, instead of being read out of range.
TEST(FramedStatisticsReviewTest, RefuseLocalFramesOfTheWrongShape) {
  const GmmParameters p = SmallComponents(CovarianceType::kFull, 3, 4, 1u);
  const DataMatrix x = DrawRecords(p, 10, 2u);
  {
    std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    frames[0] = ComponentFrame{};
    frames[0].local = true;  // Empty origin and scale.
    const StatusOr<GmmStatistics> s =
        ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), TwoThreads());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  }
  {
    std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    frames[0].origin.conservativeResize(2);
    frames[0].scale.conservativeResize(2, 2);
    const StatusOr<GmmStatistics> s =
        ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(x), TwoThreads());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  }
}

// Review 18: the adaptive rule gives every component a radius of its own
// (AdaptiveFrameRadii, between NarrowFrameRadius and DefaultFrameRadius; a
// NaN, negative, tiny or huge weight lands on one of the clamps). Each
// component's frame then clips at its own radius, and Corollary 1 must hold
// with mixed radii: every single record's framed contribution lies in the
// unit ball, and neighbours (a record replaced by points on, just outside and
// far outside each component's own boundary) never differ by more than
// JointSensitivity, for d = 1 (both clamps equal), the compiled kernels
// (d <= 16) and the general path (d = 17).
TEST(FramedStatisticsReviewTest, PerComponentAdaptiveRadiiKeepTheJointSensitivity) {
  std::mt19937_64 rng(18);
  std::normal_distribution<double> z(0.0, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (CovarianceType type : kAllCovarianceTypes) {
    for (int d : {1, 2, 5, 16, 17}) {
      GmmParameters p = SmallComponents(type, 4, d, 180u + static_cast<unsigned>(d));
      p.means.conservativeResize(3, d);
      p.covariances.resize(3);
      p.weights = Eigen::Vector3d(0.5, 0.3, 0.2);  // The fit's weights (valid).
      // The radii the rule gives for weights far apart (and for NaN / huge).
      const Eigen::VectorXd radii =
          AdaptiveFrameRadii(Eigen::Vector3d(1e-9, nan, 1e9), 1e4, 1.0, d);
      const double lo = NarrowFrameRadius(d), hi = DefaultFrameRadius(d);
      ASSERT_EQ(radii(0), lo);
      ASSERT_EQ(radii(1), lo);
      ASSERT_EQ(radii(2), hi);
      const Eigen::VectorXd mixed = Eigen::Vector3d(lo, hi, 0.5 * (lo + hi));
      for (const Eigen::VectorXd& r : {radii, mixed}) {
        const std::vector<ComponentFrame> frames = *ChooseFrames(p, r);
        for (int k = 0; k < 3; ++k) {
          ASSERT_TRUE(frames[static_cast<size_t>(k)].local) << d << " " << k;
          ASSERT_EQ(frames[static_cast<size_t>(k)].radius, r(k));
        }
        const JointNoiseScales split = DefaultJointNoiseSplit(type, d, 3);
        const double bound = JointSensitivity(type, split);
        const DataMatrix base = DrawRecords(p, 9, 7u);
        std::vector<Eigen::VectorXd> candidates;
        for (int k = 0; k < 3; ++k) {
          const ComponentFrame& f = frames[static_cast<size_t>(k)];
          for (int t = 0; t < 4; ++t) {
            Eigen::VectorXd dir(d);
            for (int j = 0; j < d; ++j) dir(j) = z(rng);
            dir.normalize();
            for (double s : {1.0, 1.0 + 1e-12, 2.0, 50.0}) {
              candidates.push_back(f.origin + f.scale * dir * s);
            }
          }
        }
        for (Eigen::VectorXd& c : candidates) {
          if (c.norm() > 1.0) c.normalize();
        }
        for (const Eigen::VectorXd& c : candidates) {  // Each record alone: in the ball.
          const DataMatrix one = c.transpose();
          const GmmStatistics s =
              *ComputeFramedStatistics(p, frames, *MatrixRowSource::Borrow(one), MakeEngine(1, 0));
          for (int k = 0; k < 3; ++k) {
            // Up to the exact sum's quantum (2^-52 absolute per entry; engine/exact_sum.h),
            // which is large against a tiny responsibility's own rounding.
            ASSERT_LE(s.sums.row(k).norm(), s.counts(k) * (1.0 + 1e-12) + 1e-15)

                << "type " << static_cast<int>(type) << " d " << d << " k " << k;
          }
        }
        for (Eigen::Index block : {Eigen::Index{0}, Eigen::Index{8}}) {
          const double worst = LargestNeighbourDistance(p, frames, split, base, 4, candidates,
                                                        MakeEngine(2, block));
          EXPECT_LE(worst, bound * (1.0 + 1e-9))
              << "type " << static_cast<int>(type) << " d " << d;
          EXPECT_GT(worst, 0.5 * bound);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dpem::internal::frames_testing

namespace dpem::internal::frames_testing {
namespace {

// Review (review-frames): a record must never erase its block. The exact
// sum folds a NaN block partial as 0, so a record whose framed contribution
// were NaN would silently remove its block's other records; the hostile
// test above bounds the counts from above only, which such an erasure
// passes. Here, for random hostile parameters (weights 0 or 1e-300, means up
// to 1e300, eigenvalues from 1e-310 to 1e300, random rotations) and radii
// (1e-300 to 1e160 and infinity, per component), every adversarial record
// alone gives total count 1, with a companion record in the same block 2,
// and each component's sum and second moment stay within its count.
TEST(FramedStatisticsReviewTest, NoRecordErasesItsBlockUnderHostileFrames) {
  std::mt19937_64 rng(20261125);
  std::normal_distribution<double> z(0.0, 1.0);
  auto pick = [&](std::initializer_list<double> v) { return *(v.begin() + rng() % v.size()); };
  const Engine engine = MakeEngine(1, 0);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const CovarianceType type = kAllCovarianceTypes[rng() % 3];
    const int d = static_cast<int>(pick({1, 2, 3, 8, 9, 16, 17, 24}));
    const int k_count = static_cast<int>(pick({1, 2, 3, 5}));
    GmmParameters p;
    p.type = type;
    p.weights.resize(k_count);
    for (int k = 0; k < k_count; ++k) p.weights(k) = pick({0.0, 1e-300, 1e-17, 0.3, 1.0});
    if (p.weights.sum() == 0.0) p.weights(0) = 1.0;
    p.weights /= p.weights.sum();
    p.means.resize(k_count, d);
    for (int k = 0; k < k_count; ++k) {
      Eigen::VectorXd v(d);
      for (int j = 0; j < d; ++j) v(j) = z(rng);
      v *= pick({0.0, 0.3, 0.99, 3.0, 1e10, 1e150, 1e300}) / v.norm();
      p.means.row(k) = v.transpose();
    }
    for (int k = 0; k < k_count; ++k) {
      Eigen::VectorXd ev(d);
      for (int j = 0; j < d; ++j) {
        ev(j) = pick({1e-310, 1e-300, 1e-200, 1e-30, 1e-10, 1e-3, 0.5, 10.0, 1e100, 1e300});
      }
      if (type == CovarianceType::kSpherical) ev.setConstant(ev(0));
      Eigen::MatrixXd c = ev.asDiagonal();
      if (type == CovarianceType::kFull && rng() % 2) {
        Eigen::MatrixXd a(d, d);
        for (int i = 0; i < d; ++i) for (int j = 0; j < d; ++j) a(i, j) = z(rng);
        const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(a).householderQ();
        c = q * ev.asDiagonal() * q.transpose();
        c = 0.5 * (c + c.transpose()).eval();
      }
      p.covariances.push_back(c);
    }
    if (!ValidateParameters(p).ok()) continue;
    Eigen::VectorXd radii(k_count);
    for (int k = 0; k < k_count; ++k) {
      radii(k) = pick({1e-300, 1e-160, 1e-30, 0.01, 0.5, 3.0, 1e100, 1e160, kInf});
    }
    const StatusOr<std::vector<ComponentFrame>> frames = ChooseFrames(p, radii);
    ASSERT_TRUE(frames.ok()) << frames.status().ToString();
    std::vector<Eigen::VectorXd> records{Eigen::VectorXd::Zero(d)};
    for (double r : {1.0, 1e-160, 1e-310}) {
      Eigen::VectorXd v(d);
      for (int j = 0; j < d; ++j) v(j) = z(rng);
      v *= r / v.norm();
      if (v.norm() > 1.0) v /= v.norm() * (1.0 + 1e-15);
      records.push_back(v);
    }
    for (int k = 0; k < k_count; ++k) {
      const Eigen::VectorXd m = p.means.row(k).transpose();
      if (m.norm() > 1.0) continue;
      records.push_back(m);
      const ComponentFrame& f = (*frames)[static_cast<size_t>(k)];
      if (!f.local) continue;
      Eigen::VectorXd dir(d);
      for (int j = 0; j < d; ++j) dir(j) = z(rng);
      const Eigen::VectorXd v = m + f.scale * (dir / dir.norm());
      if (v.allFinite() && v.norm() <= 1.0) records.push_back(v);
    }
    Eigen::VectorXd companion = Eigen::VectorXd::Zero(d);
    companion(0) = 0.1;
    for (const Eigen::VectorXd& r : records) {
      for (int rows : {1, 2}) {
        DataMatrix x(rows, d);
        x.row(0) = r.transpose();
        if (rows == 2) x.row(1) = companion.transpose();
        const StatusOr<GmmStatistics> s =
            ComputeFramedStatistics(p, *frames, *MatrixRowSource::Borrow(x), engine);
        ASSERT_TRUE(s.ok()) << s.status().ToString();
        ++checked;
        EXPECT_NEAR(s->counts.sum(), rows, 1e-9) << "trial " << trial << " d " << d;
        if (rows == 2) continue;
        for (int k = 0; k < k_count; ++k) {
          const double g = s->counts(k);
          const double second = type == CovarianceType::kFull ? s->second_full[k].norm()
                                : type == CovarianceType::kDiagonal
                                    ? s->second_diag.row(k).norm()
                                    : std::fabs(s->second_trace(k));
          EXPECT_LE(s->sums.row(k).norm(), g * (1.0 + 1e-11) + 1e-15) << "trial " << trial;
          EXPECT_LE(second, g * (1.0 + 1e-11) + 1e-15) << "trial " << trial;
        }
      }
    }
  }
  EXPECT_GT(checked, 2000);
}

}  // namespace
}  // namespace dpem::internal::frames_testing
