#include "dpem/models/gmm/gmm.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "dpem/random/generator.h"

namespace dpem {
namespace {

constexpr CovarianceType kAllTypes[] = {CovarianceType::kFull,
                                        CovarianceType::kDiagonal,
                                        CovarianceType::kSpherical};

// max |a - b| / max(max |b|, 1e-300).
double RelativeDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() /
         std::max(b.cwiseAbs().maxCoeff(), 1e-300);
}

// A 3-component mixture in 3-D of the given structure.
GmmParameters ThreeComponents(CovarianceType type) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector3d(0.5, 0.3, 0.2);
  p.means.resize(3, 3);
  p.means << -0.4, 0.1, 0.0,  //
      0.3, 0.3, -0.2,         //
      0.0, -0.4, 0.3;
  Eigen::Matrix3d full;
  full << 0.020, 0.006, -0.003,  //
      0.006, 0.015, 0.002,       //
      -0.003, 0.002, 0.010;
  for (int k = 0; k < 3; ++k) {
    const Eigen::Matrix3d base = full * (1.0 + 0.5 * k);
    if (type == CovarianceType::kFull) {
      p.covariances.push_back(base);
    } else if (type == CovarianceType::kDiagonal) {
      p.covariances.push_back(Eigen::Matrix3d(base.diagonal().asDiagonal()));
    } else {
      p.covariances.push_back(Eigen::Matrix3d::Identity() * base.trace() / 3);
    }
  }
  return p;
}

// A perturbed copy, as a starting point different from the truth.
GmmParameters Perturbed(const GmmParameters& truth) {
  GmmParameters p = truth;
  p.weights = Eigen::Vector3d::Constant(1.0 / 3);
  p.means.array() += 0.1;
  for (auto& c : p.covariances) c *= 2.0;
  return p;
}

DataMatrix Draw(const GmmParameters& p, Eigen::Index n, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  StatusOr<DataMatrix> x = Sample(p, n, gen);
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  return *x;
}

// Naive log N(x | mu, Sigma) with an explicit inverse and determinant (an
// independent check of the Cholesky path).
double NaiveLogNormal(const Eigen::VectorXd& x, const Eigen::VectorXd& mu,
                      const Eigen::MatrixXd& cov) {
  const Eigen::VectorXd diff = x - mu;
  const double quad = diff.dot(cov.inverse() * diff);
  const double d = static_cast<double>(x.size());
  return -0.5 * (d * std::log(2 * std::numbers::pi) +
                 std::log(cov.determinant()) + quad);
}

// Naive responsibilities (N x K) and per-row log densities.
void NaiveEStep(const GmmParameters& p, const DataMatrix& x,
                Eigen::MatrixXd* gamma, Eigen::VectorXd* log_density) {
  gamma->resize(x.rows(), p.components());
  log_density->resize(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double total = 0;
    for (Eigen::Index k = 0; k < p.components(); ++k) {
      (*gamma)(i, k) = p.weights(k) * std::exp(NaiveLogNormal(
                           x.row(i).transpose(), p.means.row(k).transpose(),
                           p.covariances[k]));
      total += (*gamma)(i, k);
    }
    gamma->row(i) /= total;
    (*log_density)(i) = std::log(total);
  }
}

// Weighted mean and centred weighted covariance, computed row by row.
void WeightedMoments(const DataMatrix& x, const Eigen::VectorXd& g,
                     double* count, Eigen::VectorXd* mean,
                     Eigen::MatrixXd* cov) {
  *count = g.sum();
  *mean = Eigen::VectorXd::Zero(x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) *mean += g(i) * x.row(i).transpose();
  *mean /= *count;
  *cov = Eigen::MatrixXd::Zero(x.cols(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::VectorXd diff = x.row(i).transpose() - *mean;
    *cov += g(i) * diff * diff.transpose();
  }
  *cov /= *count;
}

// The part of a full covariance that `type` keeps.
Eigen::MatrixXd Structured(const Eigen::MatrixXd& m, CovarianceType type) {
  if (type == CovarianceType::kFull) return m;
  if (type == CovarianceType::kDiagonal) return m.diagonal().asDiagonal();
  return Eigen::MatrixXd::Identity(m.rows(), m.cols()) * m.trace() / m.rows();
}

TEST(GmmNamesTest, RoundTripAndErrors) {
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
    for (CovarianceType t : kAllTypes) {
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
  for (CovarianceType t : kAllTypes) {
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
}  // namespace dpem
