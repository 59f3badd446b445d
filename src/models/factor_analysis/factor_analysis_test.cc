// Tests of factor analysis: densities and posteriors against dense closed
// forms, EM's monotonicity and exact recovery of a planted covariance, the
// one private release (sensitivity, calibration, empirical noise), and input
// validation.
#include "dpem/models/factor_analysis/factor_analysis.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/analytic_gaussian.h"
#include "dpem/random/samplers.h"
#include "testing/seeded_draws.h"
#include "testing/void_reasons.h"

namespace dpem {
namespace {

// A fixed model with d = 5, L = 2 (deterministic entries).
FaParameters TestModel() {
  FaParameters p;
  p.mean = Eigen::VectorXd::LinSpaced(5, -0.2, 0.3);
  p.loadings.resize(5, 2);
  p.loadings << 0.5, 0.1, -0.3, 0.4, 0.2, 0.2, 0.7, -0.1, 0.0, 0.3;
  p.noise_variances = Eigen::VectorXd::LinSpaced(5, 0.05, 0.2);
  return p;
}

DataMatrix Draw(const FaParameters& p, Eigen::Index n, std::uint64_t seed) {
  return test_support::SeededDraw(FaSample, p, n, seed);
}

Eigen::MatrixXd Covariance(const FaParameters& p) {
  return p.loadings * p.loadings.transpose() +
         Eigen::MatrixXd(p.noise_variances.asDiagonal());
}

// The dense log-density with a Cholesky factor of C = W W^T + Psi.
double DenseMeanLogLikelihood(const FaParameters& p, const DataMatrix& x) {
  const Eigen::LLT<Eigen::MatrixXd> llt(Covariance(p));
  const Eigen::MatrixXd l = llt.matrixL();
  const double logdet = 2.0 * l.diagonal().array().log().sum();
  double total = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::VectorXd r = x.row(i).transpose() - p.mean;
    total += -0.5 * (p.dimension() * std::log(2.0 * std::numbers::pi) + logdet +
                     llt.matrixL().solve(r).squaredNorm());
  }
  return total / static_cast<double>(x.rows());
}

TEST(FaDensityTest, LogLikelihoodMatchesTheDenseGaussian) {
  const FaParameters p = TestModel();
  const DataMatrix x = Draw(p, 50, 1);
  StatusOr<double> ll = FaMeanLogLikelihood(p, x);
  ASSERT_TRUE(ll.ok()) << ll.status().ToString();
  EXPECT_NEAR(*ll, DenseMeanLogLikelihood(p, x), 1e-11);
}

TEST(FaDensityTest, LogDensitiesMatchTheDenseGaussianRecordByRecord) {
  const FaParameters p = TestModel();
  const DataMatrix x = Draw(p, 30, 5);
  StatusOr<Eigen::VectorXd> densities = FaLogDensities(p, x);
  ASSERT_TRUE(densities.ok()) << densities.status().ToString();
  ASSERT_EQ(densities->size(), 30);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    EXPECT_NEAR((*densities)(i), DenseMeanLogLikelihood(p, DataMatrix(x.row(i))), 1e-11) << i;
  }
  StatusOr<double> mean = FaMeanLogLikelihood(p, x);
  ASSERT_TRUE(mean.ok());
  EXPECT_NEAR(densities->mean(), *mean, 1e-11);
  EXPECT_FALSE(FaLogDensities(p, DataMatrix(x.leftCols(2))).ok());
}

TEST(FaDensityTest, SecondMomentLogLikelihoodEqualsTheDataVersion) {
  FaParameters p = TestModel();
  const DataMatrix x = Draw(p, 40, 2);
  const DataMatrix centred = x.rowwise() - p.mean.transpose();
  const Eigen::MatrixXd s = centred.transpose() * centred / 40.0;
  StatusOr<double> from_s = FaSecondMomentLogLikelihood(p, s);
  ASSERT_TRUE(from_s.ok());
  EXPECT_NEAR(*from_s, DenseMeanLogLikelihood(p, x), 1e-11);
}

