// Tests of the (private) k-means fit (dpem/models/kmeans/kmeans.h) and its model
// files: plain Lloyd against an independent implementation, the empty-cluster
// rule, the ledger and the noise of every method against closed forms, noise
// that does not depend on the data, and input validation.
#include "dpem/models/fit_defaults.h"
#include "dpem/models/kmeans/kmeans.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dpem/models/kmeans/kmeans_model_io.h"
#include "testing/fit_options.h"
#include "testing/void_reasons.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Three well-separated blobs in 2-D, inside the ball of radius 10.
DataMatrix Blobs(Eigen::Index per_blob, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.5);
  const double centres[3][2] = {{-5, 0}, {4, 3}, {3, -4}};
  DataMatrix x(3 * per_blob, 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (int j = 0; j < 2; ++j) x(i, j) = centres[i % 3][j] + normal(rng);
  }
  return x;
}

KmeansFitOptions Options(KmeansMethod method, double epsilon) {
  KmeansFitOptions o = test_support::MakeKmeansOptions(method, /*components=*/3,
                                                       /*iterations=*/5, epsilon, /*delta=*/1e-4);
  o.domain.data_norm = 10.0;
  return o;
}

// Plain Lloyd in original units from `init`, keeping a centre with no records.
Eigen::MatrixXd ReferenceLloyd(const DataMatrix& x, Eigen::MatrixXd c, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(c.rows(), c.cols());
    Eigen::VectorXd counts = Eigen::VectorXd::Zero(c.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      Eigen::Index best = 0;
      (c.rowwise() - x.row(i)).rowwise().squaredNorm().minCoeff(&best);
      counts(best) += 1;
      sums.row(best) += x.row(i);
    }
    for (Eigen::Index k = 0; k < c.rows(); ++k) {
      if (counts(k) >= 1) c.row(k) = sums.row(k) / counts(k);
    }
  }
  return c;
}

TEST(FitKmeansTest, NonPrivateMatchesReferenceLloyd) {
  const DataMatrix x = Blobs(200, 1);
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, kInf);
  o.initial_centres.resize(3, 2);
  o.initial_centres << -1, 0, 1, 1, 1, -1;
  Generator gen = Generator::FromSeed(7);
  const StatusOr<KmeansFit> fit = FitKmeans(x, o, gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  const Eigen::MatrixXd ref = ReferenceLloyd(x, o.initial_centres, o.iterations);
  EXPECT_LT((fit->centres - ref).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_FALSE(fit->guarantee.is_private);
  EXPECT_TRUE(fit->guarantee.ledger.empty());
}

TEST(FitKmeansTest, EmptyClusterKeepsItsCentre) {
  const DataMatrix x = Blobs(50, 2);
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, kInf);
  o.initial_centres.resize(3, 2);
  o.initial_centres << -5, 0, 4, 0, 0, 9.5;  // The third attracts no record.
  Generator gen = Generator::FromSeed(1);
  const KmeansFit fit = *FitKmeans(x, o, gen);
  EXPECT_EQ(fit.centres(2, 0), 0.0);
  EXPECT_NEAR(fit.centres(2, 1), 9.5, 1e-12);
}

TEST(FitKmeansTest, HugeNoiseGivesFiniteCentresInTheDomain) {
  const DataMatrix x = Blobs(20, 3);
  for (KmeansMethod m : {KmeansMethod::kCdpGauss, KmeansMethod::kCdpLaplace,
                         KmeansMethod::kDplloyd, KmeansMethod::kDplloydZcdp}) {
    KmeansFitOptions o = Options(m, 1e-3);
    o.components = 8;
    o.iterations = 20;
    Generator gen = Generator::FromSeed(3);
    const StatusOr<KmeansFit> fit = FitKmeans(x, o, gen);
    ASSERT_TRUE(fit.ok()) << KmeansMethodName(m) << ": " << fit.status().ToString();
    ASSERT_TRUE(fit->centres.allFinite());
    EXPECT_LE(fit->centres.rowwise().norm().maxCoeff(), 10.0 * (1 + 1e-12));
  }
}

// sqrt(rho) of a zCDP guarantee converted by rho + 2 sqrt(rho ln(1/delta)).
double ZcdpRootRho(double epsilon, double delta) {
  const double l = std::log(1.0 / delta);
  return -std::sqrt(l) + std::sqrt(l + epsilon);
}

