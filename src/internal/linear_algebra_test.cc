#include "internal/linear_algebra.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace dpem::internal {
namespace {

TEST(ProjectOntoBallTest, LeavesAVectorInsideAndScalesOneOutsideOntoTheSphere) {
  Eigen::RowVectorXd inside(2);
  inside << 0.6, 0.8;  // Norm 1: on the sphere of radius 1, inside radius 2.
  Eigen::RowVectorXd v = inside;
  ProjectOntoBall(v, 2.0);
  EXPECT_EQ(v, inside);
  Eigen::RowVectorXd outside(2);
  outside << 3.0, 4.0;  // Norm 5.
  ProjectOntoBall(outside, 2.0);
  EXPECT_NEAR(outside(0), 1.2, 1e-15);  // 3 * 2 / 5.
  EXPECT_NEAR(outside(1), 1.6, 1e-15);
  EXPECT_LE(outside.norm(), 2.0 * (1 + 1e-15));
}

TEST(ProjectOntoBallTest, ARadiusOfZeroOrLessOrANonFiniteEntryGivesTheOrigin) {
  for (double radius : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    Eigen::RowVectorXd v(2);
    v << 0.1, 0.2;
    ProjectOntoBall(v, radius);
    EXPECT_TRUE(v.isZero(0.0)) << radius;
  }
  Eigen::RowVectorXd v(2);
  v << 0.1, std::numeric_limits<double>::infinity();
  ProjectOntoBall(v, 3.0);
  EXPECT_TRUE(v.isZero(0.0));
}

TEST(ProjectOntoBallTest, AVectorWhoseNormOverflowsLandsOnTheSphere) {
  const double big = 1e300;  // ||(big, big)|| overflows a double.
  Eigen::RowVectorXd v(2);
  v << big, -big;
  ASSERT_FALSE(std::isfinite(v.norm()));
  ProjectOntoBall(v, 3.0);
  EXPECT_NEAR(v(0), 3.0 / std::sqrt(2.0), 1e-14);
  EXPECT_NEAR(v(1), -3.0 / std::sqrt(2.0), 1e-14);
}

TEST(ProjectOntoBallTest, TheUnitBallIsRadiusOne) {
  Eigen::RowVectorXd a(3), b(3);
  a << 2.0, -1.0, 2.0;  // Norm 3.
  b = a;
  ProjectOntoUnitBall(a);
  ProjectOntoBall(b, 1.0);
  EXPECT_EQ(a, b);
  EXPECT_NEAR(a(0), 2.0 / 3.0, 1e-16);
}

}  // namespace
}  // namespace dpem::internal
