// Tests of DP gradient EM (wang-dp-gradient-em): the gradients against
// derivations done here (finite differences of q, the complete-data case),
// self-consistency of the population gradient at beta*, the releases and the
// calibration, the noise's empirical scale, and the generators.
#include "dpem/models/gradient_em/gradient_em.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "dpem/accounting/accountant.h"
#include "dpem/data/generators.h"
#include "testing/void_reasons.h"

namespace dpem {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

GeneratedData Make(GradientEmModel model, Eigen::Index n, Eigen::Index d, double pm,
                   std::uint64_t seed) {
  GeneratorOptions o;
  o.model = model;
  o.n = n;
  o.d = d;
  o.snr = 3.0;
  o.sigma = 1.0;
  o.missing_prob = pm;
  Generator gen = Generator::FromSeed(seed);
  return *GenerateGradientEmData(o, gen);
}

// GMM: q(beta; beta') = -(w ||y - beta||^2 + (1 - w) ||y + beta||^2) / 2 with
// w = 1 / (1 + exp(-2 <beta', y> / sigma^2)); its gradient in beta at
// beta = beta' by central differences.
TEST(GradientEmGradientsTest, GmmMatchesFiniteDifferencesOfQ) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 5, 3, 0.0, 1);
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
    for (int j = 0; j < 3; ++j) {
      const double h = 1e-5;
      Eigen::VectorXd e = Eigen::VectorXd::Unit(3, j) * h;
      EXPECT_NEAR(grad(i, j), (q(beta + e) - q(beta - e)) / (2 * h), 1e-7);
    }
  }
}

// MRM: q = -(w (y - <x, b>)^2 + (1 - w)(y + <x, b>)^2) / 2,
// w = 1 / (1 + exp(-2 y <beta', x> / sigma^2)).
TEST(GradientEmGradientsTest, MrmMatchesFiniteDifferencesOfQ) {
  const GeneratedData g = Make(GradientEmModel::kMrm, 5, 3, 0.0, 2);
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
    for (int j = 0; j < 3; ++j) {
      const double h = 1e-5;
      Eigen::VectorXd e = Eigen::VectorXd::Unit(3, j) * h;
      EXPECT_NEAR(grad(i, j), (q(beta + e) - q(beta - e)) / (2 * h), 1e-6);
    }
  }
}

// RMC with nothing missing is linear regression: grad = y x - x x^T beta.
TEST(GradientEmGradientsTest, RmcWithoutMissingIsLeastSquares) {
  const GeneratedData g = Make(GradientEmModel::kRmc, 6, 4, 0.0, 3);
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
  const GeneratedData g = Make(model, 100000, 3, pm, seed);
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

GradientEmOptions PrivateOptions(GradientEmMethod method, int t) {
  GradientEmOptions o;
  o.method = method;
  o.iterations = t;
  o.sigma = 1.0;
  o.epsilon = 0.5;
  o.delta = 1e-4;
  o.tau = 10.0;
  o.clip = 1.0;
  return o;
}

// A release whose discrete grid cannot be formed (a clip so small that the
// rounding charge swamps the sensitivity) is refused before any draw from
// the fit's generator: CheckRelease runs on public values before the data
// is read (review finding: it used to fail after the first pass).
TEST(GradientEmFitTest, AnUnplannableReleaseFailsBeforeTheFitDrawsAnything) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 500, 4, 0.0, 22);
  GradientEmOptions o = PrivateOptions(GradientEmMethod::kClipped, 3);
  o.clip = 1e-300;
  Generator gen = Generator::FromSeed(9);
  Generator fresh = Generator::FromSeed(9);
  const StatusOr<GradientEmFit> fit = FitGradientEm(g.data, o, gen);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("discrete noise"), std::string::npos)
      << fit.status().ToString();
  EXPECT_EQ(gen.UniformOpen01(), fresh.UniformOpen01());  // Nothing drawn: no start, no pass.
}

