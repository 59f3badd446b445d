// Tests of the randomized subspace iteration: planted spectra Q diag(l) Q^T
// (the expected eigenpairs are the planted ones), the Ritz values' bound,
// and its contract.
#include "internal/randomized_eigen_solver.h"

#include <gtest/gtest.h>

#include <cmath>

#include "internal/eigen_solver.h"
#include "testing/random_matrices.h"

namespace dpem::internal {
namespace {

using test_support::PlantedLowerTriangle;
using test_support::RandomOrthogonal;

// Rank below the block's width: the subspace holds the whole range, and the
// eigenpairs are exact to rounding.
TEST(RandomizedTopEigenpairsTest, IsExactForALowRankMatrix) {
  const Eigen::Index d = 200;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 3);
  Eigen::VectorXd spectrum = Eigen::VectorXd::Zero(d);
  for (Eigen::Index i = 0; i < 8; ++i) spectrum(i) = 8.0 - static_cast<double>(i);
  StatusOr<Eigenpairs> top = RandomizedTopEigenpairs(PlantedLowerTriangle(q, spectrum), 5, 1);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->values.size(), 5);
  ASSERT_EQ(top->vectors.cols(), 5);
  for (Eigen::Index k = 0; k < 5; ++k) {
    EXPECT_NEAR(top->values(k), spectrum(k), 1e-12) << k;
    EXPECT_NEAR(std::abs(top->vectors.col(k).dot(q.col(k))), 1.0, 1e-12) << k;
    Eigen::Index arg = 0;
    top->vectors.col(k).cwiseAbs().maxCoeff(&arg);
    EXPECT_GT(top->vectors(arg, k), 0.0);
  }
  EXPECT_LT((top->vectors.transpose() * top->vectors - Eigen::MatrixXd::Identity(5, 5))
                .cwiseAbs().maxCoeff(), 1e-12);
}

// Full rank with a gap of 6 to 1 after the top 5: the power iterations make
// the top eigenpairs accurate (a random block without them: errors of order 1).
TEST(RandomizedTopEigenpairsTest, FindsTheTopOfASpectrumWithAGap) {
  const Eigen::Index d = 300;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 4);
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 1.0, -1.0);
  for (Eigen::Index i = 0; i < 5; ++i) spectrum(i) = 10.0 - static_cast<double>(i);
  StatusOr<Eigenpairs> top = RandomizedTopEigenpairs(PlantedLowerTriangle(q, spectrum), 5, 2);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  for (Eigen::Index k = 0; k < 5; ++k) {
    EXPECT_NEAR(top->values(k), spectrum(k), 1e-6) << k;
    EXPECT_NEAR(std::abs(top->vectors.col(k).dot(q.col(k))), 1.0, 1e-6) << k;
  }
}

// A noise-like spectrum without a gap: approximate, but every Ritz value is
// at most the eigenvalue of its rank (Cauchy interlacing) and within the
// spectrum; and the result is the same bits on 1 or 3 threads.
TEST(RandomizedTopEigenpairsTest, RitzValuesNeverExceedTheEigenvalues) {
  const Eigen::Index d = 400;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 5);
  const Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 2.0, -2.0);
  const Eigen::MatrixXd a = PlantedLowerTriangle(q, spectrum);
  StatusOr<Eigenpairs> one = RandomizedTopEigenpairs(a, 10, 1);
  StatusOr<Eigenpairs> three = RandomizedTopEigenpairs(a, 10, 3);
  ASSERT_TRUE(one.ok() && three.ok());
  for (Eigen::Index k = 0; k < 10; ++k) {
    EXPECT_LE(one->values(k), spectrum(k) + 1e-12) << k;
    EXPECT_GT(one->values(k), 0.0) << k;  // The subspace leans to the top.
  }
  EXPECT_EQ(one->values, three->values);
  EXPECT_EQ(one->vectors, three->vectors);
}

// Every product is orthonormalised: the result scales with S (the same
// vectors, the values times the scale) far beyond where S^(q+1) G would
// overflow or underflow.
TEST(RandomizedTopEigenpairsTest, IsScaleInvariant) {
  const Eigen::Index d = 150;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 6);
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 1.0, -1.0);
  for (Eigen::Index i = 0; i < 3; ++i) spectrum(i) = 4.0 - static_cast<double>(i);
  const Eigen::MatrixXd a = PlantedLowerTriangle(q, spectrum);
  StatusOr<Eigenpairs> unit = RandomizedTopEigenpairs(a, 3, 1);
  ASSERT_TRUE(unit.ok()) << unit.status().ToString();
  for (double scale : {1e-80, 1e80}) {
    const Eigen::MatrixXd scaled = PlantedLowerTriangle(q, spectrum * scale);
    StatusOr<Eigenpairs> top = RandomizedTopEigenpairs(scaled, 3, 1);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    ASSERT_TRUE(top->values.allFinite() && top->vectors.allFinite()) << scale;
    for (Eigen::Index k = 0; k < 3; ++k) {
      EXPECT_NEAR(top->values(k) / scale, unit->values(k), 1e-10) << scale << " " << k;
      EXPECT_NEAR(std::abs(top->vectors.col(k).dot(unit->vectors.col(k))), 1.0, 1e-10)
          << scale << " " << k;
    }
  }
}

TEST(RandomizedTopEigenpairsTest, RefusesBadArguments) {
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(20, 20);
  EXPECT_EQ(RandomizedTopEigenpairs(a, 0, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RandomizedTopEigenpairs(a, 11, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(RandomizedTopEigenpairs(a, 10, 1).ok());
  EXPECT_EQ(RandomizedTopEigenpairs(Eigen::MatrixXd::Identity(20, 19), 2, 1).status().code(),
            StatusCode::kInvalidArgument);
  Eigen::MatrixXd nan = a;
  nan(3, 2) = std::nan("");
  EXPECT_EQ(RandomizedTopEigenpairs(nan, 2, 1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dpem::internal
