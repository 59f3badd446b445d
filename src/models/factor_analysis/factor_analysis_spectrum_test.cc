// Tests of what factor analysis takes from the spectrum of S: the Lanczos
// path against the LAPACK path (eigenpairs of planted spectra, whole fits to
// 1e-6 relative in the log-likelihood, computed here from a dense Cholesky
// factor of C), and the private fit's eigenvalue repairs against their
// definitions on planted spectra.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "internal/randomized_eigen_solver.h"
#include "models/factor_analysis/factor_analysis_internal.h"

#include "testing/random_matrices.h"

namespace dpem::internal {
namespace {

using test_support::RandomOrthogonal;

Eigen::MatrixXd Gaussian(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  return test_support::GaussianMatrix(rows, cols, seed);
}

// The second moment of n draws of a planted factor model (d, L), plus an
// optional symmetric noise of standard deviation `noise` per entry (a
// release's); exactly symmetric, as a release is.
Eigen::MatrixXd FactorSecondMoment(Eigen::Index d, Eigen::Index l, Eigen::Index n,
                                   double noise, unsigned seed) {
  const Eigen::MatrixXd w = Gaussian(d, l, seed) * 0.5;
  const Eigen::VectorXd psi = (Gaussian(d, 1, seed + 1).array().abs() * 0.1 + 0.05).matrix();
  const Eigen::MatrixXd x = Gaussian(n, l, seed + 2) * w.transpose() +
                            Gaussian(n, d, seed + 3) * psi.cwiseSqrt().asDiagonal();
  Eigen::MatrixXd s = x.transpose() * x / static_cast<double>(n) +
                      Gaussian(d, d, seed + 4) * noise;
  s.triangularView<Eigen::StrictlyUpper>() = s.transpose();
  return s;
}

// -(d log 2 pi + log det C + tr(C^-1 S)) / 2 with a Cholesky factor of the
// d x d covariance C = W W^T + Psi: independent of the Woodbury forms.
double DenseLogLikelihood(const FaParameters& p, const Eigen::MatrixXd& s) {
  const Eigen::MatrixXd c = p.loadings * p.loadings.transpose() +
                            Eigen::MatrixXd(p.noise_variances.asDiagonal());
  const Eigen::LLT<Eigen::MatrixXd> llt(c);
  const Eigen::MatrixXd l = llt.matrixL();
  const double d = static_cast<double>(s.rows());
  return -0.5 * (d * std::log(2.0 * std::numbers::pi) + 2.0 * l.diagonal().array().log().sum() +
                 llt.solve(s).trace());
}

FaEmOptions Em(int factors, int iterations, bool krylov) {
  FaEmOptions o;
  o.factors = factors;
  o.iterations = iterations;
  o.tolerance = 0.0;  // All J: the paths are compared iteration for iteration.
  o.dense_max_dimension = krylov ? 0 : std::numeric_limits<Eigen::Index>::max();
  return o;
}

TEST(FaSpectrumTest, LanczosFindsThePlantedTopEigenpairs) {
  const Eigen::Index d = 200;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 1);
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 1.0, 0.01);
  spectrum.head(5) << 9.0, 7.0, 5.0, 4.0, 3.0;
  const Eigen::MatrixXd s = q * spectrum.asDiagonal() * q.transpose();
  for (bool krylov : {true, false}) {
    StatusOr<Eigenpairs> top = LeadingEigenpairs(s, 5, Em(5, 1, krylov));
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    for (Eigen::Index k = 0; k < 5; ++k) {
      EXPECT_NEAR(top->values(k), spectrum(k), 1e-11) << "krylov " << krylov;
      EXPECT_NEAR(std::abs(top->vectors.col(k).dot(q.col(k))), 1.0, 1e-10);
    }
  }
  StatusOr<double> low = LowestEigenvalue(s, Em(5, 1, true));
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  EXPECT_NEAR(*low, 0.01, 1e-10);
}