TEST(FaTransformTest, PosteriorMeanIsWTransposeCInverse) {
  const FaParameters p = TestModel();
  const DataMatrix x = Draw(p, 7, 3);
  StatusOr<DataMatrix> z = FaTransform(p, x);
  ASSERT_TRUE(z.ok());
  ASSERT_EQ(z->rows(), 7);
  ASSERT_EQ(z->cols(), 2);
  const Eigen::LLT<Eigen::MatrixXd> llt(Covariance(p));
  for (Eigen::Index i = 0; i < 7; ++i) {
    const Eigen::VectorXd expected =
        p.loadings.transpose() * llt.solve(x.row(i).transpose() - p.mean);
    EXPECT_LT((z->row(i).transpose() - expected).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(FaSampleTest, SampleCovarianceApproachesTheModel) {
  const FaParameters p = TestModel();
  const DataMatrix x = Draw(p, 200000, 4);
  const Eigen::VectorXd mean = x.colwise().mean().transpose();
  const DataMatrix c = x.rowwise() - mean.transpose();
  const Eigen::MatrixXd cov = c.transpose() * c / static_cast<double>(x.rows());
  // Entries are O(0.5); standard errors about 0.5 / sqrt(2e5) ~ 1e-3.
  EXPECT_LT((mean - p.mean).cwiseAbs().maxCoeff(), 6e-3);
  EXPECT_LT((cov - Covariance(p)).cwiseAbs().maxCoeff(), 1e-2);
}

TEST(FaEmTest, RecoversAnExactFactorCovariance) {
  const FaParameters truth = TestModel();
  FaEmOptions o;
  o.factors = 2;
  o.iterations = 3000;
  o.tolerance = 0.0;
  StatusOr<FaParameters> fit = FitFaToSecondMoment(Covariance(truth), o);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_LT((Covariance(*fit) - Covariance(truth)).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT((fit->noise_variances - truth.noise_variances).cwiseAbs().maxCoeff(), 1e-5);
  // Canonical rotation: orthogonal columns of decreasing norm, positive sums.
  const Eigen::MatrixXd gram = fit->loadings.transpose() * fit->loadings;
  EXPECT_NEAR(gram(0, 1), 0.0, 1e-10);
  EXPECT_GE(gram(0, 0), gram(1, 1));
  EXPECT_GT(fit->loadings.col(0).sum(), 0.0);
  EXPECT_GT(fit->loadings.col(1).sum(), 0.0);
}

TEST(FaEmTest, LogLikelihoodNeverDecreases) {
  const FaParameters truth = TestModel();
  const DataMatrix x = Draw(truth, 300, 5);
  const DataMatrix c = x.rowwise() - truth.mean.transpose();
  const Eigen::MatrixXd s = c.transpose() * c / 300.0;
  std::vector<double> trace;
  FaEmOptions o;
  o.factors = 2;
  o.iterations = 50;
  o.tolerance = 0.0;
  o.progress = [&trace](int, double ll) { trace.push_back(ll); };
  ASSERT_TRUE(FitFaToSecondMoment(s, o).ok());
  ASSERT_EQ(trace.size(), 50u);
  for (std::size_t i = 1; i < trace.size(); ++i) EXPECT_GE(trace[i], trace[i - 1] - 1e-12);
}

// With a tolerance, EM stops after the first iteration that gains less than
// it: every earlier gain is >= tol, the last one < tol, and the parameters
// are those of that iteration (a fit capped at the same J agrees).
TEST(FaEmTest, StopsAtTheFirstGainBelowTheTolerance) {
  const FaParameters truth = TestModel();
  const DataMatrix x = Draw(truth, 300, 5);
  const DataMatrix c = x.rowwise() - truth.mean.transpose();
  const Eigen::MatrixXd s = c.transpose() * c / 300.0;
  FaEmOptions all;
  all.factors = 2;
  all.iterations = 200;
  all.tolerance = 0.0;
  std::vector<double> full;
  all.progress = [&full](int, double ll) { full.push_back(ll); };
  ASSERT_TRUE(FitFaToSecondMoment(s, all).ok());
  const double tol = 1e-4;
  // Iterations until the first gain below tol (the first iteration's gain,
  // from the start, is large here: the trace's first entry is not checked).
  std::size_t expected = 1;
  while (expected < full.size() && full[expected] - full[expected - 1] >= tol) ++expected;
  ++expected;
  ASSERT_LT(expected, full.size()) << "the data must converge within 200 iterations";
  FaEmOptions stopping = all;
  stopping.tolerance = tol;
  std::vector<double> trace;
  stopping.progress = [&trace](int, double ll) { trace.push_back(ll); };
  StatusOr<FaParameters> stopped = FitFaToSecondMoment(s, stopping);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(trace.size(), expected);
  FaEmOptions capped = all;
  capped.iterations = static_cast<int>(expected);
  capped.progress = nullptr;
  StatusOr<FaParameters> same = FitFaToSecondMoment(s, capped);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(stopped->loadings, same->loadings);
  EXPECT_EQ(stopped->noise_variances, same->noise_variances);
}

TEST(FaReleaseTest, RecordsOneAnalyzeGaussReleaseWithTheCalibratedNoise) {
  // All records zero: the released matrix is pure noise.
  const DataMatrix unit = DataMatrix::Zero(10, 60);
  Generator gen = Generator::FromSeed(6);
  PrivacyLedger ledger;
  StatusOr<Eigen::MatrixXd> t = ReleaseFaSecondMoment(unit, 1.0, 1e-5, gen, ledger);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(ledger.size(), 1u);
  const Release& r = ledger.releases()[0];
  EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
  // ReleaseSymmetric records its grid-rounded sensitivity and scale (never
  // below the requested ones).
  EXPECT_GE(r.sensitivity, std::sqrt(2.0));
  EXPECT_LT(r.sensitivity, std::sqrt(2.0) * 1.001);
  StatusOr<double> z = CalibrateSingleGaussian(1.0, 1e-5, NoiseSampling::kDiscrete);
  ASSERT_TRUE(z.ok());
  EXPECT_GE(r.NoiseMultiplier(), *z);
  EXPECT_NEAR(r.noise_scale / (*z * std::sqrt(2.0)), 1.0, 1e-3);
  // Empirical standard deviation of the 1830 upper-triangle entries: the
  // relative standard error is 1/sqrt(2 * 1830) ~ 1.7%.
  double sum_sq = 0.0;
  int count = 0;
  for (Eigen::Index i = 0; i < 60; ++i) {
    for (Eigen::Index j = i; j < 60; ++j, ++count) sum_sq += (*t)(i, j) * (*t)(i, j);
  }
  EXPECT_NEAR(std::sqrt(sum_sq / count) / r.noise_scale, 1.0, 0.06);
  EXPECT_EQ(*t, t->transpose());
}

// Brute force over the unit circle (d = 2): the largest ||u u^T - v v^T||_F
// is sqrt(2) (the constant's derivation).
TEST(FaReleaseTest, SensitivityIsTheWorstCaseFrobeniusChange) {
  double worst = 0.0;
  for (int a = 0; a < 90; ++a) {
    for (int b = 0; b < 90; ++b) {
      for (double ru : {0.5, 1.0}) {
        const Eigen::Vector2d u = ru * Eigen::Vector2d(std::cos(a * 0.0698), std::sin(a * 0.0698));
        const Eigen::Vector2d v(std::cos(b * 0.0698), std::sin(b * 0.0698));
        worst = std::max(worst, (u * u.transpose() - v * v.transpose()).norm());
      }
    }
  }
  EXPECT_LE(worst, kFaSecondMomentSensitivity + 1e-12);
  EXPECT_GT(worst, kFaSecondMomentSensitivity - 1e-3);
}

FaFitOptions PrivateOptions() {
  FaFitOptions o;
  o.em.factors = 2;
  o.em.iterations = 20;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  o.domain.data_norm = 3.0;
  return o;
}

TEST(FaFitTest, PrivateFitCertifiesTheTargetAndMapsBackToOriginalUnits) {
  const DataMatrix x = Draw(TestModel(), 500, 7);
  Generator gen = Generator::FromSeed(8);
  StatusOr<FaFit> fit = FitFactorAnalysis(x, PrivateOptions(), gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  const FaGuarantee& g = fit->guarantee;
  EXPECT_TRUE(g.is_private);
  // Void for the test's seeded generator only.
  EXPECT_EQ(g.void_reasons.size(), 1u);
  EXPECT_EQ(test_support::CountSeededGeneratorReasons(g.void_reasons), 1);
  ASSERT_EQ(g.ledger.size(), 1u);
  EXPECT_LE(g.epsilon, 1.0);
  EXPECT_GT(g.epsilon, 0.999);
  EXPECT_EQ(fit->parameters.mean, Eigen::VectorXd::Zero(5));
  EXPECT_TRUE(ValidateFaParameters(fit->parameters).ok());
  EXPECT_EQ(fit->n, 500);
}

// A fit records the EM iterations it ran (one progress report each) and its
// tolerance, private or not; with tolerance 0 every one of the J ran.
TEST(FaFitTest, RecordsTheIterationsRunAndTheTolerance) {
  const DataMatrix x = Draw(TestModel(), 500, 7);
  for (double epsilon : {1.0, std::numeric_limits<double>::infinity()}) {
    FaFitOptions o = PrivateOptions();
    o.epsilon = epsilon;
    o.em.iterations = 200;
    int reports = 0;
    o.em.progress = [&reports](int it, double) { EXPECT_EQ(it, ++reports); };
    Generator gen = Generator::FromSeed(8);
    StatusOr<FaFit> fit = FitFactorAnalysis(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    EXPECT_EQ(fit->iterations, 200);
    EXPECT_EQ(fit->tolerance, kFaEmTolerance);
    EXPECT_EQ(fit->iterations_run, reports) << epsilon;
    EXPECT_GE(fit->iterations_run, 1) << epsilon;
    EXPECT_LT(fit->iterations_run, 200) << epsilon;
    o.em.tolerance = 0.0;
    o.em.progress = nullptr;
    Generator again = Generator::FromSeed(8);
    StatusOr<FaFit> all = FitFactorAnalysis(x, o, again);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_EQ(all->iterations_run, 200) << epsilon;
    EXPECT_EQ(all->tolerance, 0.0);
  }
}

// approximate_start reaches the fit: above dense_max_dimension the same
// release (same seed) gives another start, so another fit; at or below it,
// LAPACK's start either way, the same fit to the bit.
TEST(FaFitTest, TheApproximateStartAppliesAboveTheDenseDimensionOnly) {
  for (Eigen::Index d : {Eigen::Index{40}, kFaDenseMaxDimension + 12}) {
    FaParameters truth;
    truth.mean = Eigen::VectorXd::Zero(d);
    truth.loadings = Eigen::MatrixXd::Zero(d, 2);
    for (Eigen::Index i = 0; i < d; ++i) {
      truth.loadings(i, 0) = 0.3;
      truth.loadings(i, 1) = (i % 2 == 0) ? 0.2 : -0.2;
    }
    truth.noise_variances = Eigen::VectorXd::Constant(d, 0.05);
    const DataMatrix x = Draw(truth, 300, 31);
    std::vector<FaFit> fits;
    for (bool approximate : {false, true}) {
      FaFitOptions o = PrivateOptions();
      o.domain.data_norm = 10.0;
      o.em.iterations = 5;
      o.em.tolerance = 0.0;
      o.approximate_start = approximate;
      Generator gen = Generator::FromSeed(32);
      StatusOr<FaFit> fit = FitFactorAnalysis(x, o, gen);
      ASSERT_TRUE(fit.ok()) << fit.status().ToString();
      EXPECT_TRUE(ValidateFaParameters(fit->parameters).ok());
      fits.push_back(*std::move(fit));
    }
    if (d <= kFaDenseMaxDimension) {
      EXPECT_EQ(fits[0].parameters.loadings, fits[1].parameters.loadings) << d;
    } else {
      EXPECT_NE(fits[0].parameters.loadings, fits[1].parameters.loadings) << d;
    }
  }
}

// A seeded generator's noise is reproducible from the seed: a private fit
// made with one claims no guarantee; an OS-keyed one keeps it; a non-private
// fit claims none to void.
TEST(FaFitTest, ASeededGeneratorVoidsAPrivateFitOnly) {
  const DataMatrix x = Draw(TestModel(), 300, 15);
  Generator seeded_gen = Generator::FromSeed(16);
  StatusOr<FaFit> seeded = FitFactorAnalysis(x, PrivateOptions(), seeded_gen);
  ASSERT_TRUE(seeded.ok()) << seeded.status().ToString();
  EXPECT_TRUE(test_support::IsVoidedOnlyBySeed(seeded->guarantee));
  EXPECT_EQ(seeded->seed, std::optional<std::uint64_t>(16));
  StatusOr<Generator> os = Generator::FromOsEntropy();
  ASSERT_TRUE(os.ok());
  StatusOr<FaFit> keyed = FitFactorAnalysis(x, PrivateOptions(), *os);
  ASSERT_TRUE(keyed.ok()) << keyed.status().ToString();
  EXPECT_TRUE(keyed->guarantee.is_private);
  EXPECT_FALSE(keyed->guarantee.guarantee_void);
  EXPECT_TRUE(keyed->guarantee.void_reasons.empty());
  FaFitOptions plain = PrivateOptions();
  plain.epsilon = std::numeric_limits<double>::infinity();
  Generator plain_gen = Generator::FromSeed(17);
  StatusOr<FaFit> fit = FitFactorAnalysis(x, plain, plain_gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_FALSE(fit->guarantee.is_private);
  EXPECT_FALSE(fit->guarantee.guarantee_void);
  EXPECT_TRUE(fit->guarantee.void_reasons.empty());
}

TEST(FaFitTest, NonPrivateFitMakesNoReleaseAndReachesTheSampleOptimum) {
  FaParameters truth = TestModel();
  truth.mean.setZero();
  const DataMatrix x = Draw(truth, 2000, 9);
  FaFitOptions o;
  o.em.factors = 2;
  o.em.iterations = 500;
  o.em.tolerance = 0.0;
  o.epsilon = std::numeric_limits<double>::infinity();
  Generator gen = Generator::FromSeed(10);
  StatusOr<FaFit> fit = FitFactorAnalysis(x, o, gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_TRUE(fit->guarantee.ledger.empty());
  EXPECT_FALSE(fit->guarantee.is_private);
  StatusOr<double> fitted = FaMeanLogLikelihood(fit->parameters, x);
  StatusOr<double> true_ll = FaMeanLogLikelihood(truth, x);
  ASSERT_TRUE(fitted.ok() && true_ll.ok());
  EXPECT_GE(*fitted, *true_ll);  // The MLE beats the generating model.
}

TEST(FaFitTest, AnyThreadCountAndBlockSizeGiveTheSameFitUpToRounding) {
  // The one pass over the data runs on the engine; the sum of u u^T over
  // blocks and threads is the matrix version's up to rounding, and the same
  // seed draws the same noise.
  const DataMatrix x = Draw(TestModel(), 701, 13);
  FaFitOptions o = PrivateOptions();
  o.engine = {1, 0};
  Generator gen = Generator::FromSeed(14);
  const StatusOr<FaFit> one = FitFactorAnalysis(x, o, gen);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  for (EngineOptions e : {EngineOptions{2, 7}, EngineOptions{3, 100}}) {
    o.engine = e;
    Generator again = Generator::FromSeed(14);
    const StatusOr<FaFit> other = FitFactorAnalysis(*MatrixRowSource::Borrow(x), o, again);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    EXPECT_LT((other->parameters.loadings.cwiseAbs() - one->parameters.loadings.cwiseAbs())
                  .cwiseAbs()
                  .maxCoeff(),
              1e-9);
    EXPECT_LT((other->parameters.noise_variances - one->parameters.noise_variances)
                  .cwiseAbs()
                  .maxCoeff(),
              1e-9);
  }
}

TEST(FaFitTest, RejectsBadInput) {
  const DataMatrix x = Draw(TestModel(), 20, 11);
  Generator gen = Generator::FromSeed(12);
  FaFitOptions o = PrivateOptions();
  o.em.factors = 6;
  EXPECT_EQ(FitFactorAnalysis(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  o.em.factors = 0;
  EXPECT_EQ(FitFactorAnalysis(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  o = PrivateOptions();
  o.domain.data_norm = std::nan("");
  EXPECT_EQ(FitFactorAnalysis(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  o = PrivateOptions();
  o.delta = 0.0;
  EXPECT_EQ(FitFactorAnalysis(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  DataMatrix bad = x;
  bad(3, 2) = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FitFactorAnalysis(bad, PrivateOptions(), gen).status().code(),
            StatusCode::kInvalidArgument);
  o = PrivateOptions();
  o.domain.center = Eigen::VectorXd::Zero(3);
  EXPECT_EQ(FitFactorAnalysis(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  PrivacyLedger ledger;
  EXPECT_EQ(ReleaseFaSecondMoment(bad, 1.0, 1e-5, gen, ledger).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(ledger.empty());
}

// Rows outside the unit ball are re-projected, never refused (the release
// must not fail on the data): two rows (1, 1) of norm sqrt(2) contribute as
// (1, 1) / sqrt(2) each, so with little noise (epsilon 1e4) T is close to the
// all-ones matrix, not to the unprojected 2 (1 1; 1 1).
TEST(FaReleaseTest, RowsOutsideTheBallAreReprojected) {
  Generator gen = Generator::FromSeed(13);
  PrivacyLedger ledger;
  const StatusOr<Eigen::MatrixXd> t =
      ReleaseFaSecondMoment(DataMatrix::Constant(2, 2, 1.0), 1e4, 1e-5, gen, ledger);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(ledger.size(), 1u);
  EXPECT_LT((*t - Eigen::MatrixXd::Ones(2, 2)).cwiseAbs().maxCoeff(), 0.05)
      << "noise scale " << ledger.releases()[0].noise_scale;
}

}  // namespace
}  // namespace dpem