TEST(GradientEmFitTest, ReleasesAreRecordedWithTheirSensitivity) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 2000, 4, 0.0, 21);
  for (GradientEmMethod m :
       {GradientEmMethod::kDp, GradientEmMethod::kClipped, GradientEmMethod::kDpEm}) {
    const GradientEmOptions o = PrivateOptions(m, 7);
    Generator gen = Generator::FromSeed(5);
    const GradientEmFit fit = *FitGradientEm(g.data, o, gen);
    ASSERT_EQ(fit.guarantee.ledger.size(), 7u);
    EXPECT_EQ(fit.trajectory.size(), 8u);
    double sens = 2.0 * 1.0 / 2000.0;
    if (m != GradientEmMethod::kClipped) {
      const double eps_t = std::sqrt(std::log(1e4) + 0.5) - std::sqrt(std::log(1e4));
      const double beta_s = std::sqrt(std::log(4.0 / 0.1));
      const double s = std::sqrt(2000.0 * 10.0 * eps_t) / (2.0 * beta_s);
      EXPECT_NEAR(fit.guarantee.robust.scale, s, 1e-9 * s);
      sens = 2.0 * 4.0 * std::sqrt(2.0) / 3.0 * s / 2000.0;
    }
    for (const Release& r : fit.guarantee.ledger.releases()) {
      // The discrete release adds its rounding charge (additive_noise.h).
      EXPECT_GE(r.sensitivity, sens);
      EXPECT_LE(r.sensitivity, sens * (1.0 + 1e-4));
      EXPECT_GE(r.NoiseMultiplier(), fit.guarantee.noise_multiplier * (1.0 - 1e-12));
      EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
    }
    EXPECT_LE(fit.guarantee.epsilon, 0.5);
    EXPECT_GT(fit.guarantee.epsilon, 0.49);
  }
}

TEST(GradientEmFitTest, EveryMethodAndModelGivesTheSameFitOnAnyThreadsAndBlocks) {
  // Each iteration is one engine pass; per-thread sums change only the order
  // of floating-point additions, and the same seed draws the same noise.
  for (GradientEmModel model : {GradientEmModel::kGmm, GradientEmModel::kMrm,
                                GradientEmModel::kRmc}) {
    const GeneratedData g = Make(model, 1001, 3, model == GradientEmModel::kRmc ? 0.2 : 0.0, 31);
    for (GradientEmMethod m : {GradientEmMethod::kDp, GradientEmMethod::kClipped,
                               GradientEmMethod::kDpEm, GradientEmMethod::kNonPrivate}) {
      if (m == GradientEmMethod::kDpEm && model != GradientEmModel::kGmm) continue;
      GradientEmOptions o = m == GradientEmMethod::kNonPrivate
                                ? PrivateOptions(GradientEmMethod::kDp, 5)
                                : PrivateOptions(m, 5);
      o.method = m;
      o.engine = {1, 0};
      Generator gen = Generator::FromSeed(6);
      const StatusOr<GradientEmFit> one = FitGradientEm(g.data, o, gen);
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      o.engine = {3, 17};
      Generator again = Generator::FromSeed(6);
      const StatusOr<GradientEmFit> three = FitGradientEm(g.data, o, again);
      ASSERT_TRUE(three.ok());
      EXPECT_LT((one->beta - three->beta).cwiseAbs().maxCoeff(), 1e-9)
          << GradientEmModelName(model) << " " << GradientEmMethodName(m);
    }
  }
}

// The paper's sigma^2 = 16 s^2 d T / (9 n^2 eps~^2) and its zCDP certificate;
// the rdp calibration adds less noise at the same target.
TEST(GradientEmFitTest, PaperCalibrationIsExactZcdpAndRdpIsTighter) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 1000, 3, 0.0, 22);
  GradientEmOptions o = PrivateOptions(GradientEmMethod::kDp, 10);
  o.calibration = NoiseCalibrationRule::kPaperZcdp;
  o.accountant = AccountantKind::kZcdp;
  Generator gen = Generator::FromSeed(6);
  const GradientEmFit paper = *FitGradientEm(g.data, o, gen);
  const double eps_t = std::sqrt(std::log(1e4) + 0.5) - std::sqrt(std::log(1e4));
  const double s = paper.guarantee.robust.scale;
  const double sigma2 = 16.0 * s * s * 3.0 * 10.0 / (9.0 * 1e6 * eps_t * eps_t);
  EXPECT_NEAR(paper.guarantee.noise_stddev, std::sqrt(sigma2), 1e-4 * std::sqrt(sigma2));
  EXPECT_LE(paper.guarantee.epsilon, 0.5 + 1e-9);
  EXPECT_GT(paper.guarantee.epsilon, 0.4999);
  o.calibration = NoiseCalibrationRule::kAccountant;
  o.accountant = AccountantKind::kRdp;
  const GradientEmFit rdp = *FitGradientEm(g.data, o, gen);
  EXPECT_LT(rdp.guarantee.noise_multiplier, 0.8 * paper.guarantee.noise_multiplier);
  // The paper's noise, certified by rdp, costs well under the target.
  PrivacyLedger ledger = paper.guarantee.ledger;
  EXPECT_LT(*ComputeEpsilon(ledger, 1e-4, AccountantKind::kRdp), 0.4);
}