// The same fit from Lanczos's start and LAPACK's: the log-likelihoods agree
// to 1e-6 relative (in fact to about 1e-12), and each is the dense
// Gaussian's.
TEST(FaSpectrumTest, LanczosAndLapackStartsGiveTheSameFit) {
  const Eigen::MatrixXd s = FactorSecondMoment(150, 4, 400, 0.0, 10);
  StatusOr<FaParameters> krylov = FitFaToSecondMoment(s, Em(4, 50, true));
  StatusOr<FaParameters> lapack = FitFaToSecondMoment(s, Em(4, 50, false));
  ASSERT_TRUE(krylov.ok()) << krylov.status().ToString();
  ASSERT_TRUE(lapack.ok()) << lapack.status().ToString();
  const double ll_krylov = DenseLogLikelihood(*krylov, s);
  const double ll_lapack = DenseLogLikelihood(*lapack, s);
  EXPECT_NEAR(ll_krylov / ll_lapack, 1.0, 1e-6);
  EXPECT_NEAR(*FaSecondMomentLogLikelihood(*krylov, s) / ll_krylov, 1.0, 1e-12);
  EXPECT_LT((krylov->noise_variances - lapack->noise_variances).cwiseAbs().maxCoeff(), 1e-8);
}

// Progress reports the log-likelihood from the iteration's own product S A;
// the last report is the log-likelihood of the returned model.
TEST(FaSpectrumTest, TheLastProgressReportIsTheFittedModelsLikelihood) {
  const Eigen::MatrixXd s = FactorSecondMoment(40, 3, 200, 0.0, 20);
  double last = 0.0;
  int reports = 0;
  FaEmOptions o = Em(3, 30, false);
  o.progress = [&](int, double ll) { last = ll, ++reports; };
  StatusOr<FaParameters> fit = FitFaToSecondMoment(s, o);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_EQ(reports, 30);
  EXPECT_NEAR(last / DenseLogLikelihood(*fit, s), 1.0, 1e-12);
}

TEST(FaSpectrumTest, TheFitDoesNotDependOnTheThreadCount) {
  const Eigen::MatrixXd s = FactorSecondMoment(600, 3, 300, 1e-3, 30);
  FaEmOptions o = Em(3, 10, true);
  o.threads = 1;
  StatusOr<FaParameters> one = FitFaToSecondMoment(s, o);
  o.threads = 3;
  StatusOr<FaParameters> three = FitFaToSecondMoment(s, o);
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(one->loadings, three->loadings);
  EXPECT_EQ(one->noise_variances, three->noise_variances);
}

// Lanczos breaks down on the zero matrix; LAPACK takes over.
TEST(FaSpectrumTest, ALanczosFailureFallsBackToLapack) {
  StatusOr<Eigenpairs> top = LeadingEigenpairs(Eigen::MatrixXd::Zero(80, 80), 2, Em(2, 1, true));
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(top->values, Eigen::VectorXd::Zero(2));
}

// The shift kShiftBack may add on the Lanczos path: floor - lambda_min, plus
// at most twice LowestEigenvalue's margin (the Ritz value's own error and the
// margin subtracted from it) for a matrix with Frobenius norm `frobenius`.
double ShiftBackSlack(double frobenius) {
  return 2.0 * (2.0 * kShiftBackTolerance * 2.0 * frobenius);
}

// A planted indefinite spectrum: the shift adds (floor - lambda_min) I and
// moves the top eigenvalues by as much (kShiftBack shifts as much, or on the
// Lanczos path at most ShiftBackSlack more, and says by how much); the floor
// is Q max(l, floor) Q^T.
TEST(FaRepairTest, ShiftAndFloorAreTheirDefinitions) {
  const Eigen::Index d = 120;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 2);
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 2.0, -0.5);
  const Eigen::MatrixXd s = q * spectrum.asDiagonal() * q.transpose();
  const double floor = 1e-3;
  for (bool krylov : {true, false}) {
    for (FaEigenvalueRepair repair : {FaEigenvalueRepair::kShift, FaEigenvalueRepair::kShiftBack}) {
      Eigen::MatrixXd shifted = s;
      StatusOr<RepairedSpectrum> r = RepairEigenvalues(shifted, floor, repair, Em(3, 1, krylov));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const bool loose = krylov && repair == FaEigenvalueRepair::kShiftBack;
      if (loose) {  // Above the exact shift, by at most the slack.
        EXPECT_GE(r->shift, floor + 0.5 - 1e-10);
        EXPECT_LE(r->shift, floor + 0.5 + ShiftBackSlack(spectrum.norm()));
      } else {
        EXPECT_NEAR(r->shift, floor + 0.5, 1e-10);
      }
      const Eigen::MatrixXd expected = s + r->shift * Eigen::MatrixXd::Identity(d, d);
      EXPECT_LT((shifted - expected).cwiseAbs().maxCoeff(), 1e-10) << "krylov " << krylov;
      EXPECT_NEAR(r->top.values(0), 2.0 + r->shift, 1e-10);
    }
    Eigen::MatrixXd floored = s;
    StatusOr<RepairedSpectrum> r =
        RepairEigenvalues(floored, floor, FaEigenvalueRepair::kFloor, Em(3, 1, krylov));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const Eigen::VectorXd lifted = spectrum.cwiseMax(floor);
    EXPECT_LT((floored - q * lifted.asDiagonal() * q.transpose()).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_NEAR(r->top.values(0), 2.0, 1e-12);
    EXPECT_EQ(r->shift, 0.0);
  }
}