TEST(FitKmeansTest, LedgerAndNoiseOfEachMethodMatchClosedForms) {
  const DataMatrix x = Blobs(100, 4);
  const double eps = 0.5, delta = 1e-4, d = 2.0, J = 5.0;
  const double rho = std::pow(ZcdpRootRho(eps, delta), 2);
  struct Case {
    KmeansMethod method;
    AccountantKind accountant;
    std::size_t per_iteration;
    MechanismKind mechanism;
    double sensitivity;     // Of the (first) release kind.
    double expected_scale;  // Noise scale of the (first) release kind.
  };
  const double l1 = 2.0 + 2.0 * std::sqrt(d);
  const Case cases[] = {
      // zCDP: a release with multiplier z costs 1/(2 z^2) (Laplace: eps^2/2).
      {KmeansMethod::kCdpGauss, AccountantKind::kZcdp, 1, MechanismKind::kGaussian, 2.0,
       2.0 * std::sqrt(J / (2 * rho))},
      {KmeansMethod::kDplloydZcdp, AccountantKind::kZcdp, 1, MechanismKind::kLaplace, l1,
       l1 * std::sqrt(J / (2 * rho))},
      // Two Laplace releases, equal scale b: rho = J ((2/b)^2 + (2 sqrt d/b)^2)/2.
      {KmeansMethod::kCdpLaplace, AccountantKind::kZcdp, 2, MechanismKind::kLaplace, 2.0,
       std::sqrt(J * (4.0 + 4.0 * d) / (2 * rho))},
      // DPLloyd: Lap(Delta_1 J / eps), linear composition.
      {KmeansMethod::kDplloyd, AccountantKind::kLinear, 1, MechanismKind::kLaplace, l1,
       l1 * J / eps},
  };
  for (const Case& c : cases) {
    KmeansFitOptions o = Options(c.method, eps);
    o.accountant = AccountantKind::kZcdp;
    o.init = KmeansInit::kRandom;  // The iterations' closed forms; the start below.
    Generator gen = Generator::FromSeed(5);
    const StatusOr<KmeansFit> fit = FitKmeans(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    const KmeansGuarantee& g = fit->guarantee;
    const std::string name(KmeansMethodName(c.method));
    EXPECT_EQ(g.accountant, c.accountant) << name;
    ASSERT_EQ(g.ledger.size(), c.per_iteration * 5) << name;
    const Release& r = g.ledger.releases()[0];
    EXPECT_EQ(r.mechanism, c.mechanism) << name;
    // The discrete (floating-point safe) noise charges its rounding on top of
    // the sensitivity: at most a relative 1e-3 here (additive_noise.h).
    EXPECT_GE(r.sensitivity, c.sensitivity) << name;
    EXPECT_LE(r.sensitivity, c.sensitivity * (1 + 1e-3)) << name;
    // Never less noise than the closed form; at most the calibration's 1e-4
    // and the rounding charge more.
    EXPECT_GE(r.noise_scale, c.expected_scale * (1 - 1e-12)) << name;
    EXPECT_LE(r.noise_scale, c.expected_scale * (1 + 2e-3)) << name;
    if (c.per_iteration == 2) {  // cdp-laplace: the sums get the same scale.
      EXPECT_GE(g.ledger.releases()[1].sensitivity, 2.0 * std::sqrt(d));
      EXPECT_NEAR(g.ledger.releases()[1].noise_scale, r.noise_scale, 2e-3 * r.noise_scale);
    }
    EXPECT_LE(g.epsilon, eps) << name;
    EXPECT_GE(g.epsilon, eps * 0.99) << name;
    EXPECT_EQ(g.target_delta, c.method == KmeansMethod::kDplloyd ? 0.0 : delta) << name;
  }
}

TEST(FitKmeansTest, ThePrivateStartTakesItsNamedShareOfTheZcdpCost) {
  // Under zCDP the rule (calibration.h, StartNoiseMultipliers) has a closed
  // form: the start's two Gaussian releases cost 0.2 rho (0.15 and 0.85 of
  // it), the J iterations the remaining 0.8 rho.
  const DataMatrix x = Blobs(100, 4);
  const double eps = 0.5, delta = 1e-4, J = 5.0;
  const double rho = std::pow(ZcdpRootRho(eps, delta), 2);
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, eps);
  o.accountant = AccountantKind::kZcdp;
  Generator gen = Generator::FromSeed(5);
  const StatusOr<KmeansFit> fit = FitKmeans(x, o, gen);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_EQ(fit->init, KmeansInit::kPrivate);
  const std::vector<Release>& r = fit->guarantee.ledger.releases();
  ASSERT_EQ(r.size(), 2u + 5u);
  const double expected[3] = {2.0 * std::sqrt(1.0 / (2 * 0.2 * 0.15 * rho)),
                              2.0 * std::sqrt(1.0 / (2 * 0.2 * 0.85 * rho)),
                              2.0 * std::sqrt(J / (2 * 0.8 * rho))};
  const char* labels[3] = {"start / coarse counts and sums", "start / counts and sums",
                           "iteration 1 / counts and sums"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[static_cast<size_t>(i)].label, labels[i]);
    EXPECT_GE(r[static_cast<size_t>(i)].sensitivity, 2.0);
    EXPECT_GE(r[static_cast<size_t>(i)].noise_scale, expected[i] * (1 - 1e-12)) << i;
    EXPECT_LE(r[static_cast<size_t>(i)].noise_scale, expected[i] * (1 + 2e-3)) << i;
  }
  EXPECT_LE(fit->guarantee.epsilon, eps);
  EXPECT_GE(fit->guarantee.epsilon, eps * 0.99);
}

