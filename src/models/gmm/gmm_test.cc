// Tests of the mixture's parameters: names, validation, sampling and
// scaling (the E-step and M-step: gmm_estep_test.cc, gmm_mstep_test.cc).
#include "dpem/models/gmm/gmm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dpem/random/generator.h"
#include "testing/gmm_reference.h"

namespace dpem::gmm_testing {
namespace {

TEST(GmmNamesTest, RoundTripAndErrors) {
  for (CovarianceType t : kAllCovarianceTypes) {
    StatusOr<CovarianceType> parsed = ParseCovarianceType(CovarianceTypeName(t));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(CovarianceTypeName(CovarianceType::kDiagonal), "diag");
  StatusOr<CovarianceType> bad = ParseCovarianceType("tied");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("spherical"), std::string::npos);
  EXPECT_EQ(*ParseEstimator("map"), Estimator::kMap);
  EXPECT_EQ(*ParseEstimator(EstimatorName(Estimator::kMle)), Estimator::kMle);
  EXPECT_FALSE(ParseEstimator("MAP ").ok());
}

TEST(GmmValidateTest, AcceptsValidAndRejectsEachDefect) {
  for (CovarianceType t : kAllCovarianceTypes) {
    EXPECT_TRUE(ValidateParameters(ThreeComponents(t)).ok());
  }
  const GmmParameters good = ThreeComponents(CovarianceType::kFull);
  std::vector<GmmParameters> bad(9, good);
  bad[0].weights(0) += 1e-6;                              // Sum != 1.
  bad[1].weights << 1.1, -0.1, 0.0;                       // Negative.
  bad[2].means(1, 2) = std::nan("");                      // Non-finite.
  bad[3].covariances[1](0, 1) += 1e-3;                    // Not symmetric.
  bad[4].covariances[2] = -bad[4].covariances[2];         // Not PD.
  bad[5].covariances.pop_back();                          // Count.
  bad[6].type = CovarianceType::kDiagonal;                // Not diagonal.
  bad[7] = ThreeComponents(CovarianceType::kDiagonal);
  bad[7].type = CovarianceType::kSpherical;               // Unequal diagonal.
  bad[8].means.resize(2, 3);                              // Shape.
  for (size_t i = 0; i < bad.size(); ++i) {
    Status s = ValidateParameters(bad[i]);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << "case " << i;
  }
  EXPECT_FALSE(ValidateParameters(GmmParameters{}).ok());  // K = 0.
}

TEST(GmmSampleTest, ReproducesWeightsMeansCovariances) {
  GmmParameters p;
  p.weights = Eigen::Vector2d(0.3, 0.7);
  p.means.resize(2, 2);
  p.means << -8.0, 1.0, 8.0, -2.0;
  Eigen::Matrix2d c0, c1;
  c0 << 1.0, 0.6, 0.6, 2.0;
  c1 << 0.5, -0.2, -0.2, 0.3;
  p.covariances = {c0, c1};
  Generator gen = Generator::FromSeed(2024);
  const Eigen::Index n = 200000;
  const DataMatrix x = *Sample(p, n, gen);
  for (int k = 0; k < 2; ++k) {  // Component k: the sign of x_0 (8 sd apart).
    std::vector<Eigen::Index> rows;
    for (Eigen::Index i = 0; i < n; ++i) {
      if ((x(i, 0) > 0) == (k == 1)) rows.push_back(i);
    }
    const double nk = static_cast<double>(rows.size()), w = p.weights(k);
    EXPECT_NEAR(nk / n, w, 5 * std::sqrt(w * (1 - w) / n));
    const DataMatrix xk = x(rows, Eigen::all);
    const Eigen::RowVectorXd mean = xk.colwise().mean();
    const DataMatrix centred = xk.rowwise() - mean;
    const Eigen::MatrixXd cov = centred.transpose() * centred / (nk - 1);
    const Eigen::MatrixXd& s = p.covariances[k];
    for (int a = 0; a < 2; ++a) {
      EXPECT_NEAR(mean(a), p.means(k, a), 5 * std::sqrt(s(a, a) / nk));
      for (int b = 0; b < 2; ++b) {
        const double se = std::sqrt((s(a, a) * s(b, b) + s(a, b) * s(a, b)) / nk);
        EXPECT_NEAR(cov(a, b), s(a, b), 5 * se) << k << a << b;
      }
    }
  }
  EXPECT_FALSE(Sample(p, -1, gen).ok());
  EXPECT_EQ(Sample(p, 0, gen)->rows(), 0);
}

TEST(GmmScaleTest, ScalesMeansAndCovariances) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const GmmParameters p = ThreeComponents(t);
    const double r = 3.5;
    const GmmParameters q = *ScaleParameters(p, r);
    EXPECT_TRUE(ValidateParameters(q).ok());
    EXPECT_EQ(q.weights, p.weights);
    EXPECT_LT(RelativeDiff(q.means, r * p.means), 1e-15);
    for (int k = 0; k < 3; ++k) {
      EXPECT_LT(RelativeDiff(q.covariances[k], r * r * p.covariances[k]), 1e-15);
    }
    // Change of variables: log p_rX(r x) = log p_X(x) - d log r.
    const DataMatrix x = Draw(p, 200, 9);
    const DataMatrix rx = r * x;
    EXPECT_NEAR(*MeanLogLikelihood(q, rx),
                *MeanLogLikelihood(p, x) - 3 * std::log(r), 1e-10);
  }
  const GmmParameters p = ThreeComponents(CovarianceType::kFull);
  EXPECT_FALSE(ScaleParameters(p, 0).ok());
  EXPECT_FALSE(ScaleParameters(p, -2).ok());
  EXPECT_FALSE(ScaleParameters(p, std::numeric_limits<double>::infinity()).ok());
}

}  // namespace
}  // namespace dpem::gmm_testing