// The approximate start is RandomizedTopEigenpairs of the repaired matrix,
// bit for bit, where Lanczos would run: after the shift, not before (on S~
// itself the block leans to its large negative eigenvalues, and the values
// would miss the shift); LAPACK's eigenpairs up to dense_max_dimension.
TEST(FaRepairTest, TheApproximateStartIsRandomizedOnTheRepairedMatrix) {
  const Eigen::Index d = 200;
  const Eigen::MatrixXd q = RandomOrthogonal(d, 7);
  Eigen::VectorXd spectrum = Eigen::VectorXd::LinSpaced(d, 0.5, -5.0);
  for (Eigen::Index i = 0; i < 3; ++i) spectrum(i) = 3.0 - 0.5 * static_cast<double>(i);
  const Eigen::MatrixXd s = q * spectrum.asDiagonal() * q.transpose();
  const double floor = 1e-3;
  for (FaEigenvalueRepair repair : {FaEigenvalueRepair::kShift, FaEigenvalueRepair::kShiftBack}) {
    const FaEmOptions o = Em(3, 1, true);
    Eigen::MatrixXd repaired = s;
    StatusOr<RepairedSpectrum> r = RepairEigenvalues(repaired, floor, repair, o, true);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GE(r->shift, 5.0 + floor - 1e-8);
    EXPECT_LE(r->shift, 5.0 + floor +
                            (repair == FaEigenvalueRepair::kShiftBack ? ShiftBackSlack(spectrum.norm())
                                                                      : 1e-8));
    StatusOr<Eigenpairs> expected = RandomizedTopEigenpairs(repaired, 3, o.threads);
    ASSERT_TRUE(expected.ok());
    EXPECT_EQ(r->top.values, expected->values);
    EXPECT_EQ(r->top.vectors, expected->vectors);
    for (Eigen::Index k = 0; k < 3; ++k) {
      EXPECT_LE(r->top.values(k), spectrum(k) + r->shift + 1e-12) << k;
      // Approximate: the shift compresses the relative gap (8 / 5.5 here).
      EXPECT_NEAR(r->top.values(k), spectrum(k) + r->shift, 0.5) << k;
    }
    // Up to dense_max_dimension: LAPACK's exact eigenpairs, approximate or not.
    Eigen::MatrixXd dense = s;
    StatusOr<RepairedSpectrum> exact = RepairEigenvalues(dense, floor, repair, Em(3, 1, false),
                                                         true);
    ASSERT_TRUE(exact.ok());
    EXPECT_NEAR(exact->top.values(0), 3.0 + floor + 5.0, 1e-10);
  }
}

TEST(FaRepairTest, EveryRepairLeavesAMatrixAboveTheFloorAsItIs) {
  const Eigen::MatrixXd s = FactorSecondMoment(100, 2, 500, 0.0, 3);
  for (FaEigenvalueRepair repair : {FaEigenvalueRepair::kShift, FaEigenvalueRepair::kFloor,
                                    FaEigenvalueRepair::kShiftBack}) {
    for (bool krylov : {true, false}) {
      Eigen::MatrixXd repaired = s;
      StatusOr<RepairedSpectrum> r = RepairEigenvalues(repaired, 1e-6, repair, Em(2, 1, krylov));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(repaired, s);
      EXPECT_EQ(r->shift, 0.0);
      ASSERT_GE(r->top.values.size(), 2);
    }
  }
}

// Taking the shift back: psi - c where that is above the floor, the floor
// elsewhere; the loadings untouched.
TEST(FaRepairTest, TakeShiftBackSubtractsTheShiftAndFloors) {
  FaParameters p;
  p.mean = Eigen::VectorXd::Zero(4);
  p.loadings = Eigen::MatrixXd::Ones(4, 1);
  p.noise_variances = Eigen::Vector4d(0.5, 0.31, 0.3, 0.2);
  TakeShiftBack(p, 0.25, 0.06);
  EXPECT_NEAR(p.noise_variances(0), 0.25, 1e-15);
  EXPECT_NEAR(p.noise_variances(1), 0.06, 1e-15);
  EXPECT_EQ(p.noise_variances(2), 0.06);
  EXPECT_EQ(p.noise_variances(3), 0.06);
  EXPECT_EQ(p.loadings, Eigen::MatrixXd::Ones(4, 1));
}