TEST(FitKmeansTest, TheDefaultJFromThePrivateStartFollowsTheCentresNoise) {
  // Under zCDP the iterations' whole budget in one release has the closed
  // form sigma_1 = 2 sqrt(1 / (2 * 0.8 rho)) (the test above), so the
  // documented ratio r = sigma_1 sqrt(d) K / n decides J: 1 from
  // kNoisyCentreRatio up, kDefaultPrivateStartIterations below; an explicit
  // J, the random start and plain fits are left alone.
  const DataMatrix x = Blobs(100, 4);  // n = 300, d = 2, K = 3.
  for (double eps : {0.5, 2.0, 50.0}) {
    KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, eps);
    o.accountant = AccountantKind::kZcdp;
    o.iterations = 0;
    const double rho = std::pow(ZcdpRootRho(eps, 1e-4), 2);
    const double ratio = 2.0 * std::sqrt(1.0 / (2 * 0.8 * rho)) * std::sqrt(2.0) * 3.0 / 300.0;
    ASSERT_GT(std::abs(ratio / kNoisyCentreRatio - 1.0), 0.05) << eps;  // Off the boundary.
    const int expected = ratio >= kNoisyCentreRatio ? 1 : kDefaultPrivateStartIterations;
    Generator gen = Generator::FromSeed(6);
    const StatusOr<KmeansFit> fit = FitKmeans(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    EXPECT_EQ(fit->iterations, expected) << eps;
    EXPECT_EQ(fit->guarantee.ledger.releases().size(), 2u + static_cast<size_t>(expected));
    EXPECT_LE(fit->guarantee.epsilon, eps);
    o.iterations = 4;
    EXPECT_EQ(FitKmeans(x, o, gen)->iterations, 4);
    o.iterations = 0;
    o.init = KmeansInit::kRandom;
    EXPECT_EQ(FitKmeans(x, o, gen)->iterations, kDefaultRandomStartIterations);
  }
  KmeansFitOptions plain = Options(KmeansMethod::kCdpGauss, kInf);
  plain.iterations = 0;
  Generator gen = Generator::FromSeed(7);
  EXPECT_EQ(FitKmeans(x, plain, gen)->iterations, kDefaultPlainIterations);
}

TEST(FitKmeansTest, NoiseDoesNotDependOnTheData) {
  // Neighbours: one record replaced by a far one that changes the clusters'
  // sizes. The ledgers (sensitivities and noise scales) must be identical.
  const DataMatrix x = Blobs(30, 6);
  DataMatrix y = x;
  y.row(0) << 9.0, 0.0;
  for (KmeansMethod m : {KmeansMethod::kCdpGauss, KmeansMethod::kCdpLaplace,
                         KmeansMethod::kDplloyd, KmeansMethod::kDplloydZcdp}) {
    Generator g1 = Generator::FromSeed(9), g2 = Generator::FromSeed(9);
    const KmeansFit a = *FitKmeans(x, Options(m, 1.0), g1);
    const KmeansFit b = *FitKmeans(y, Options(m, 1.0), g2);
    ASSERT_EQ(a.guarantee.ledger.size(), b.guarantee.ledger.size());
    for (std::size_t i = 0; i < a.guarantee.ledger.size(); ++i) {
      EXPECT_EQ(a.guarantee.ledger.releases()[i].noise_scale,
                b.guarantee.ledger.releases()[i].noise_scale);
      EXPECT_EQ(a.guarantee.ledger.releases()[i].sensitivity,
                b.guarantee.ledger.releases()[i].sensitivity);
    }
  }
}

