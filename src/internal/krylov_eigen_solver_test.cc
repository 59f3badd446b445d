// Tests of the Lanczos eigen-solvers: planted spectra Q diag(l) Q^T (the
// expected eigenpairs are the planted ones, not another solver's), and
// agreement with the LAPACK solvers on random symmetric matrices.
#include "internal/krylov_eigen_solver.h"

#include <gtest/gtest.h>

#include <Eigen/QR>
#include <cmath>
#include <random>

#include "internal/eigen_solver.h"

#include "testing/random_matrices.h"

namespace dpem::internal {
namespace {

using test_support::PlantedLowerTriangle;
using test_support::RandomOrthogonal;

Eigen::MatrixXd Gaussian(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  return test_support::GaussianMatrix(rows, cols, seed);
}

// A random symmetric (Wigner) matrix, entries N(0, 1) / sqrt(d): the spectrum
// of a noisy release, a semicircle on [-2, 2] whose top eigenvalues are close.
Eigen::MatrixXd Wigner(Eigen::Index d, unsigned seed) {
  const Eigen::MatrixXd g = Gaussian(d, d, seed);
  return (g + g.transpose()) / std::sqrt(2.0 * static_cast<double>(d));
}

TEST(KrylovTopEigenpairsTest, FindsAPlantedPositiveDefiniteSpectrum) {
  const Eigen::Index d = 300;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 1);
  Eigen::VectorXd spectrum(d);
  for (Eigen::Index i = 0; i < d; ++i) spectrum(i) = std::pow(0.9, static_cast<double>(i)) + 1e-3;
  StatusOr<Eigenpairs> top =
      KrylovTopEigenpairs(PlantedLowerTriangle(q, spectrum), 10, KrylovOptions{});
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->values.size(), 10);
  for (Eigen::Index k = 0; k < 10; ++k) {
    EXPECT_NEAR(top->values(k), spectrum(k), 1e-12) << k;
    EXPECT_NEAR(std::abs(top->vectors.col(k).dot(q.col(k))), 1.0, 1e-9) << k;
    Eigen::Index arg = 0;
    top->vectors.col(k).cwiseAbs().maxCoeff(&arg);
    EXPECT_GT(top->vectors(arg, k), 0.0);
  }
}

TEST(KrylovTopEigenpairsTest, AgreesWithLapackOnARandomSymmetricMatrix) {
  const Eigen::MatrixXd a = Wigner(400, 2);
  StatusOr<Eigenpairs> krylov = KrylovTopEigenpairs(a, 10, KrylovOptions{});
  StatusOr<Eigenpairs> lapack = TopEigenpairs(a, 10);
  ASSERT_TRUE(krylov.ok()) << krylov.status().ToString();
  ASSERT_TRUE(lapack.ok());
  EXPECT_LT((krylov->values - lapack->values).cwiseAbs().maxCoeff(), 1e-11);
  // Same sign convention, so the vectors themselves agree; the top
  // eigenvalues of a semicircle are about 0.01 apart, so the residual
  // tolerance 1e-10 leaves errors of about 1e-8.
  EXPECT_LT((krylov->vectors - lapack->vectors).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(KrylovTopEigenpairsTest, TheStartIsFixedSoTheResultIsReproducible) {
  const Eigen::MatrixXd a = Wigner(200, 3);
  StatusOr<Eigenpairs> one = KrylovTopEigenpairs(a, 4, KrylovOptions{1});
  StatusOr<Eigenpairs> two = KrylovTopEigenpairs(a, 4, KrylovOptions{2});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->values, two->values);
  EXPECT_EQ(one->vectors, two->vectors);
}

TEST(KrylovSmallestEigenvalueTest, FindsAPlantedNegativeEigenvalue) {
  const Eigen::Index d = 250;
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, -0.8, 1.5);
  const Eigen::MatrixXd a = PlantedLowerTriangle(RandomOrthogonal(d, 4), spectrum);
  StatusOr<double> smallest = KrylovSmallestEigenvalue(a, 1.5, KrylovOptions{});
  ASSERT_TRUE(smallest.ok()) << smallest.status().ToString();
  EXPECT_NEAR(*smallest, -0.8, 1e-10);
}