// iterations_run is the number of EM iterations whose parameters were kept:
// J with tolerance 0, the number of progress reports when EM stops at its
// tolerance (one per iteration), and 0 when the first step already fails
// (S = -I: G + B S B^T is negative; the start is returned, valid).
TEST(FaEmIterationsTest, IterationsRunCountsTheIterationsKept) {
  const Eigen::MatrixXd s = FactorSecondMoment(12, 2, 400, 0.0, 21);
  FaEmOptions o = Em(2, 300, false);
  StatusOr<Eigenpairs> top = LeadingEigenpairs(s, 2, o);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  int run = -1;
  ASSERT_TRUE(FitFaWithEigenpairs(s, *top, o, &run).ok());
  EXPECT_EQ(run, 300);
  o.tolerance = 1e-6;
  int reports = 0;
  o.progress = [&reports](int it, double) { EXPECT_EQ(it, ++reports); };
  run = -1;
  StatusOr<FaParameters> stopped = FitFaWithEigenpairs(s, *top, o, &run);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(run, reports);
  EXPECT_GT(run, 1);
  EXPECT_LT(run, 300) << "the planted model must converge within J";
  // The same number of iterations without the tolerance: the same fit.
  FaEmOptions capped = Em(2, run, false);
  int capped_run = -1;
  StatusOr<FaParameters> same = FitFaWithEigenpairs(s, *top, capped, &capped_run);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(capped_run, run);
  EXPECT_EQ(same->noise_variances, stopped->noise_variances);
  // Without a progress callback: the same count.
  o.progress = nullptr;
  int quiet_run = -1;
  ASSERT_TRUE(FitFaWithEigenpairs(s, *top, o, &quiet_run).ok());
  EXPECT_EQ(quiet_run, run);

  const Eigen::Index d = 4;
  const Eigen::MatrixXd negative = -Eigen::MatrixXd::Identity(d, d);
  Eigenpairs e1;
  e1.values = Eigen::VectorXd::Ones(1);
  e1.vectors = Eigen::MatrixXd::Identity(d, 1);
  run = -1;
  StatusOr<FaParameters> start = FitFaWithEigenpairs(negative, e1, Em(1, 10, false), &run);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  EXPECT_EQ(run, 0);
  EXPECT_TRUE(ValidateFaParameters(*start).ok());
}

// A noisy, indefinite "release": the shifted fits from Lanczos and LAPACK
// agree to 1e-6 relative in the log-likelihood of the repaired matrix.
TEST(FaRepairTest, TheShiftedFitIsTheSameOnBothPaths) {
  const Eigen::MatrixXd noisy = FactorSecondMoment(160, 3, 100, 0.02, 40);
  double ll[2] = {0.0, 0.0};
  for (bool krylov : {true, false}) {
    Eigen::MatrixXd s = noisy;
    const FaEmOptions o = Em(3, 40, krylov);
    StatusOr<RepairedSpectrum> r = RepairEigenvalues(s, 1e-6, FaEigenvalueRepair::kShift, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GT(s(0, 0), noisy(0, 0));  // The noise made it indefinite.
    StatusOr<FaParameters> fit = FitFaWithEigenpairs(s, r->top, o);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    ll[krylov ? 0 : 1] = DenseLogLikelihood(*fit, s);
  }
  EXPECT_NEAR(ll[0] / ll[1], 1.0, 1e-6);
}

TEST(FaRepairTest, OptionsAreValidated) {
  FaEmOptions o = Em(2, 1, true);
  o.threads = -1;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = Em(2, 1, true);
  o.dense_max_dimension = -1;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  FaFitOptions f;
  f.em = Em(2, 1, true);
  f.epsilon = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(f.Validate().ok());
  f.eigenvalue_repair = static_cast<FaEigenvalueRepair>(7);
  EXPECT_EQ(f.Validate().code(), StatusCode::kInvalidArgument);
  f.eigenvalue_repair = FaEigenvalueRepair::kShiftBack;
  for (double bad : {-0.5, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    f.variance_noise_floor = bad;
    EXPECT_EQ(f.Validate().code(), StatusCode::kInvalidArgument) << bad;
  }
  f.variance_noise_floor = 0.0;
  EXPECT_TRUE(f.Validate().ok());
}

}  // namespace
}  // namespace dpem::internal
