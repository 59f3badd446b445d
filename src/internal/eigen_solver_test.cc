// Tests of the LAPACK eigen-solvers against Eigen's SelfAdjointEigenSolver
// (an independent implementation) and hand-built spectra.
#include "internal/eigen_solver.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

namespace dpem::internal {
namespace {

// A fixed symmetric matrix with distinct eigenvalues (deterministic entries).
Eigen::MatrixXd TestMatrix(Eigen::Index d) {
  Eigen::MatrixXd a(d, d);
  for (Eigen::Index i = 0; i < d; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) a(i, j) = std::sin(1.0 + 3.0 * i + 7.0 * j * j);
  }
  // The diagonal ramp separates the eigenvalues (the sine part has rank 4).
  return (a + a.transpose()) / 2.0 +
         Eigen::MatrixXd(Eigen::VectorXd::LinSpaced(d, 0.0, 0.37 * (d - 1)).asDiagonal());
}

// An orthogonal matrix from the QR decomposition of a fixed matrix.
Eigen::MatrixXd Orthogonal(Eigen::Index d) {
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(TestMatrix(d) + 3.0 * Eigen::MatrixXd::Identity(d, d));
  return qr.householderQ();
}

TEST(TopEigenpairsTest, MatchesEigenDescendingWithSignConvention) {
  const Eigen::MatrixXd a = TestMatrix(9);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ref(a);
  StatusOr<Eigenpairs> top = TopEigenpairs(a, 3);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->values.size(), 3);
  ASSERT_EQ(top->vectors.cols(), 3);
  for (int k = 0; k < 3; ++k) {
    const Eigen::Index r = 8 - k;  // Eigen sorts ascending.
    EXPECT_NEAR(top->values(k), ref.eigenvalues()(r), 1e-10);
    EXPECT_NEAR(std::abs(top->vectors.col(k).dot(ref.eigenvectors().col(r))), 1.0, 1e-10);
    Eigen::Index arg = 0;
    top->vectors.col(k).cwiseAbs().maxCoeff(&arg);
    EXPECT_GT(top->vectors(arg, k), 0.0);
  }
}

TEST(AllEigenpairsTest, ReconstructsTheMatrix) {
  const Eigen::MatrixXd a = TestMatrix(7);
  StatusOr<Eigenpairs> all = AllEigenpairs(a);
  ASSERT_TRUE(all.ok());
  for (Eigen::Index k = 1; k < 7; ++k) EXPECT_GE(all->values(k - 1), all->values(k));
  const Eigen::MatrixXd back = all->vectors * all->values.asDiagonal() * all->vectors.transpose();
  EXPECT_LT((back - a).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(FloorEigenvaluesTest, RaisesOnlyTheEigenvaluesBelowTheFloor) {
  const Eigen::MatrixXd q = Orthogonal(4);
  const Eigen::Vector4d spectrum(3.0, -1.0, 0.5, 0.05);
  const Eigen::MatrixXd a = q * spectrum.asDiagonal() * q.transpose();
  StatusOr<Eigen::MatrixXd> floored = FloorEigenvalues(a, 0.1);
  ASSERT_TRUE(floored.ok());
  const Eigen::Vector4d expected_spectrum(3.0, 0.1, 0.5, 0.1);
  const Eigen::MatrixXd expected = q * expected_spectrum.asDiagonal() * q.transpose();
  EXPECT_LT((*floored - expected).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(*floored, floored->transpose());
}

TEST(FloorEigenvaluesTest, LeavesAMatrixAboveTheFloorUnchanged) {
  const Eigen::MatrixXd a = TestMatrix(5) + 10.0 * Eigen::MatrixXd::Identity(5, 5);
  StatusOr<Eigen::MatrixXd> floored = FloorEigenvalues(a, 1e-3);
  ASSERT_TRUE(floored.ok());
  EXPECT_EQ(*floored, a);
}

TEST(EigenSolverTest, RejectsBadInput) {
  const Eigen::MatrixXd a = TestMatrix(4);
  EXPECT_EQ(TopEigenpairs(a, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TopEigenpairs(a, 5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TopEigenpairs(Eigen::MatrixXd(3, 4), 1).status().code(),
            StatusCode::kInvalidArgument);
  Eigen::MatrixXd bad = a;
  bad(1, 1) = std::nan("");
  EXPECT_EQ(AllEigenpairs(bad).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FloorEigenvalues(a, std::nan("")).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dpem::internal