TEST(FitKmeansTest, LargeEpsilonRecoversTheBlobs) {
  const DataMatrix x = Blobs(2000, 8);
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, 100.0);
  o.initial_centres.resize(3, 2);
  o.initial_centres << -1, 0, 1, 1, 1, -1;
  Generator gen = Generator::FromSeed(2);
  const KmeansFit fit = *FitKmeans(x, o, gen);
  const Eigen::MatrixXd ref = ReferenceLloyd(x, o.initial_centres, o.iterations);
  EXPECT_LT((fit.centres - ref).cwiseAbs().maxCoeff(), 0.05);
}

TEST(FitKmeansTest, SameSeedSameFit) {
  const DataMatrix x = Blobs(40, 10);
  Generator g1 = Generator::FromSeed(11), g2 = Generator::FromSeed(11);
  const KmeansFit a = *FitKmeans(x, Options(KmeansMethod::kCdpLaplace, 1.0), g1);
  const KmeansFit b = *FitKmeans(x, Options(KmeansMethod::kCdpLaplace, 1.0), g2);
  EXPECT_EQ(a.centres, b.centres);
  ASSERT_TRUE(a.seed.has_value());
  EXPECT_EQ(*a.seed, 11u);
}

TEST(FitKmeansTest, ThePrivateStartRefusesWhatItCannotServe) {
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.init = KmeansInit::kPrivate;
  EXPECT_TRUE(o.Validate().ok());
  o.initial_centres = Eigen::MatrixXd::Zero(3, 2);  // Public centres and a start.
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.initial_centres.resize(0, 0);
  o.components = kMaxPrivateStartComponents + 1;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.init.reset();
  EXPECT_EQ(o.ResolvedInit(), KmeansInit::kRandom);  // The default falls back.
  o.components = 1;
  EXPECT_EQ(o.ResolvedInit(), KmeansInit::kRandom);
  o.components = 2;
  EXPECT_EQ(o.ResolvedInit(), KmeansInit::kPrivate);
}

TEST(FitKmeansTest, RefusesBadInput) {
  const DataMatrix x = Blobs(1, 12);  // N = 3.
  Generator gen = Generator::FromSeed(1);
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.components = 4;
  EXPECT_EQ(FitKmeans(x, o, gen).status().code(), StatusCode::kInvalidArgument);
  o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.delta = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(o.Validate().ok());
  o.method = KmeansMethod::kDplloyd;  // Pure DP: no delta needed.
  EXPECT_TRUE(o.Validate().ok());
  o.domain.data_norm = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(o.Validate().ok());
  o = Options(KmeansMethod::kCdpGauss, 0.0);
  EXPECT_FALSE(o.Validate().ok());
  o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.iterations = -1;  // 0 is the default (ResolvedIterations).
  EXPECT_FALSE(o.Validate().ok());
  o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.initial_centres = Eigen::MatrixXd::Zero(2, 2);  // K = 3 rows needed.
  EXPECT_FALSE(o.Validate().ok());
  DataMatrix bad = Blobs(2, 1);
  bad(0, 0) = NAN;
  EXPECT_FALSE(FitKmeans(bad, Options(KmeansMethod::kCdpGauss, 1.0), gen).ok());
  EXPECT_FALSE(ParseKmeansMethod("lloyd").ok());
}

TEST(FitKmeansTest, DataDerivedBoundVoidsThePrivateGuarantee) {
  KmeansFitOptions o = Options(KmeansMethod::kCdpGauss, 1.0);
  o.domain.data_norm = std::numeric_limits<double>::quiet_NaN();
  o.domain.from_data = true;
  Generator gen = Generator::FromSeed(1);
  const KmeansFit fit = *FitKmeans(Blobs(10, 1), o, gen);
  EXPECT_TRUE(fit.guarantee.guarantee_void);
  EXPECT_EQ(test_support::CountReasonsMentioning(fit.guarantee.void_reasons, "largest record"),
            1);
}