// The budget charge of a fit, known before the data is read, is never below
// what the fit certifies. The paper's noise is exactly the target in zCDP, so
// the zCDP accountant's conservative upward rounding certifies a hair above
// it: the charge must be that, not the target (it used to be the target).
TEST(GradientEmFitTest, TheChargedEpsilonCoversWhatIsCertified) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 1000, 3, 0.0, 28);
  GradientEmOptions o = PrivateOptions(GradientEmMethod::kDp, 10);
  o.calibration = NoiseCalibrationRule::kPaperZcdp;
  o.accountant = AccountantKind::kZcdp;
  const StatusOr<double> charged = GradientEmChargedEpsilon(o);
  ASSERT_TRUE(charged.ok()) << charged.status().ToString();
  EXPECT_GT(*charged, 0.5);
  EXPECT_LE(*charged, 0.5 * (1.0 + 1e-9));
  for (GradientEmMethod m :
       {GradientEmMethod::kDp, GradientEmMethod::kClipped, GradientEmMethod::kDpEm}) {
    o.method = m;
    Generator gen = Generator::FromSeed(29);
    const StatusOr<GradientEmFit> fit = FitGradientEm(g.data, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    EXPECT_LE(fit->guarantee.epsilon, *charged) << GradientEmMethodName(m);
    EXPECT_EQ(GradientEmChargedEpsilon(o).value(), *charged);  // Not method-dependent.
  }
  // The accountant's own calibration certifies at most the target: charged as is.
  o.calibration = NoiseCalibrationRule::kAccountant;
  o.accountant = AccountantKind::kRdp;
  EXPECT_EQ(GradientEmChargedEpsilon(o).value(), 0.5);
  // The paper's noise under linear composition certifies far more than the
  // target: refused before anything is charged or drawn.
  o.calibration = NoiseCalibrationRule::kPaperZcdp;
  o.accountant = AccountantKind::kLinear;
  EXPECT_EQ(GradientEmChargedEpsilon(o).status().code(), StatusCode::kFailedPrecondition);
  Generator gen = Generator::FromSeed(30);
  EXPECT_EQ(FitGradientEm(g.data, o, gen).status().code(), StatusCode::kFailedPrecondition);
  o.method = GradientEmMethod::kNonPrivate;
  EXPECT_EQ(GradientEmChargedEpsilon(o).status().code(), StatusCode::kInvalidArgument);
}

// Two fits from the same start differ only by their noise in iteration 1:
// beta^1 - beta'^1 ~ N(0, 2 sigma_noise^2 step^2) per coordinate.
TEST(GradientEmFitTest, NoiseHasTheCalibratedScale) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 300, 2, 0.0, 23);
  GradientEmOptions o = PrivateOptions(GradientEmMethod::kDp, 1);
  o.initial = Eigen::VectorXd::Ones(2);
  double sum_sq = 0.0;
  double expected = 0.0;
  const int pairs = 400;
  for (int k = 0; k < pairs; ++k) {
    Generator a = Generator::FromSeed(1000 + 2 * k), b = Generator::FromSeed(1001 + 2 * k);
    const GradientEmFit fa = *FitGradientEm(g.data, o, a);
    const GradientEmFit fb = *FitGradientEm(g.data, o, b);
    sum_sq += (fa.beta - fb.beta).squaredNorm();
    expected = fa.guarantee.noise_stddev;
  }
  const double measured = std::sqrt(sum_sq / (2.0 * 2.0 * pairs));
  EXPECT_NEAR(measured, expected, 0.08 * expected);
}

// A record whose gradient overflows (1e200^2 = inf) must neither break the
// fit nor escape the sensitivity bound: every private method still releases.
TEST(GradientEmFitTest, ExtremeRecordsKeepTheFitFinite) {
  GeneratedData g = Make(GradientEmModel::kMrm, 200, 2, 0.0, 25);
  g.data.x(3, 0) = 1e200;
  g.data.y(3) = -1e200;
  for (GradientEmMethod m : {GradientEmMethod::kDp, GradientEmMethod::kClipped}) {
    Generator gen = Generator::FromSeed(9);
    const StatusOr<GradientEmFit> fit = FitGradientEm(g.data, PrivateOptions(m, 3), gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    EXPECT_TRUE(fit->beta.allFinite());
  }
}

TEST(GradientEmFitTest, OptionsAreValidated) {
  const GeneratedData g = Make(GradientEmModel::kMrm, 50, 2, 0.0, 24);
  Generator gen = Generator::FromSeed(1);
  GradientEmOptions o = PrivateOptions(GradientEmMethod::kDp, 3);
  o.tau = kNaN;
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o = PrivateOptions(GradientEmMethod::kClipped, 3);
  o.clip = kNaN;
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o = PrivateOptions(GradientEmMethod::kDp, 3);
  o.epsilon = kNaN;
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o = PrivateOptions(GradientEmMethod::kDp, 3);
  o.sigma = kNaN;
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o = PrivateOptions(GradientEmMethod::kDpEm, 3);
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());  // DP EM: GMM only.
  o = PrivateOptions(GradientEmMethod::kDp, 0);
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o = PrivateOptions(GradientEmMethod::kDp, 3);
  o.initial = Eigen::VectorXd::Ones(5);
  EXPECT_FALSE(FitGradientEm(g.data, o, gen).ok());
  o.method = GradientEmMethod::kNonPrivate;  // No privacy flags needed.
  o.initial = Eigen::VectorXd();
  o.epsilon = kNaN;
  o.tau = kNaN;
  EXPECT_TRUE(FitGradientEm(g.data, o, gen).ok());
}

