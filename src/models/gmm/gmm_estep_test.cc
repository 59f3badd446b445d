// Tests of the E-step (ComputeStatistics, PredictProba, Predict,
// MeanLogLikelihood) against the naive densities of testing/gmm_reference.h.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dpem/models/gmm/gmm.h"
#include "testing/gmm_reference.h"

namespace dpem::gmm_testing {
namespace {

TEST(GmmEStepTest, RejectsBadData) {
  const GmmParameters p = ThreeComponents(CovarianceType::kFull);
  DataMatrix wrong_dim = DataMatrix::Zero(4, 2);
  EXPECT_EQ(ComputeStatistics(p, wrong_dim).status().code(),
            StatusCode::kInvalidArgument);
  DataMatrix nan = DataMatrix::Zero(4, 3);
  nan(2, 1) = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(ComputeStatistics(p, nan).ok());
  EXPECT_FALSE(MeanLogLikelihood(p, DataMatrix(0, 3)).ok());
  StatusOr<GmmStatistics> empty = ComputeStatistics(p, DataMatrix(0, 3));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->n, 0);
  EXPECT_EQ(empty->counts.sum(), 0.0);
}

TEST(GmmEStepTest, StatisticsAddAcrossShards) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const GmmParameters p = ThreeComponents(t);
    const DataMatrix x = Draw(p, 10000, 11);  // More than two chunks.
    const Eigen::Index cut = 3001;
    const DataMatrix a = x.topRows(cut), b = x.bottomRows(x.rows() - cut);
    GmmStatistics sum;  // Empty accumulator adopts the first shard.
    ASSERT_TRUE(sum.Add(*ComputeStatistics(p, a)).ok());
    ASSERT_TRUE(sum.Add(*ComputeStatistics(p, b)).ok());
    const GmmStatistics whole = *ComputeStatistics(p, x);
    EXPECT_EQ(sum.n, whole.n);
    EXPECT_LT(RelativeDiff(sum.counts, whole.counts), 1e-12);
    EXPECT_LT(RelativeDiff(sum.sums, whole.sums), 1e-12);
    EXPECT_NEAR(sum.log_likelihood, whole.log_likelihood,
                1e-12 * std::fabs(whole.log_likelihood));
    for (size_t k = 0; k < whole.second_full.size(); ++k) {
      EXPECT_LT(RelativeDiff(sum.second_full[k], whole.second_full[k]), 1e-12);
    }
    if (t == CovarianceType::kDiagonal) {
      EXPECT_LT(RelativeDiff(sum.second_diag, whole.second_diag), 1e-12);
    }
    if (t == CovarianceType::kSpherical) {
      EXPECT_LT(RelativeDiff(sum.second_trace, whole.second_trace), 1e-12);
    }
  }
}

TEST(GmmEStepTest, AddRejectsMismatchedShapes) {
  const GmmParameters full = ThreeComponents(CovarianceType::kFull);
  const GmmParameters diag = ThreeComponents(CovarianceType::kDiagonal);
  const DataMatrix x = Draw(full, 50, 3);
  GmmStatistics a = *ComputeStatistics(full, x);
  const GmmStatistics before = a;
  EXPECT_EQ(a.Add(*ComputeStatistics(diag, x)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(a.counts, before.counts);  // Unchanged on error.
  GmmParameters two = full;
  two.weights = Eigen::Vector2d(0.5, 0.5);
  two.means.conservativeResize(2, 3);
  two.covariances.pop_back();
  EXPECT_FALSE(a.Add(*ComputeStatistics(two, x)).ok());
}

TEST(GmmEStepTest, SingleComponentGivesPlainMoments) {
  for (CovarianceType t : kAllCovarianceTypes) {
    GmmParameters p = ThreeComponents(t);
    p.weights = Eigen::VectorXd::Ones(1);
    p.means.conservativeResize(1, 3);
    p.covariances.resize(1);
    const DataMatrix x = Draw(ThreeComponents(t), 700, 5);
    const DataMatrix proba = *PredictProba(p, x);
    EXPECT_TRUE((proba.array() == 1.0).all());
    const GmmStatistics s = *ComputeStatistics(p, x);
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(3);
    Eigen::MatrixXd outer = Eigen::MatrixXd::Zero(3, 3);
    double log_likelihood = 0;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      sum += x.row(i).transpose();
      outer += x.row(i).transpose() * x.row(i);
      log_likelihood += NaiveLogNormal(x.row(i).transpose(),
                                       p.means.row(0).transpose(),
                                       p.covariances[0]);
    }
    EXPECT_NEAR(s.counts(0), 700.0, 1e-9);
    EXPECT_LT(RelativeDiff(s.sums.row(0).transpose(), sum), 1e-12);
    EXPECT_NEAR(s.log_likelihood, log_likelihood, 1e-10 * 700);
    if (t == CovarianceType::kFull) {
      EXPECT_LT(RelativeDiff(s.second_full[0], outer), 1e-12);
    } else if (t == CovarianceType::kDiagonal) {
      EXPECT_LT(RelativeDiff(s.second_diag.row(0).transpose(),
                             outer.diagonal()), 1e-12);
    } else {
      EXPECT_NEAR(s.second_trace(0), outer.trace(), 1e-12 * outer.trace());
    }
  }
}

TEST(GmmEStepTest, LikelihoodAndResponsibilitiesMatchNaiveDensity) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const GmmParameters p = ThreeComponents(t);
    const DataMatrix x = Draw(p, 500, 21);
    Eigen::MatrixXd gamma;
    Eigen::VectorXd log_density;
    NaiveEStep(p, x, &gamma, &log_density);
    EXPECT_NEAR(*MeanLogLikelihood(p, x), log_density.mean(), 1e-10);
    EXPECT_NEAR(ComputeStatistics(p, x)->log_likelihood, log_density.sum(),
                1e-10 * 500);
    const DataMatrix proba = *PredictProba(p, x);
    EXPECT_LT((proba - gamma).cwiseAbs().maxCoeff(), 1e-10);
    const Eigen::VectorXi labels = *Predict(p, x);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      Eigen::Index best;
      gamma.row(i).maxCoeff(&best);
      EXPECT_EQ(labels(i), best);
    }
  }
}

TEST(GmmEStepTest, ZeroWeightComponentGetsNoResponsibility) {
  GmmParameters p = ThreeComponents(CovarianceType::kFull);
  p.weights << 0.6, 0.0, 0.4;
  const DataMatrix x = Draw(p, 300, 8);
  const GmmStatistics s = *ComputeStatistics(p, x);
  EXPECT_EQ(s.counts(1), 0.0);
  EXPECT_NEAR(s.counts.sum(), 300.0, 1e-9);
  EXPECT_TRUE(std::isfinite(s.log_likelihood));
}

}  // namespace
}  // namespace dpem::gmm_testing
