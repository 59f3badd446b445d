// Tests of the lower-triangle symmetric product against Eigen's plain dense
// product of the full symmetric matrix (an independent computation).
#include "internal/symmetric_product.h"

#include <gtest/gtest.h>

#include <random>

namespace dpem::internal {
namespace {

// A symmetric matrix with entries in [-1, 1] from a fixed seed.
Eigen::MatrixXd RandomSymmetric(Eigen::Index d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd a(d, d);
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) a(i, j) = a(j, i) = u(rng);
  }
  return a;
}

Eigen::MatrixXd RandomMatrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd a(rows, cols);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = u(rng);
  return a;
}

// The full product, with garbage in the strict upper triangle of what the
// kernel reads, so that reading it would show.
void ExpectMatchesDense(Eigen::Index d, Eigen::Index k, int threads) {
  const Eigen::MatrixXd s = RandomSymmetric(d, 1 + static_cast<unsigned>(d));
  const Eigen::MatrixXd x = RandomMatrix(d, k, 2 + static_cast<unsigned>(k));
  Eigen::MatrixXd lower = s;
  lower.triangularView<Eigen::StrictlyUpper>().setConstant(1e300);
  const Eigen::MatrixXd y = SymmetricProduct(lower, x, threads);
  const Eigen::MatrixXd expected = s * x;
  ASSERT_EQ(y.rows(), d);
  ASSERT_EQ(y.cols(), k);
  // Each entry is a sum of d products of numbers in [-1, 1].
  EXPECT_LT((y - expected).cwiseAbs().maxCoeff(), 1e-13 * static_cast<double>(d))
      << "d " << d << " k " << k << " threads " << threads;
}

TEST(SymmetricProductTest, MatchesTheDenseProductSerially) {
  for (Eigen::Index d : {1, 2, 7, 16, 17, 100}) {
    for (Eigen::Index k : {1, 3, 16, 20}) ExpectMatchesDense(d, k, 1);
  }
}

TEST(SymmetricProductTest, MatchesTheDenseProductInParts) {
  // Above kSymmetricProductSerialDimension the triangle is cut into parts.
  const Eigen::Index d = kSymmetricProductSerialDimension + 37;
  for (Eigen::Index k : {1, 10}) {
    for (int threads : {1, 2, 3}) ExpectMatchesDense(d, k, threads);
  }
}

TEST(SymmetricProductTest, TheBitsDoNotDependOnTheThreadCount) {
  const Eigen::Index d = kSymmetricProductSerialDimension + 101;
  const Eigen::MatrixXd s = RandomSymmetric(d, 5);
  const Eigen::MatrixXd x = RandomMatrix(d, 10, 6);
  const Eigen::MatrixXd one = SymmetricProduct(s, x, 1);
  for (int threads : {2, 5}) EXPECT_EQ(SymmetricProduct(s, x, threads), one);
}

TEST(SymmetricProductTest, NoColumnsGiveAnEmptyProduct) {
  const Eigen::MatrixXd s = RandomSymmetric(5, 7);
  const Eigen::MatrixXd y = SymmetricProduct(s, Eigen::MatrixXd(5, 0), 1);
  EXPECT_EQ(y.rows(), 5);
  EXPECT_EQ(y.cols(), 0);
}

}  // namespace
}  // namespace dpem::internal