// A rank-deficient second moment (fewer records than dimensions) has a zero
// eigenvalue of high multiplicity: the shifted problem finds it to a
// tolerance relative to ||S||, where a relative test on 0 never passes.
TEST(KrylovSmallestEigenvalueTest, FindsAZeroEigenvalueOfHighMultiplicity) {
  const Eigen::MatrixXd x = Gaussian(40, 200, 5) / 20.0;
  const Eigen::MatrixXd s = x.transpose() * x;
  StatusOr<Eigenpairs> top = TopEigenpairs(s, 1);
  ASSERT_TRUE(top.ok());
  StatusOr<double> smallest = KrylovSmallestEigenvalue(s, top->values(0), KrylovOptions{});
  ASSERT_TRUE(smallest.ok()) << smallest.status().ToString();
  EXPECT_NEAR(*smallest, 0.0, 1e-10 * top->values(0));
}

TEST(KrylovSmallestEigenvalueTest, AgreesWithLapackOnARandomSymmetricMatrix) {
  const Eigen::MatrixXd a = Wigner(300, 6);
  StatusOr<double> lapack = SmallestEigenvalue(a);
  StatusOr<Eigenpairs> top = TopEigenpairs(a, 1);
  ASSERT_TRUE(lapack.ok() && top.ok());
  StatusOr<double> krylov = KrylovSmallestEigenvalue(a, top->values(0), KrylovOptions{});
  ASSERT_TRUE(krylov.ok()) << krylov.status().ToString();
  EXPECT_NEAR(*krylov, *lapack, 1e-10);
  EXPECT_LT(*lapack, -1.5);  // The semicircle's edge is near -2.
}

// Lanczos breaks down on the zero matrix (its first product is 0): Spectra's
// failure comes back as a status, for the caller to fall back to LAPACK.
TEST(KrylovEigenSolverTest, ABreakdownIsAStatusNotAnException) {
  const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(100, 100);
  EXPECT_EQ(KrylovSmallestEigenvalue(zero, 0.0, KrylovOptions{}).status().code(),
            StatusCode::kNumericalError);
}

TEST(KrylovEigenSolverTest, ReportsNonConvergenceAsAStatus) {
  KrylovOptions few;
  few.max_products = 1;  // One restart at most: the noisy top 10 need hundreds.
  StatusOr<Eigenpairs> top = KrylovTopEigenpairs(Wigner(400, 7), 10, few);
  EXPECT_EQ(top.status().code(), StatusCode::kNumericalError);
}

TEST(KrylovEigenSolverTest, RejectsBadInput) {
  const Eigen::MatrixXd a = Wigner(50, 8);
  EXPECT_FALSE(KrylovCanSolve(50, 20));  // 20 + kKrylovExtraVectors >= 50.
  EXPECT_TRUE(KrylovCanSolve(50, 19));
  EXPECT_EQ(KrylovTopEigenpairs(a, 20, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KrylovTopEigenpairs(a, 0, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KrylovTopEigenpairs(Eigen::MatrixXd(50, 49), 1, {}).status().code(),
            StatusCode::kInvalidArgument);
  Eigen::MatrixXd bad = a;
  bad(30, 3) = std::nan("");
  EXPECT_EQ(KrylovTopEigenpairs(bad, 2, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(KrylovSmallestEigenvalue(bad, 1.0, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(KrylovSmallestEigenvalue(a, std::nan(""), {}).status().code(),
            StatusCode::kInvalidArgument);
  bad = a;
  bad(3, 30) = std::nan("");  // The strict upper triangle is never read.
  EXPECT_TRUE(KrylovTopEigenpairs(bad, 2, {}).ok());
}

}  // namespace
}  // namespace dpem::internal
