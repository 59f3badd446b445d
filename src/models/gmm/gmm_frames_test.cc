// Component frames (models/gmm/gmm_frames.h): the choice of frames, frame
// coordinates in the unit ball, and the maps back to global coordinates (the
// framed statistics: gmm_framed_estep_test.cc).
#include "models/gmm/gmm_frames.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "testing/gmm_frames_reference.h"
#include "testing/gmm_reference.h"

namespace dpem::internal::frames_testing {
namespace {

using gmm_testing::kAllCovarianceTypes;

TEST(ChooseFramesTest, SmallComponentsGetLocalFramesAndBroadOnesStayGlobal) {
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
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
  const GmmParameters p = TwoSmallOneBroad(CovarianceType::kFull);
  EXPECT_FALSE(ChooseFrames(p, 0.0).ok());
  EXPECT_FALSE(ChooseFrames(p, -1.0).ok());
}

// An ill-conditioned (kappa = 1e4 to 1e8), tiny, off-centre component: every
// record's frame coordinates, checked in long double, have norm <= 1.
TEST(FrameCoordinatesTest, AreInTheUnitBallForIllConditionedOffCentreFrames) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  for (double small : {1e-6, 1e-8, 1e-10}) {
    GmmParameters p = TwoSmallOneBroad(CovarianceType::kFull);
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

TEST(FramesTest, FramedToGlobalGivesTheStatisticsOfTheClippedRecords) {
  // Exact (noise-free) framed statistics mapped back equal the global
  // statistics of x~ = m + S u computed record by record.
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
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
  for (CovarianceType type : kAllCovarianceTypes) {
    const GmmParameters p = TwoSmallOneBroad(type);
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
}  // namespace dpem::internal::frames_testing
