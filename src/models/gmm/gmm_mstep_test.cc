// Tests of the M-step (MLE and MAP) against weighted moments computed row by
// row from the naive responsibilities of testing/gmm_reference.h.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "testing/gmm_reference.h"

namespace dpem::gmm_testing {
namespace {

// Exact statistics and the naive responsibilities of a perturbed start.
struct EStepFixture {
  GmmParameters start;
  DataMatrix x;
  GmmStatistics stats;
  Eigen::MatrixXd gamma;
};

EStepFixture MakeFixture(CovarianceType t) {
  EStepFixture f;
  f.start = Perturbed(ThreeComponents(t));
  f.x = Draw(ThreeComponents(t), 800, 31);
  f.stats = *ComputeStatistics(f.start, f.x);
  Eigen::VectorXd unused;
  NaiveEStep(f.start, f.x, &f.gamma, &unused);
  return f;
}

TEST(GmmMStepTest, MleReproducesWeightedMoments) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const EStepFixture f = MakeFixture(t);
    MStepOptions options;
    options.covariance_floor = 1e-5;
    const GmmParameters next = *MStep(f.stats, f.start, 800, options);
    EXPECT_TRUE(ValidateParameters(next).ok());
    for (Eigen::Index k = 0; k < 3; ++k) {
      double count;
      Eigen::VectorXd mean;
      Eigen::MatrixXd cov;
      WeightedMoments(f.x, f.gamma.col(k), &count, &mean, &cov);
      EXPECT_NEAR(next.weights(k), count / 800, 1e-10);
      EXPECT_LT(RelativeDiff(next.means.row(k).transpose(), mean), 1e-9);
      const Eigen::MatrixXd expected =
          Structured(cov, t) + 1e-5 * Eigen::MatrixXd::Identity(3, 3);
      EXPECT_LT(RelativeDiff(next.covariances[k], expected), 1e-9);
    }
  }
}

TEST(GmmMStepTest, MapMatchesSupplementFormulas) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const EStepFixture f = MakeFixture(t);
    MStepOptions options;
    options.estimator = Estimator::kMap;
    options.prior = DefaultPrior(3, 3);
    options.prior.alpha << 2.0, 3.5, 1.5;
    options.prior.kappa0 = 4.0;
    options.prior.s0(0, 1) = options.prior.s0(1, 0) = 0.03;
    const GmmPrior& pr = options.prior;
    const GmmParameters next = *MStep(f.stats, f.start, 800, options);
    const double n = 800, d = 3;
    for (Eigen::Index k = 0; k < 3; ++k) {
      double nk;
      Eigen::VectorXd mu;
      Eigen::MatrixXd sigma;
      WeightedMoments(f.x, f.gamma.col(k), &nk, &mu, &sigma);
      const double pi_mle = nk / n;
      EXPECT_NEAR(next.weights(k),
                  (n * pi_mle + pr.alpha(k) - 1) / (n + pr.alpha.sum() - 3),
                  1e-10);
      EXPECT_LT(RelativeDiff(next.means.row(k).transpose(),
                             nk * mu / (nk + pr.kappa0)), 1e-9);
      const Eigen::MatrixXd full_map =
          (pr.s0 + nk * sigma +
           pr.kappa0 * nk / (pr.kappa0 + nk) * mu * mu.transpose()) /
          (pr.nu0 + nk + d + 2);
      const Eigen::MatrixXd expected =
          Structured(full_map, t) + 1e-6 * Eigen::MatrixXd::Identity(3, 3);
      EXPECT_LT(RelativeDiff(next.covariances[k], expected), 1e-9);
    }
  }
}

TEST(GmmMStepTest, DefaultPriorHasSupplementValues) {
  const GmmPrior p = DefaultPrior(4, 5);
  EXPECT_EQ(p.alpha, Eigen::VectorXd::Constant(4, 2.0));
  EXPECT_EQ(p.kappa0, 1.0);
  EXPECT_EQ(p.nu0, 7.0);
  EXPECT_EQ(p.s0, 0.1 * Eigen::MatrixXd::Identity(5, 5));
}

TEST(GmmMStepTest, EmLogLikelihoodIsNonDecreasing) {
  for (CovarianceType t : kAllCovarianceTypes) {
    const DataMatrix x = Draw(ThreeComponents(t), 2000, 41);
    GmmParameters params = Perturbed(ThreeComponents(t));
    MStepOptions options;
    options.covariance_floor = 1e-12;
    double previous = -std::numeric_limits<double>::infinity();
    for (int iter = 0; iter < 40; ++iter) {
      const GmmStatistics s = *ComputeStatistics(params, x);
      EXPECT_GE(s.log_likelihood, previous - 1e-9 * std::fabs(previous))
          << CovarianceTypeName(t) << " iteration " << iter;
      previous = s.log_likelihood;
      params = *MStep(s, params, static_cast<double>(s.n), options);
    }
    // EM moved far from the start: the fit beats the perturbed start.
    EXPECT_GT(previous, ComputeStatistics(Perturbed(ThreeComponents(t)), x)
                                ->log_likelihood + 100);
  }
}

