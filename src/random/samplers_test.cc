#include "dpem/random/samplers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <gtest/gtest.h>

#include "testing/symmetric_matrix.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<double> kBadScales = {0.0, -0.0, -1.0, kNaN, kInf, -kInf};

// Expects `status` to be InvalidArgument with a message mentioning `word`.
void ExpectInvalid(const Status& status, const std::string& word) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(word), std::string::npos)
      << status.message();
}

// A non-diagonal 3x3 SPD matrix.
Eigen::MatrixXd SpdMatrix() {
  return test_support::Symmetric3(2.0, 0.5, -0.3, 1.0, 0.2, 1.5);
}

TEST(SamplersTest, ScalarSamplersRejectBadScales) {
  Generator gen = Generator::FromSeed(1);
  for (double bad : kBadScales) {
    SCOPED_TRACE(bad);
    ExpectInvalid(SampleGaussian(gen, bad).status(), "stddev");
    ExpectInvalid(SampleLaplace(gen, bad).status(), "scale");
    ExpectInvalid(SampleGamma(gen, bad, 1.0).status(), "shape");
    ExpectInvalid(SampleGamma(gen, 1.0, bad).status(), "scale");
  }
}

TEST(SamplersTest, VectorAndMatrixSamplersRejectBadParameters) {
  Generator gen = Generator::FromSeed(2);
  for (double bad : kBadScales) {
    SCOPED_TRACE(bad);
    ExpectInvalid(SampleGaussianVector(gen, 3, bad).status(), "stddev");
    ExpectInvalid(SampleLaplaceVector(gen, 3, bad).status(), "scale");
    ExpectInvalid(SampleSymmetricGaussianMatrix(gen, 3, bad).status(),
                  "stddev");
  }
  ExpectInvalid(SampleGaussianVector(gen, -1, 1.0).status(), "n");
  ExpectInvalid(SampleLaplaceVector(gen, -1, 1.0).status(), "n");
  ExpectInvalid(SampleSymmetricGaussianMatrix(gen, 0, 1.0).status(), "d");
  ExpectInvalid(SampleSymmetricGaussianMatrix(gen, -2, 1.0).status(), "d");
}

TEST(SamplersTest, WishartRejectsBadDof) {
  Generator gen = Generator::FromSeed(3);
  const Eigen::MatrixXd s = SpdMatrix();  // d = 3: dof must exceed 2.
  for (double bad : {2.0, 1.5, 0.0, -1.0, kNaN, kInf, -kInf}) {
    SCOPED_TRACE(bad);
    ExpectInvalid(SampleWishart(gen, bad, s).status(), "dof");
  }
  EXPECT_TRUE(SampleWishart(gen, 2.0 + 1e-9, s).ok());
}

TEST(SamplersTest, WishartRejectsBadScaleMatrices) {
  Generator gen = Generator::FromSeed(4);
  Eigen::MatrixXd not_spd(2, 2);
  not_spd << 1.0, 2.0, 2.0, 1.0;  // Eigenvalues 3 and -1.
  ExpectInvalid(SampleWishart(gen, 5.0, not_spd).status(), "positive definite");
  ExpectInvalid(SampleWishart(gen, 5.0, Eigen::MatrixXd::Zero(2, 2)).status(),
                "positive definite");
  Eigen::MatrixXd asymmetric = SpdMatrix();
  asymmetric(0, 1) += 0.1;
  ExpectInvalid(SampleWishart(gen, 5.0, asymmetric).status(), "symmetric");
  ExpectInvalid(SampleWishart(gen, 5.0, Eigen::MatrixXd::Identity(2, 3))
                    .status(),
                "square");
  ExpectInvalid(SampleWishart(gen, 5.0, Eigen::MatrixXd(0, 0)).status(),
                "square");
  for (double bad : {kNaN, kInf}) {
    Eigen::MatrixXd non_finite = SpdMatrix();
    non_finite(1, 1) = bad;
    ExpectInvalid(SampleWishart(gen, 5.0, non_finite).status(), "finite");
  }
}

TEST(SamplersTest, ShapesOfVectorOutputs) {
  Generator gen = Generator::FromSeed(5);
  for (Eigen::Index n : {0, 1, 2, 7}) {
    auto g = SampleGaussianVector(gen, n, 1.0);
    auto l = SampleLaplaceVector(gen, n, 1.0);
    ASSERT_TRUE(g.ok() && l.ok());
    EXPECT_EQ(g->size(), n);
    EXPECT_EQ(l->size(), n);
    EXPECT_TRUE(g->allFinite() && l->allFinite());
  }
}