// Every private method: a fit from a seeded generator (whose noise is
// reproducible from the seed) is void, one from the OS-keyed generator is
// not, and the non-private method claims no guarantee to void.
TEST(GradientEmFitTest, ASeededGeneratorVoidsAPrivateFitOnly) {
  const GeneratedData g = Make(GradientEmModel::kGmm, 500, 3, 0.0, 25);
  for (GradientEmMethod m :
       {GradientEmMethod::kDp, GradientEmMethod::kClipped, GradientEmMethod::kDpEm}) {
    const std::string name(GradientEmMethodName(m));
    Generator seeded_gen = Generator::FromSeed(26);
    const StatusOr<GradientEmFit> seeded = FitGradientEm(g.data, PrivateOptions(m, 3), seeded_gen);
    ASSERT_TRUE(seeded.ok()) << name << ": " << seeded.status().ToString();
    EXPECT_TRUE(test_support::IsVoidedOnlyBySeed(seeded->guarantee)) << name;
    EXPECT_EQ(seeded->seed, std::optional<std::uint64_t>(26)) << name;
    StatusOr<Generator> os = Generator::FromOsEntropy();
    ASSERT_TRUE(os.ok());
    const StatusOr<GradientEmFit> keyed = FitGradientEm(g.data, PrivateOptions(m, 3), *os);
    ASSERT_TRUE(keyed.ok()) << name << ": " << keyed.status().ToString();
    EXPECT_TRUE(keyed->guarantee.is_private) << name;
    EXPECT_FALSE(keyed->guarantee.guarantee_void) << name;
    EXPECT_TRUE(keyed->guarantee.void_reasons.empty()) << name;
  }
  GradientEmOptions plain = PrivateOptions(GradientEmMethod::kNonPrivate, 3);
  Generator plain_gen = Generator::FromSeed(27);
  const StatusOr<GradientEmFit> fit = FitGradientEm(g.data, plain, plain_gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_FALSE(fit->guarantee.is_private);
  EXPECT_FALSE(fit->guarantee.guarantee_void);
  EXPECT_TRUE(fit->guarantee.void_reasons.empty());
}

double SignFreeError(const Eigen::VectorXd& b, const Eigen::VectorXd& truth) {
  return std::min((b - truth).norm(), (b + truth).norm());
}

TEST(GradientEmFitTest, NonPrivateGradientEmRecoversTheTruth) {
  for (GradientEmModel m : {GradientEmModel::kGmm, GradientEmModel::kMrm, GradientEmModel::kRmc}) {
    const GeneratedData g = Make(m, 5000, 4, m == GradientEmModel::kRmc ? 0.1 : 0.0, 31);
    GradientEmOptions o;
    o.method = GradientEmMethod::kNonPrivate;
    o.iterations = 40;
    o.sigma = 1.0;
    o.step = m == GradientEmModel::kGmm ? 1.0 : 0.5;
    Generator gen = Generator::FromSeed(2);
    const GradientEmFit fit = *FitGradientEm(g.data, o, gen);
    const double err = m == GradientEmModel::kRmc ? (fit.beta - g.beta).norm()
                                                  : SignFreeError(fit.beta, g.beta);
    EXPECT_LT(err, 0.25) << GradientEmModelName(m);
  }
}

TEST(GeneratorsTest, ShapesTruthAndRoundTrip) {
  const GeneratedData g = Make(GradientEmModel::kRmc, 4000, 5, 0.2, 41);
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
  const GeneratedData again = Make(GradientEmModel::kRmc, 4000, 5, 0.2, 41);
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
