// LogDensities and Sample's component labels (models/gmm/gmm.h): the
// per-record scores and labelled draws that the Python estimators expose
// (GaussianMixture.score_samples and .sample).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "dpem/models/gmm/gmm.h"
#include "dpem/random/generator.h"

namespace dpem {
namespace {

// Two components in 2-D with diagonal covariances, so that each density is a
// product of univariate normals (the expected values below use only that).
GmmParameters TwoDiagonalComponents() {
  GmmParameters p;
  p.type = CovarianceType::kDiagonal;
  p.weights = Eigen::Vector2d(0.25, 0.75);
  p.means.resize(2, 2);
  p.means << -1.0, 0.5,  //
      2.0, -1.0;
  p.covariances = {Eigen::Vector2d(0.5, 2.0).asDiagonal().toDenseMatrix(),
                   Eigen::Vector2d(1.0, 0.25).asDiagonal().toDenseMatrix()};
  return p;
}

double NormalDensity(double x, double mean, double variance) {
  return std::exp(-0.5 * (x - mean) * (x - mean) / variance) /
         std::sqrt(2 * std::numbers::pi * variance);
}

TEST(LogDensitiesTest, EqualsTheMixtureDensityOfEachRecordAndAveragesToTheScore) {
  const GmmParameters p = TwoDiagonalComponents();
  DataMatrix x(3, 2);
  x << 0.0, 0.0,  //
      -1.0, 1.0,  //
      2.5, -0.5;
  const Eigen::VectorXd ll = *LogDensities(p, x);
  ASSERT_EQ(ll.size(), 3);
  for (Eigen::Index i = 0; i < 3; ++i) {
    double density = 0;
    for (Eigen::Index k = 0; k < 2; ++k) {
      density += p.weights(k) * NormalDensity(x(i, 0), p.means(k, 0), p.covariances[k](0, 0)) *
                 NormalDensity(x(i, 1), p.means(k, 1), p.covariances[k](1, 1));
    }
    EXPECT_NEAR(ll(i), std::log(density), 1e-12) << "record " << i;
  }
  EXPECT_NEAR(ll.mean(), *MeanLogLikelihood(p, x), 1e-14);
  EXPECT_EQ(LogDensities(p, DataMatrix(0, 2))->size(), 0);
}

TEST(LogDensitiesTest, RefusesMismatchedOrNonFiniteData) {
  const GmmParameters p = TwoDiagonalComponents();
  EXPECT_EQ(LogDensities(p, DataMatrix::Zero(2, 3)).status().code(),
            StatusCode::kInvalidArgument);
  DataMatrix x = DataMatrix::Zero(2, 2);
  x(1, 0) = std::nan("");
  EXPECT_EQ(LogDensities(p, x).status().code(), StatusCode::kInvalidArgument);
}

TEST(SampleTest, ComponentLabelsDoNotChangeTheDrawsAndFollowTheWeights) {
  const GmmParameters p = TwoDiagonalComponents();
  Generator plain = Generator::FromSeed(11);
  Generator labelled = Generator::FromSeed(11);
  const DataMatrix without = *Sample(p, 4000, plain);
  Eigen::VectorXi labels;
  const DataMatrix with = *Sample(p, 4000, labelled, &labels);
  EXPECT_EQ(with, without);
  ASSERT_EQ(labels.size(), 4000);
  EXPECT_EQ(labels.minCoeff(), 0);
  EXPECT_EQ(labels.maxCoeff(), 1);
  // Weight 0.75 for component 1: 3000 expected, standard deviation 27.
  const double ones = labels.cast<double>().sum();
  EXPECT_NEAR(ones, 3000, 5 * 27.4);
  // The draws of each label average to that component's mean (standard
  // errors below 0.05 for about 1000 and 3000 draws).
  for (int k = 0; k < 2; ++k) {
    Eigen::RowVector2d sum = Eigen::RowVector2d::Zero();
    int count = 0;
    for (Eigen::Index i = 0; i < 4000; ++i) {
      if (labels(i) != k) continue;
      sum += with.row(i);
      ++count;
    }
    EXPECT_LT((sum / count - p.means.row(k)).cwiseAbs().maxCoeff(), 0.2) << "component " << k;
  }
}

}  // namespace
}  // namespace dpem