// Every method: a private fit from a seeded generator (whose noise is
// reproducible from the seed) is void, one from the OS-keyed generator is
// not, and a non-private fit claims no guarantee to void.
TEST(FitKmeansTest, ASeededGeneratorVoidsAPrivateFitOnly) {
  const DataMatrix x = Blobs(20, 6);
  for (KmeansMethod m : {KmeansMethod::kCdpGauss, KmeansMethod::kCdpLaplace,
                         KmeansMethod::kDplloyd, KmeansMethod::kDplloydZcdp}) {
    const std::string name(KmeansMethodName(m));
    Generator seeded_gen = Generator::FromSeed(7);
    const StatusOr<KmeansFit> seeded = FitKmeans(x, Options(m, 1.0), seeded_gen);
    ASSERT_TRUE(seeded.ok()) << name << ": " << seeded.status().ToString();
    EXPECT_TRUE(test_support::IsVoidedOnlyBySeed(seeded->guarantee)) << name;
    EXPECT_EQ(seeded->seed, std::optional<std::uint64_t>(7)) << name;
    StatusOr<Generator> os = Generator::FromOsEntropy();
    ASSERT_TRUE(os.ok());
    const StatusOr<KmeansFit> keyed = FitKmeans(x, Options(m, 1.0), *os);
    ASSERT_TRUE(keyed.ok()) << name << ": " << keyed.status().ToString();
    EXPECT_TRUE(keyed->guarantee.is_private) << name;
    EXPECT_FALSE(keyed->guarantee.guarantee_void) << name;
    EXPECT_TRUE(keyed->guarantee.void_reasons.empty()) << name;
    Generator plain_gen = Generator::FromSeed(8);
    const StatusOr<KmeansFit> plain = FitKmeans(x, Options(m, kInf), plain_gen);
    ASSERT_TRUE(plain.ok()) << name << ": " << plain.status().ToString();
    EXPECT_FALSE(plain->guarantee.is_private) << name;
    EXPECT_FALSE(plain->guarantee.guarantee_void) << name;
    EXPECT_TRUE(plain->guarantee.void_reasons.empty()) << name;
  }
}

TEST(KmeansModelIoTest, RoundTripAndDamagedFiles) {
  Generator gen = Generator::FromSeed(4);
  KmeansFitOptions o = Options(KmeansMethod::kCdpLaplace, 1.0);
  o.domain.center = Eigen::Vector2d(1.0, -2.0);
  const KmeansFit fit = *FitKmeans(Blobs(30, 5), o, gen);
  const std::string text = KmeansModelIo::ToJson(fit);
  const StatusOr<KmeansFit> back = KmeansModelIo::FromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->centres, fit.centres);
  EXPECT_EQ(back->domain.center, fit.domain.center);
  EXPECT_EQ(back->domain.data_norm, 10.0);
  EXPECT_EQ(back->method, KmeansMethod::kCdpLaplace);
  EXPECT_EQ(back->guarantee.epsilon, fit.guarantee.epsilon);
  EXPECT_EQ(text.find("nicv"), std::string::npos);  // Nothing non-private.
  EXPECT_FALSE(KmeansModelIo::FromJson("{").ok());
  EXPECT_FALSE(KmeansModelIo::FromJson(R"({"format": "dpem-gmm"})").ok());
  std::string damaged = text;
  damaged.replace(damaged.find("\"centres\""), 9, "\"centers\"");
  EXPECT_FALSE(KmeansModelIo::FromJson(damaged).ok());
}

TEST(KmeansModelIoTest, ReadsBackAndChecksTheNoiseMultipliers) {
  Generator gen = Generator::FromSeed(5);
  const KmeansFit fit = *FitKmeans(Blobs(30, 5), Options(KmeansMethod::kCdpLaplace, 1.0), gen);
  ASSERT_EQ(fit.guarantee.noise_multipliers.size(), 2u);  // Counts and sums.
  const nlohmann::json model = nlohmann::json::parse(KmeansModelIo::ToJson(fit));
  const StatusOr<KmeansFit> back = KmeansModelIo::FromJson(model.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->guarantee.noise_multipliers, fit.guarantee.noise_multipliers);
  const auto refused = [&](const nlohmann::json& z) {
    nlohmann::json bad = model;
    if (z.is_null()) {
      bad["privacy"].erase("noise_multipliers");
    } else {
      bad["privacy"]["noise_multipliers"] = z;
    }
    const StatusOr<KmeansFit> r = KmeansModelIo::FromJson(bad.dump());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << z.dump();
    EXPECT_NE(r.status().message().find("noise_multipliers"), std::string::npos) << z.dump();
  };
  refused(nullptr);                                // Missing.
  refused(nlohmann::json::array({1.0}));           // One for cdp-laplace's two releases.
  refused(nlohmann::json::array({1.0, -2.0}));     // Not positive.
  refused(nlohmann::json::array({1.0, "x"}));      // Not a number.
  refused(nlohmann::json::array({1.0, std::numeric_limits<double>::infinity()}));  // null.
}

}  // namespace
}  // namespace dpem