TEST(SamplersTest, SymmetricGaussianMatrixIsSymmetricWithDistinctEntries) {
  Generator gen = Generator::FromSeed(6);
  for (Eigen::Index d : {1, 2, 5}) {
    StatusOr<Eigen::MatrixXd> m = SampleSymmetricGaussianMatrix(gen, d, 2.0);
    ASSERT_TRUE(m.ok());
    ASSERT_EQ(m->rows(), d);
    ASSERT_EQ(m->cols(), d);
    EXPECT_EQ(*m, m->transpose());
    // Upper-triangle entries are distinct draws (ties have probability 0).
    std::vector<double> upper;
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index i = 0; i <= j; ++i) upper.push_back((*m)(i, j));
    std::sort(upper.begin(), upper.end());
    EXPECT_EQ(std::adjacent_find(upper.begin(), upper.end()), upper.end());
  }
}

TEST(SamplersTest, WishartIsSymmetricPositiveDefinite) {
  Generator gen = Generator::FromSeed(7);
  for (double dof : {2.5, 3.0, 10.0}) {
    StatusOr<Eigen::MatrixXd> w = SampleWishart(gen, dof, SpdMatrix());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_EQ(w->rows(), 3);
    ASSERT_EQ(w->cols(), 3);
    EXPECT_EQ(*w, w->transpose());
    EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>(*w).info(), Eigen::Success);
  }
  StatusOr<Eigen::MatrixXd> w1 =
      SampleWishart(gen, 0.5, Eigen::MatrixXd::Constant(1, 1, 3.0));
  ASSERT_TRUE(w1.ok());
  EXPECT_GT((*w1)(0, 0), 0.0);
}

TEST(SamplersTest, GammaIsPositiveForSmallAndLargeShapes) {
  Generator gen = Generator::FromSeed(8);
  for (double shape : {0.05, 0.3, 1.0, 2.5, 1e4}) {
    for (int i = 0; i < 1000; ++i) {
      StatusOr<double> g = SampleGamma(gen, shape, 2.0);
      ASSERT_TRUE(g.ok());
      ASSERT_TRUE(std::isfinite(*g));
      ASSERT_GE(*g, 0.0);
    }
  }
}

TEST(SamplersTest, FixedSeedIsDeterministic) {
  Generator a = Generator::FromSeed(9);
  Generator b = Generator::FromSeed(9);
  EXPECT_EQ(SampleStandardNormal(a), SampleStandardNormal(b));
  EXPECT_EQ(*SampleGaussian(a, 3.0), *SampleGaussian(b, 3.0));
  EXPECT_EQ(*SampleLaplace(a, 0.5), *SampleLaplace(b, 0.5));
  EXPECT_EQ(SampleLaplaceUnchecked(a, 0.5), SampleLaplaceUnchecked(b, 0.5));
  EXPECT_EQ(*SampleGamma(a, 0.7, 2.0), *SampleGamma(b, 0.7, 2.0));
  EXPECT_EQ(*SampleGaussianVector(a, 11, 1.0), *SampleGaussianVector(b, 11, 1.0));
  EXPECT_EQ(*SampleLaplaceVector(a, 11, 1.0), *SampleLaplaceVector(b, 11, 1.0));
  EXPECT_EQ(*SampleSymmetricGaussianMatrix(a, 4, 1.0),
            *SampleSymmetricGaussianMatrix(b, 4, 1.0));
  EXPECT_EQ(*SampleWishart(a, 4.5, SpdMatrix()),
            *SampleWishart(b, 4.5, SpdMatrix()));
  // Both streams were consumed identically.
  EXPECT_EQ(a(), b());
}

TEST(SamplersTest, DifferentSeedsGiveDifferentDraws) {
  Generator a = Generator::FromSeed(10);
  Generator b = Generator::FromSeed(11);
  EXPECT_NE(*SampleGaussianVector(a, 8, 1.0), *SampleGaussianVector(b, 8, 1.0));
}

TEST(SamplersTest, InvalidCallsDoNotConsumeRandomness) {
  Generator a = Generator::FromSeed(12);
  Generator b = Generator::FromSeed(12);
  EXPECT_FALSE(SampleGaussian(a, -1.0).ok());
  EXPECT_FALSE(SampleWishart(a, 1.0, SpdMatrix()).ok());
  EXPECT_EQ(a(), b());
}

TEST(SamplersTest, ScaleMultipliesTheSameUnderlyingDraw) {
  // Same stream, two scales: the draws differ exactly by the scale ratio.
  Generator a = Generator::FromSeed(13);
  Generator b = Generator::FromSeed(13);
  EXPECT_DOUBLE_EQ(*SampleLaplace(a, 4.0), 4.0 * *SampleLaplace(b, 1.0));
  EXPECT_DOUBLE_EQ(*SampleGaussian(a, 4.0), 4.0 * *SampleGaussian(b, 1.0));
}

}  // namespace
}  // namespace dpem
