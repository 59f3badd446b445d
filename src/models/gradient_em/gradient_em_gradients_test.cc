// Tests of gradient EM's gradients (wang-dp-gradient-em) against
// derivations done here: finite differences of q, the complete-data case and
// the self-consistency of the population gradient at beta*; and of the data
// generators (the fits: gradient_em_test.cc).
#include "dpem/models/gradient_em/gradient_em.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "dpem/data/generators.h"
#include "testing/gradient_em_data.h"

namespace dpem {
namespace {

using test_support::MakeGradientEmData;

// Expects row i of `grad` to be, coordinate by coordinate, the central
// difference (step 1e-5) of q at beta within `tolerance`.
template <typename Q>
void ExpectCentralDifferences(const DataMatrix& grad, Eigen::Index i, const Q& q,
                              const Eigen::VectorXd& beta, double tolerance) {
  for (int j = 0; j < beta.size(); ++j) {
    const double h = 1e-5;
    Eigen::VectorXd e = Eigen::VectorXd::Unit(beta.size(), j) * h;
    EXPECT_NEAR(grad(i, j), (q(beta + e) - q(beta - e)) / (2 * h), tolerance);
  }
}

// GMM: q(beta; beta') = -(w ||y - beta||^2 + (1 - w) ||y + beta||^2) / 2 with
// w = 1 / (1 + exp(-2 <beta', y> / sigma^2)); its gradient in beta at
// beta = beta' by central differences.
TEST(GradientEmGradientsTest, GmmMatchesFiniteDifferencesOfQ) {
  const GeneratedData g = MakeGradientEmData(GradientEmModel::kGmm, 5, 3, 0.0, 1);
  Eigen::VectorXd beta(3);
  beta << 0.4, -1.2, 2.0;
  const double sigma = 1.3;
  const DataMatrix grad = *PerRecordGradients(g.data, beta, sigma);
  for (Eigen::Index i = 0; i < 5; ++i) {
    const Eigen::VectorXd y = g.data.x.row(i).transpose();
    const double w = 1.0 / (1.0 + std::exp(-2.0 * beta.dot(y) / (sigma * sigma)));
    auto q = [&](const Eigen::VectorXd& b) {
      return -0.5 * (w * (y - b).squaredNorm() + (1 - w) * (y + b).squaredNorm());
    };
    ExpectCentralDifferences(grad, i, q, beta, 1e-7);
  }
}

// MRM: q = -(w (y - <x, b>)^2 + (1 - w)(y + <x, b>)^2) / 2,
// w = 1 / (1 + exp(-2 y <beta', x> / sigma^2)).
TEST(GradientEmGradientsTest, MrmMatchesFiniteDifferencesOfQ) {
  const GeneratedData g = MakeGradientEmData(GradientEmModel::kMrm, 5, 3, 0.0, 2);
  Eigen::VectorXd beta(3);
  beta << 1.0, 0.5, -0.7;
  const DataMatrix grad = *PerRecordGradients(g.data, beta, 0.8);
  for (Eigen::Index i = 0; i < 5; ++i) {
    const Eigen::VectorXd x = g.data.x.row(i).transpose();
    const double y = g.data.y(i);
    const double w = 1.0 / (1.0 + std::exp(-2.0 * y * beta.dot(x) / 0.64));
    auto q = [&](const Eigen::VectorXd& b) {
      return -0.5 * (w * std::pow(y - x.dot(b), 2) + (1 - w) * std::pow(y + x.dot(b), 2));
    };
    ExpectCentralDifferences(grad, i, q, beta, 1e-6);
  }
}

// RMC with nothing missing is linear regression: grad = y x - x x^T beta.
TEST(GradientEmGradientsTest, RmcWithoutMissingIsLeastSquares) {
  const GeneratedData g = MakeGradientEmData(GradientEmModel::kRmc, 6, 4, 0.0, 3);
  Eigen::VectorXd beta = Eigen::VectorXd::LinSpaced(4, -1.0, 2.0);
  const DataMatrix grad = *PerRecordGradients(g.data, beta, 1.0);
  for (Eigen::Index i = 0; i < 6; ++i) {
    const Eigen::VectorXd x = g.data.x.row(i).transpose();
    const Eigen::VectorXd expected = g.data.y(i) * x - x * x.dot(beta);
    EXPECT_LT((grad.row(i).transpose() - expected).norm(), 1e-12);
  }
}

// Self-consistency (Definition 1): the population gradient vanishes at beta*
// and not elsewhere. Means over 100k records, within 5 standard errors.
void ExpectSelfConsistent(GradientEmModel model, double pm, std::uint64_t seed) {
  const GeneratedData g = MakeGradientEmData(model, 100000, 3, pm, seed);
  for (double shrink : {1.0, 0.7}) {
    const DataMatrix grad = *PerRecordGradients(g.data, shrink * g.beta, g.sigma);
    const Eigen::VectorXd mean = grad.colwise().mean().transpose();
    const Eigen::VectorXd sd =
        ((grad.rowwise() - mean.transpose()).array().square().colwise().sum() / 1e5)
            .sqrt()
            .transpose();
    const Eigen::VectorXd z = mean.cwiseQuotient(sd / std::sqrt(1e5));
    if (shrink == 1.0) {
      EXPECT_LT(z.cwiseAbs().maxCoeff(), 5.0) << GradientEmModelName(model) << " mean " << mean.transpose();
    } else {
      EXPECT_GT(z.cwiseAbs().maxCoeff(), 10.0) << GradientEmModelName(model);
    }
  }
}

TEST(GradientEmGradientsTest, PopulationGradientVanishesAtTruth) {
  ExpectSelfConsistent(GradientEmModel::kGmm, 0.0, 11);
  ExpectSelfConsistent(GradientEmModel::kMrm, 0.0, 12);
  ExpectSelfConsistent(GradientEmModel::kRmc, 0.3, 13);
}

TEST(GeneratorsTest, ShapesTruthAndRoundTrip) {
  const GeneratedData g = MakeGradientEmData(GradientEmModel::kRmc, 4000, 5, 0.2, 41);
  EXPECT_NEAR(g.beta.norm(), 3.0, 1e-12);
  EXPECT_EQ(g.data.x.rows(), 4000);
  const double missing = 1.0 - g.data.observed.mean();
  EXPECT_NEAR(missing, 0.2, 0.02);
  const DataMatrix m = ToDataMatrix(g.data);
  EXPECT_EQ(m.cols(), 11);
  const GradientEmData back = *FromDataMatrix(GradientEmModel::kRmc, m);
  EXPECT_EQ(back.x, g.data.x);
  EXPECT_EQ(back.y, g.data.y);
  EXPECT_FALSE(FromDataMatrix(GradientEmModel::kRmc, m.leftCols(10)).ok());
  EXPECT_FALSE(FromDataMatrix(GradientEmModel::kMrm, m.leftCols(1)).ok());
  const GeneratedData again = MakeGradientEmData(GradientEmModel::kRmc, 4000, 5, 0.2, 41);
  EXPECT_EQ(again.data.x, g.data.x);
  GeneratorOptions bad;
  bad.model = GradientEmModel::kGmm;
  bad.n = 10;
  bad.d = 2;
  bad.snr = 3.0;
  bad.missing_prob = 0.1;
  Generator gen = Generator::FromSeed(1);
  EXPECT_FALSE(GenerateGradientEmData(bad, gen).ok());
}

}  // namespace
}  // namespace dpem
