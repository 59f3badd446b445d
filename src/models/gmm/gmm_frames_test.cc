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