TEST(GmmMStepTest, ComponentsThatLoseTheirMassKeepMeanAndCovariance) {
  const EStepFixture f = MakeFixture(CovarianceType::kFull);
  GmmStatistics s = f.stats;
  s.counts(1) = 0;
  s.sums.row(1).setZero();
  s.second_full[1].setZero();
  s.counts(2) = -4.0;  // A noisy negative count.
  const GmmParameters next = *MStep(s, f.start, 800, MStepOptions{});
  for (Eigen::Index k : {1, 2}) {
    EXPECT_EQ(next.weights(k), 0.0);
    EXPECT_EQ(next.means.row(k), f.start.means.row(k));
    EXPECT_EQ(next.covariances[k], f.start.covariances[k]);
  }
  EXPECT_NEAR(next.weights(0), 1.0, 1e-15);
  EXPECT_NE(next.means.row(0), f.start.means.row(0));
  // Below a raised min_count: previous mean and covariance, weight by count.
  MStepOptions raised;
  raised.min_count = f.stats.counts(2) + 1;
  const GmmParameters kept = *MStep(f.stats, f.start, 800, raised);
  EXPECT_EQ(kept.covariances[2], f.start.covariances[2]);
  EXPECT_NEAR(kept.weights(2), f.stats.counts(2) / f.stats.counts.sum(), 1e-12);
  // All counts lost: the previous weights are kept.
  s.counts.setConstant(-1.0);
  EXPECT_EQ(MStep(s, f.start, 800, MStepOptions{})->weights, f.start.weights);
}

TEST(GmmMStepTest, NoisyNonPsdMomentsGiveSpdCovariances) {
  for (Estimator e : {Estimator::kMle, Estimator::kMap}) {
    for (CovarianceType t : kAllCovarianceTypes) {
      const EStepFixture f = MakeFixture(t);
      GmmStatistics s = f.stats;
      for (auto& m : s.second_full) m(0, 0) -= 5 * m(0, 0), m(1, 2) += 30;
      s.second_diag.col(1).array() -= 50.0;
      s.second_trace.array() -= 100.0;
      MStepOptions options;
      options.estimator = e;
      options.prior = DefaultPrior(3, 3);
      const GmmParameters next = *MStep(s, f.start, 800, options);
      ASSERT_TRUE(ValidateParameters(next).ok()) << CovarianceTypeName(t);
      for (const Eigen::MatrixXd& c : next.covariances) {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(c);
        EXPECT_GE(eig.eigenvalues().minCoeff(), 1e-6 * (1 - 1e-9));
        EXPECT_LE(eig.eigenvalues().minCoeff(), 1e-6 * (1 + 1e-6));
      }
    }
  }
}

TEST(GmmMStepTest, RejectsInvalidInputs) {
  const EStepFixture f = MakeFixture(CovarianceType::kFull);
  MStepOptions options;
  EXPECT_TRUE(MStep(f.stats, f.start, 800, options).ok());
  EXPECT_FALSE(MStep(f.stats, f.start, 0, options).ok());
  EXPECT_FALSE(MStep(f.stats, Perturbed(ThreeComponents(
                                  CovarianceType::kDiagonal)), 800, options).ok());
  GmmStatistics nan = f.stats;
  nan.sums(0, 0) = std::nan("");
  EXPECT_FALSE(MStep(nan, f.start, 800, options).ok());
  std::vector<MStepOptions> bad(5, options);
  bad[0].covariance_floor = 0;
  bad[1].min_count = -1;
  bad[2].estimator = Estimator::kMap;  // Prior not set.
  bad[3].estimator = Estimator::kMap;
  bad[3].prior = DefaultPrior(3, 3);
  bad[3].prior.nu0 = 1.5;  // Not > d - 1.
  bad[4].estimator = Estimator::kMap;
  bad[4].prior = DefaultPrior(2, 3);  // Wrong K.
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(MStep(f.stats, f.start, 800, bad[i]).status().code(),
              StatusCode::kInvalidArgument) << "case " << i;
  }
  EXPECT_TRUE(bad[4].Validate().ok());  // Only MStep knows K.
}

}  // namespace
}  // namespace dpem::gmm_testing
