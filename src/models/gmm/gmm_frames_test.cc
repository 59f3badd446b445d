// Component frames (models/gmm/gmm_frames.h): the framed statistics against an
// independent per-record computation, the unit-ball property every framed
// contribution must have, the joint sensitivity by brute force over
// neighbouring data sets, and the maps back to global coordinates.
#include "models/gmm/gmm_frames.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "dpem/mechanisms/joint_release.h"

namespace dpem::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr CovarianceType kTypes[] = {CovarianceType::kFull, CovarianceType::kDiagonal,
                                     CovarianceType::kSpherical};

// Two small components (local frames at rho = 3) and one broad one (global).
GmmParameters ThreeComponents(CovarianceType type) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector3d(0.3, 0.3, 0.4);
  p.means = Eigen::MatrixXd(3, 2);
  p.means << -0.5, 0.2, 0.4, -0.3, 0.0, 0.0;
  Eigen::Matrix2d a, b;
  a << 0.004, 0.0015, 0.0015, 0.002;
  b << 0.003, 0.0, 0.0, 0.006;
  if (type == CovarianceType::kDiagonal) a = Eigen::Vector2d(0.004, 0.002).asDiagonal();
  if (type == CovarianceType::kSpherical) {
    a = 0.003 * Eigen::Matrix2d::Identity();
    b = 0.005 * Eigen::Matrix2d::Identity();
  }
  p.covariances = {a, b, 0.25 * Eigen::Matrix2d::Identity()};
  return p;
}

// Records near the components, far away, and on the unit sphere.
DataMatrix Records(const GmmParameters& p, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  DataMatrix x(n, 2);
  for (int i = 0; i < n; ++i) {
    const int k = i % 4;
    Eigen::Vector2d r(z(rng), z(rng));
    if (k < 2) r = p.means.row(k).transpose() + 2.5 * 0.07 * r;
    if (k >= 2) r = r.normalized() * (k == 2 ? 1.0 : 0.6);
    x.row(i) = r.transpose();
  }
  return x;
}

// The framed statistics of x computed record by record, independently of the
// library: responsibilities from PredictProba, u = clip(L^{-1}(x - m) / rho).
GmmStatistics ExplicitFramed(const GmmParameters& p, const DataMatrix& x, double rho,
                             const std::vector<ComponentFrame>& frames, int* clipped = nullptr) {
  const StatusOr<DataMatrix> g = PredictProba(p, x);
  EXPECT_TRUE(g.ok());
  GmmStatistics s;
  s.type = p.type;
  s.counts = Eigen::VectorXd::Zero(3);
  s.sums = Eigen::MatrixXd::Zero(3, 2);
  s.second_full.assign(3, Eigen::Matrix2d::Zero());
  s.second_diag = Eigen::MatrixXd::Zero(3, 2);
  s.second_trace = Eigen::VectorXd::Zero(3);
  for (int k = 0; k < 3; ++k) {
    const bool local = frames[static_cast<size_t>(k)].local;
    const Eigen::Matrix2d l = Eigen::LLT<Eigen::Matrix2d>(p.covariances[k]).matrixL();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      Eigen::Vector2d u = x.row(i).transpose();
      if (local) {
        u = l.triangularView<Eigen::Lower>().solve(u - p.means.row(k).transpose()) / rho;
        if (u.norm() > 1.0) {
          u /= u.norm();
          if (clipped != nullptr) ++*clipped;
        }
      }
      const double gik = (*g)(i, k);
      s.counts(k) += gik;
      s.sums.row(k) += gik * u.transpose();
      s.second_full[k] += gik * u * u.transpose();
      s.second_diag.row(k) += gik * u.cwiseAbs2().transpose();
      s.second_trace(k) += gik * u.squaredNorm();
    }
  }
  if (p.type != CovarianceType::kFull) s.second_full.clear();
  if (p.type != CovarianceType::kDiagonal) s.second_diag.resize(0, 0);
  if (p.type != CovarianceType::kSpherical) s.second_trace.resize(0);
  return s;
}

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

TEST(ChooseFramesTest, SmallComponentsGetLocalFramesAndBroadOnesStayGlobal) {
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
    const StatusOr<std::vector<ComponentFrame>> f = ChooseFrames(p, 3.0);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE((*f)[0].local && (*f)[1].local);
    EXPECT_FALSE((*f)[2].local);  // 9 * 0.25 >= 1.
    const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(p.covariances[0]).matrixL();
    EXPECT_LT(((*f)[0].scale - 3.0 * l).norm(), 1e-15);
    EXPECT_EQ((*f)[0].origin, p.means.row(0).transpose());
    const StatusOr<std::vector<ComponentFrame>> none = ChooseFrames(p, kInf);
    ASSERT_TRUE(none.ok());
    for (const ComponentFrame& g : *none) EXPECT_FALSE(g.local);
  }
}

TEST(ChooseFramesTest, RefusesANonPositiveRadius) {
  const GmmParameters p = ThreeComponents(CovarianceType::kFull);
  EXPECT_FALSE(ChooseFrames(p, 0.0).ok());
  EXPECT_FALSE(ChooseFrames(p, -1.0).ok());
}

// An ill-conditioned (kappa = 1e4 to 1e8), tiny, off-centre component: every
// record's frame coordinates, checked in long double, have norm <= 1.
TEST(FrameCoordinatesTest, AreInTheUnitBallForIllConditionedOffCentreFrames) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  for (double small : {1e-6, 1e-8, 1e-10}) {
    GmmParameters p = ThreeComponents(CovarianceType::kFull);
    const double a = 0.6;  // Rotation angle.
    Eigen::Matrix2d r;
    r << std::cos(a), -std::sin(a), std::sin(a), std::cos(a);
    p.means.row(0) << 0.69, 0.69;
    p.covariances[0] = r * Eigen::Vector2d(small, 1e-2).asDiagonal() * r.transpose();
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    ASSERT_TRUE(frames[0].local);
    const ComponentFrame& f = frames[0];
    DataMatrix x(4000, 2);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      // On, just inside and just outside the boundary, and far away.
      const Eigen::Vector2d dir = Eigen::Vector2d(z(rng), z(rng)).normalized();
      constexpr double kRadii[] = {1.0, 1.0 - 1e-13, 1.0 + 1e-13, 1e3};
      Eigen::Vector2d v = f.origin + f.scale * (kRadii[i % 4] * dir);
      if (v.norm() > 1.0) v.normalize();
      x(i, 0) = v(0);
      x(i, 1) = v(1);
    }
    Eigen::MatrixXd all;
    FrameCoordinates(RowBlock(x.data(), x.rows(), x.cols()), StackFrames(frames), all);
    const Eigen::MatrixXd u = all.topRows(2);  // Component 0.
    long double largest = 0;
    for (Eigen::Index i = 0; i < u.cols(); ++i) {
      const long double n = static_cast<long double>(u(0, i)) * u(0, i) +
                            static_cast<long double>(u(1, i)) * u(1, i);
      largest = std::max(largest, n);
    }
    EXPECT_LE(largest, 1.0L) << small;
    EXPECT_GT(largest, 1.0L - 1e-11L) << small;  // Records do reach the boundary.
  }
}

TEST(FramedStatisticsTest, GlobalFramesReproduceThePlainPass) {
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
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
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
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

TEST(FramedStatisticsTest, EveryFramedContributionLiesInTheUnitBall) {
  // One record at a time, N = 1: sums_k = g_k u_k and T(u_k) has norm
  // ||u_k||^2, so ||sums_k|| <= counts_k and trace / norm <= counts_k. The
  // records sit exactly on, just inside and just outside the frames'
  // boundaries, at their centres and far away.
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
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
  for (CovarianceType type : kTypes) {
    GmmParameters p = ThreeComponents(type);
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
  GmmParameters p = ThreeComponents(CovarianceType::kFull);
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

TEST(FramesTest, FramedToGlobalGivesTheStatisticsOfTheClippedRecords) {
  // Exact (noise-free) framed statistics mapped back equal the global
  // statistics of x~ = m + S u computed record by record.
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
    const DataMatrix x = Records(p, 200, 9);
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    const GmmStatistics framed = ExplicitFramed(p, x, 3.0, frames);
    const GmmStatistics global = FramedToGlobal(framed, frames);
    const DataMatrix g = *PredictProba(p, x);
    for (int k = 0; k < 3; ++k) {
      const ComponentFrame& f = frames[static_cast<size_t>(k)];
      Eigen::Vector2d sum = Eigen::Vector2d::Zero();
      Eigen::Matrix2d second = Eigen::Matrix2d::Zero();
      for (Eigen::Index i = 0; i < x.rows(); ++i) {
        Eigen::Vector2d u = f.scale.triangularView<Eigen::Lower>().solve(
            x.row(i).transpose() - f.origin);
        if (f.local && u.norm() > 1.0) u /= u.norm();
        const Eigen::Vector2d xt = f.origin + f.scale * u;
        sum += g(i, k) * xt;
        second += g(i, k) * xt * xt.transpose();
      }
      EXPECT_LT((global.sums.row(k).transpose() - sum).norm(), 1e-12);
      if (type == CovarianceType::kFull) {
        EXPECT_LT((global.second_full[k] - second).norm(), 1e-12);
      } else if (type == CovarianceType::kDiagonal) {
        EXPECT_LT((global.second_diag.row(k).transpose() - second.diagonal()).norm(), 1e-12);
      } else {
        EXPECT_NEAR(global.second_trace(k), second.trace(), 1e-12);
      }
    }
  }
}

TEST(FramesTest, FloorInFramesRaisesSmallEigenvaluesSeenInTheFrame) {
  for (CovarianceType type : kTypes) {
    const GmmParameters p = ThreeComponents(type);
    const std::vector<ComponentFrame> frames = *ChooseFrames(p, 3.0);
    GmmParameters q = p;
    for (int k = 0; k < 3; ++k) q.covariances[k] *= 1e-4;
    const Eigen::VectorXd floors = Eigen::Vector3d(0.05, 0.01, 0.5);
    ASSERT_TRUE(FloorInFrames(q, frames, floors).ok());
    for (int k = 0; k < 2; ++k) {
      const auto s = frames[static_cast<size_t>(k)].scale.triangularView<Eigen::Lower>();
      const Eigen::MatrixXd in_frame = s.solve(s.solve(q.covariances[k]).transpose());
      const double lowest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(in_frame)
                                .eigenvalues()
                                .minCoeff();
      EXPECT_NEAR(lowest, floors(k), 1e-12);
    }
    EXPECT_EQ(q.covariances[2], p.covariances[2] * 1e-4);  // Global: untouched.
  }
}

}  // namespace
}  // namespace dpem::internal
