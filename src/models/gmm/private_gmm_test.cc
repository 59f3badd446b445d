#include "dpem/models/gmm/private_gmm.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"
#include "testing/gmm_data.h"
#include "testing/void_reasons.h"

namespace dpem {
namespace {

using test_support::ThreeClusters;

using test_support::CountReasonsMentioning;
using test_support::CountSeededGeneratorReasons;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Three well-separated isotropic 2-D Gaussians (test data only).
GmmFitOptions PrivateOptions(int k, int j) {
  GmmFitOptions o = test_support::MakeGmmOptions(k, j, /*epsilon=*/1.0, /*delta=*/1e-5,
                                                 /*data_norm=*/1.0);
  o.mechanisms = GmmMechanisms::kGgg;  // Tests of the papers' scenario; joint below.
  // The papers' start: these tests count and compare the iterations'
  // releases; the private start has its own tests (private_start_test).
  o.init = GmmInit::kRandom;
  return o;
}

// The code of Validate for `o` with the papers' unsafe mechanisms asked for.
StatusCode ValidateWithUnsafeMechanisms(GmmFitOptions o) {
  o.unsafe_paper_mechanisms = true;
  return o.Validate().code();
}

GmmFit MustFit(const DataMatrix& x, const GmmFitOptions& o, std::uint64_t seed) {
  Generator gen = Generator::FromSeed(seed);
  StatusOr<GmmFit> fit = FitGmm(x, o, gen);
  EXPECT_TRUE(fit.ok()) << fit.status().ToString();
  return fit.ok() ? *fit : GmmFit{};
}

TEST(PrivateGmmTest, MakesExactlyTheBudgetedReleasesAndStaysWithinTarget) {
  const DataMatrix x = ThreeClusters(600, 1);
  for (CovarianceType type :
       {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    for (GmmMechanisms m : {GmmMechanisms::kGgg, GmmMechanisms::kLlg}) {
      GmmFitOptions o = PrivateOptions(3, 4);
      o.covariance = type;
      o.mechanisms = m;
      const GmmFit fit = MustFit(x, o, 2);
      const PrivacyLedger& ledger = fit.guarantee.ledger;
      ASSERT_EQ(ledger.size(), 4u * (2 * 3 + 1));  // J (2K + 1), counted where released.
      EXPECT_LE(fit.guarantee.epsilon, 1.0);
      EXPECT_GE(fit.guarantee.epsilon, 0.99);
      EXPECT_EQ(ComputeEpsilon(ledger, 1e-5, o.accountant).value(), fit.guarantee.epsilon);
      // Void for the test's seeded generator only.
      EXPECT_EQ(fit.guarantee.void_reasons.size(), 1u);
      EXPECT_EQ(CountSeededGeneratorReasons(fit.guarantee.void_reasons), 1);
      int laplace = 0;
      for (const Release& r : ledger.releases()) laplace += r.mechanism == MechanismKind::kLaplace;
      EXPECT_EQ(laplace, m == GmmMechanisms::kLlg ? 4 * (3 + 1) : 0);
    }
  }
}

// With discrete noise (the default) a release records the documented
// sensitivity plus the rounding charge (9/8) g sqrt(m) (L1: g m), g <= z Delta
// / 2^20: far below 1e-4 relative for these few coordinates, and never
// below the documented value. With continuous noise it is exact.
void ExpectRecorded(double recorded, double documented, NoiseSampling sampling,
                    const std::string& what) {
  if (sampling == NoiseSampling::kContinuous) {
    EXPECT_DOUBLE_EQ(recorded, documented) << what;
    return;
  }
  EXPECT_LE(documented, recorded) << what;
  EXPECT_LE(recorded, documented * (1.0 + 1e-4)) << what;
}

TEST(PrivateGmmTest, SensitivitiesAreTheDocumentedOnes) {
  const DataMatrix x = ThreeClusters(300, 3);
  for (NoiseSampling sampling : {NoiseSampling::kDiscrete, NoiseSampling::kContinuous}) {
    SCOPED_TRACE(sampling == NoiseSampling::kDiscrete ? "discrete" : "continuous");
    GmmFitOptions o = PrivateOptions(3, 1);
    o.covariance = CovarianceType::kSpherical;
    o.noise_sampling = sampling;
    const GmmFit ggg = MustFit(x, o, 4);
    const std::vector<Release>& r = ggg.guarantee.ledger.releases();
    ASSERT_EQ(r.size(), 7u);
    for (const Release& rel : r) {
      const bool counts = rel.label.find("counts") != std::string::npos;
      const bool sums = rel.label.find("sums") != std::string::npos;
      // Counts: a record moves at most its unit of responsibility between two
      // components, ||e_i - e_j||_2 = sqrt(2); sums: ||g x - g' x'|| <= 2 in
      // the unit ball; traces: |g ||x||^2 - g' ||x'||^2| <= 1.
      const double documented = counts ? std::sqrt(2.0) : sums ? 2.0 : 1.0;
      ExpectRecorded(rel.sensitivity, documented, sampling, rel.label);
      // Noise scale = sensitivity x the calibrated multiplier of its kind.
      const double z = ggg.guarantee.noise_multipliers[counts ? 0 : sums ? 1 : 2];
      ExpectRecorded(rel.noise_scale, documented * z, sampling, rel.label);
      EXPECT_GE(rel.NoiseMultiplier(), z) << rel.label;
    }
    o.mechanisms = GmmMechanisms::kLlg;
    const GmmFit llg = MustFit(x, o, 4);
    const std::vector<Release>& l = llg.guarantee.ledger.releases();
    ExpectRecorded(l[0].sensitivity, 2.0, sampling, l[0].label);  // L1 of counts.
    ExpectRecorded(l[1].sensitivity, 2.0 * std::sqrt(2.0), sampling, l[1].label);  // 2 sqrt(d).
    EXPECT_EQ(l[0].mechanism, MechanismKind::kLaplace);
  }
}

TEST(PrivateGmmTest, JointMechanismMakesOneReleasePerIteration) {
  const DataMatrix x = ThreeClusters(600, 21);
  for (NoiseSampling sampling : {NoiseSampling::kDiscrete, NoiseSampling::kContinuous}) {
    for (CovarianceType type :
         {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
      SCOPED_TRACE(std::string(CovarianceTypeName(type)) +
                   (sampling == NoiseSampling::kDiscrete ? " discrete" : " continuous"));
      GmmFitOptions o = PrivateOptions(3, 4);
      o.mechanisms = GmmMechanisms::kJoint;
      o.covariance = type;
      o.noise_sampling = sampling;
      const GmmFit fit = MustFit(x, o, 22);
      const PrivacyLedger& ledger = fit.guarantee.ledger;
      ASSERT_EQ(ledger.size(), 4u);
      const JointNoiseScales split = DefaultJointNoiseSplit(type, 2, 3);
      const double z = fit.guarantee.noise_multipliers[0];
      for (const Release& r : ledger.releases()) {
        EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
        ExpectRecorded(r.sensitivity, JointSensitivity(type, split), sampling, r.label);
        ExpectRecorded(r.noise_scale, JointSensitivity(type, split) * z, sampling, r.label);
        // The recorded multiplier is never below the calibrated one.
        EXPECT_GE(r.NoiseMultiplier(), z);
      }
      EXPECT_LE(fit.guarantee.epsilon, 1.0);
      EXPECT_GE(fit.guarantee.epsilon, 0.99);
    }
  }
  GmmFitOptions joint = PrivateOptions(3, 4);
  joint.mechanisms = GmmMechanisms::kJoint;
  EXPECT_EQ(ValidateWithUnsafeMechanisms(joint), StatusCode::kInvalidArgument);
}

TEST(PrivateGmmTest, JointNeedsLessNoiseThanGggAtTheSameBudget) {
  // One release per iteration with a joint sensitivity of order 1, against
  // 2K + 1 releases: the per-coordinate noise on the sums must be smaller.
  const DataMatrix x = ThreeClusters(600, 23);
  GmmFitOptions o = PrivateOptions(5, 10);
  const GmmFit ggg = MustFit(x, o, 24);
  o.mechanisms = GmmMechanisms::kJoint;
  const GmmFit joint = MustFit(x, o, 24);
  const double ggg_sums_noise = ggg.guarantee.ledger.releases()[1].noise_scale;
  const Release& j = joint.guarantee.ledger.releases()[0];
  const double joint_sums_noise = DefaultJointNoiseSplit(o.covariance, 2, 5).sums * j.noise_scale;
  EXPECT_LT(joint_sums_noise, 0.7 * ggg_sums_noise);
}

TEST(PrivateGmmTest, ThePrivateStartIsTheDefaultAndIsChargedFirst) {
  const DataMatrix x = ThreeClusters(600, 31);
  for (GmmMechanisms m : {GmmMechanisms::kJoint, GmmMechanisms::kGgg, GmmMechanisms::kLlg}) {
    GmmFitOptions o = PrivateOptions(3, 4);
    o.init.reset();  // The default start of a private fit.
    o.mechanisms = m;
    const GmmFit fit = MustFit(x, o, 32);
    EXPECT_EQ(fit.init, GmmInit::kPrivate);
    const std::vector<Release>& r = fit.guarantee.ledger.releases();
    const std::size_t per_iteration = m == GmmMechanisms::kJoint ? 1 : 2 * 3 + 1;
    ASSERT_EQ(r.size(), 2 + 4 * per_iteration);
    EXPECT_EQ(r[0].label, "start / coarse counts and sums");
    EXPECT_EQ(r[1].label, "start / counts and sums");
    EXPECT_EQ(r[2].label.rfind("iteration 1 / ", 0), 0u) << r[2].label;
    EXPECT_LE(fit.guarantee.epsilon, 1.0);
    EXPECT_GE(fit.guarantee.epsilon, 0.99);
  }
}

TEST(PrivateGmmTest, ThePrivateStartFindsWellSeparatedClusters) {
  // Three clusters of about 667 records each, sd 0.08 in the unit ball,
  // means at least 0.72 apart: at epsilon = 4 the start and three
  // iterations find each (the standard error of a mean is 0.003).
  const DataMatrix x = ThreeClusters(2000, 33);
  GmmFitOptions o = PrivateOptions(3, 3);
  o.init.reset();
  o.mechanisms = GmmMechanisms::kJoint;
  o.epsilon = 4.0;
  for (std::uint64_t seed = 40; seed < 45; ++seed) {
    const GmmFit fit = MustFit(x, o, seed);
    for (const auto& c : test_support::kThreeClusterCentres) {
      double best = kInf;
      for (Eigen::Index k = 0; k < 3; ++k) {
        best = std::min(best, std::hypot(fit.parameters.means(k, 0) - c[0],
                                         fit.parameters.means(k, 1) - c[1]));
      }
      EXPECT_LT(best, 0.05) << "seed " << seed;
    }
  }
}

TEST(PrivateGmmTest, NonPrivateFitRecoversWellSeparatedClusters) {
  const DataMatrix x = ThreeClusters(3000, 5);
  GmmFitOptions o;
  o.components = 3;
  o.iterations = 50;
  o.epsilon = kInf;
  const GmmFit fit = MustFit(x, o, 6);
  EXPECT_TRUE(fit.guarantee.ledger.empty());
  EXPECT_FALSE(fit.guarantee.is_private);
  for (const auto& c : test_support::kThreeClusterCentres) {
    double best = kInf;
    for (Eigen::Index k = 0; k < 3; ++k) {
      best = std::min(best, std::hypot(fit.parameters.means(k, 0) - c[0],
                                       fit.parameters.means(k, 1) - c[1]));
    }
    EXPECT_LT(best, 0.02);  // 5 standard errors of a mean of 1000 points: 0.013.
  }
}

TEST(PrivateGmmTest, ParametersAreInOriginalUnits) {
  // The same clusters shifted by (100, -50) and scaled by 10: a fit with the
  // matching public centre and radius gives the same model, transformed.
  const DataMatrix x = ThreeClusters(900, 7);
  DataMatrix y = (x * 10.0).rowwise() + Eigen::RowVector2d(100.0, -50.0);
  GmmFitOptions o = PrivateOptions(3, 3);
  const GmmFit unit = MustFit(x, o, 8);
  o.domain.data_norm = 10.0;
  o.domain.center = Eigen::Vector2d(100.0, -50.0);
  const GmmFit scaled = MustFit(y, o, 8);  // Same seed: same init and noise.
  for (Eigen::Index k = 0; k < 3; ++k) {
    EXPECT_NEAR(scaled.parameters.means(k, 0), 100.0 + 10.0 * unit.parameters.means(k, 0), 1e-9);
    EXPECT_NEAR(scaled.parameters.covariances[k](1, 1),
                100.0 * unit.parameters.covariances[k](1, 1), 1e-9);
  }
}

TEST(PrivateGmmTest, OutliersAreClippedNotTrusted) {
  DataMatrix x = ThreeClusters(600, 9);
  x(0, 0) = 1e12;  // Far outside the public ball: clipped to its boundary.
  GmmFitOptions o = PrivateOptions(3, 3);
  const GmmFit fit = MustFit(x, o, 10);
  EXPECT_TRUE(fit.parameters.means.allFinite());
  EXPECT_LT(fit.parameters.means.cwiseAbs().maxCoeff(), 1.5);
}

TEST(PrivateGmmTest, SameSeedSameFitAndTheSeedIsRecorded) {
  const DataMatrix x = ThreeClusters(300, 11);
  const GmmFitOptions o = PrivateOptions(2, 2);
  const GmmFit a = MustFit(x, o, 12), b = MustFit(x, o, 12), c = MustFit(x, o, 13);
  EXPECT_EQ(a.parameters.means, b.parameters.means);
  EXPECT_NE(a.parameters.means, c.parameters.means);
  ASSERT_TRUE(a.seed.has_value());
  EXPECT_EQ(*a.seed, 12u);
  StatusOr<Generator> os = Generator::FromOsEntropy();
  ASSERT_TRUE(os.ok());
  StatusOr<GmmFit> unseeded = FitGmm(x, o, *os);
  ASSERT_TRUE(unseeded.ok());
  EXPECT_FALSE(unseeded->seed.has_value());
}

TEST(PrivateGmmTest, DataDerivedBoundVoidsTheGuarantee) {
  const DataMatrix x = ThreeClusters(300, 14);
  GmmFitOptions o = PrivateOptions(2, 2);
  o.domain.data_norm = 0.9;
  o.domain.from_data = true;
  const GmmFit fit = MustFit(x, o, 15);
  EXPECT_TRUE(fit.guarantee.guarantee_void);
  // The data-derived R's reason, and the seeded generator's.
  EXPECT_EQ(fit.guarantee.void_reasons.size(), 2u);
  EXPECT_EQ(CountReasonsMentioning(fit.guarantee.void_reasons, "largest record"), 1);
  EXPECT_EQ(CountSeededGeneratorReasons(fit.guarantee.void_reasons), 1);
}

// The noise of a seeded fit is a function of the seed alone: whoever holds
// the seed refits both neighbouring data sets and tells them apart exactly.
TEST(PrivateGmmTest, ASeededGeneratorVoidsAPrivateFitOnly) {
  const DataMatrix x = ThreeClusters(300, 19);
  for (GmmMechanisms m : {GmmMechanisms::kJoint, GmmMechanisms::kGgg, GmmMechanisms::kLlg}) {
    GmmFitOptions o = PrivateOptions(2, 2);
    o.mechanisms = m;
    const GmmFit seeded = MustFit(x, o, 20);
    EXPECT_TRUE(seeded.guarantee.is_private);
    EXPECT_TRUE(seeded.guarantee.guarantee_void) << GmmMechanismsName(m);
    ASSERT_EQ(seeded.guarantee.void_reasons.size(), 1u);
    EXPECT_EQ(CountSeededGeneratorReasons(seeded.guarantee.void_reasons), 1)
        << seeded.guarantee.void_reasons[0];
    EXPECT_EQ(seeded.seed, std::optional<std::uint64_t>(20));  // Kept, for reproduction.
    StatusOr<Generator> os = Generator::FromOsEntropy();
    ASSERT_TRUE(os.ok());
    StatusOr<GmmFit> keyed = FitGmm(x, o, *os);
    ASSERT_TRUE(keyed.ok()) << keyed.status().ToString();
    EXPECT_TRUE(keyed->guarantee.is_private);
    EXPECT_FALSE(keyed->guarantee.guarantee_void);
    EXPECT_TRUE(keyed->guarantee.void_reasons.empty());
  }
  GmmFitOptions plain = PrivateOptions(2, 2);
  plain.epsilon = kInf;
  const GmmFit fit = MustFit(x, plain, 21);
  EXPECT_FALSE(fit.guarantee.is_private);  // No guarantee claimed, none voided.
  EXPECT_FALSE(fit.guarantee.guarantee_void);
  EXPECT_TRUE(fit.guarantee.void_reasons.empty());
}

TEST(PrivateGmmTest, UnsafePaperMechanismsVoidTheGuarantee) {
  const DataMatrix x = ThreeClusters(300, 16);
  for (CovarianceType type : {CovarianceType::kFull, CovarianceType::kSpherical}) {
    GmmFitOptions o = PrivateOptions(2, 2);
    o.covariance = type;
    o.unsafe_paper_mechanisms = true;
    const GmmFit fit = MustFit(x, o, 17);
    EXPECT_TRUE(fit.guarantee.guarantee_void);
    EXPECT_EQ(CountReasonsMentioning(fit.guarantee.void_reasons, "Gamma/Wishart"), 1);
    EXPECT_TRUE(LedgerHasUnsafeRelease(fit.guarantee.ledger));
    EXPECT_EQ(fit.guarantee.ledger.size(), 2u * (2 * 2 + 1));
  }
  GmmFitOptions diag = PrivateOptions(2, 2);
  diag.covariance = CovarianceType::kDiagonal;
  EXPECT_EQ(ValidateWithUnsafeMechanisms(diag), StatusCode::kInvalidArgument);
}

// sqrt(rho) of a zCDP guarantee converted by rho + 2 sqrt(rho ln(1/delta)).
double ZcdpRootRho(double epsilon, double delta) {
  const double l = std::log(1.0 / delta);
  return -std::sqrt(l) + std::sqrt(l + epsilon);
}

TEST(PrivateGmmTest, TheDefaultJFromThePrivateStartFollowsTheNoiseRatio) {
  // Under zCDP the iterations' whole budget (1 - kPrivateStartShare = 0.8 of
  // rho) in one joint release of sensitivity 1 has sigma = 1 / sqrt(2 * 0.8
  // rho), and a sum's coordinate carries DefaultJointNoiseSplit's `sums`
  // scale of it. The documented ratio r = sigma_sums sqrt(d) K / n decides J:
  // kQuietPrivateStartIterations below kQuietCentreRatio, from it up the
  // adaptive schedule's kAdaptiveIterations (kDefaultPrivateStartIterations
  // with adaptive_iterations off). An explicit J, the random start and plain
  // fits are left alone.
  const Eigen::Index n = 600;
  const DataMatrix x = ThreeClusters(n, 4);  // d = 2; K = 3 below.
  const double delta = 1e-5;
  std::set<int> seen;
  for (double eps : {1.0, 10.0, 300.0}) {
    GmmFitOptions o = test_support::MakeGmmOptions(3, 0, eps, delta, 1.0);
    o.accountant = AccountantKind::kZcdp;
    const double rho = std::pow(ZcdpRootRho(eps, delta), 2);
    const double sums_noise = DefaultJointNoiseSplit(CovarianceType::kFull, 2, 3).sums /
                              std::sqrt(2.0 * 0.8 * rho);
    const double ratio = sums_noise * std::sqrt(2.0) * 3.0 / static_cast<double>(n);
    ASSERT_GT(std::abs(ratio / kQuietCentreRatio - 1.0), 0.05) << eps;  // Off the boundary.
    const bool quiet = ratio < kQuietCentreRatio;
    const int expected = quiet ? kQuietPrivateStartIterations : kAdaptiveIterations;
    seen.insert(expected);
    const GmmFit fit = MustFit(x, o, 8);
    EXPECT_EQ(fit.init, GmmInit::kPrivate) << eps;
    EXPECT_EQ(fit.iterations, expected) << eps;
    EXPECT_EQ(fit.guarantee.adaptive_iterations, !quiet) << eps;
    EXPECT_EQ(fit.guarantee.ledger.releases().size(), 2u + static_cast<size_t>(expected)) << eps;
    EXPECT_LE(fit.guarantee.epsilon, eps);
    o.adaptive_iterations = false;
    const GmmFit fixed = MustFit(x, o, 8);
    EXPECT_EQ(fixed.iterations, quiet ? kQuietPrivateStartIterations
                                      : kDefaultPrivateStartIterations) << eps;
    EXPECT_FALSE(fixed.guarantee.adaptive_iterations) << eps;
    o.adaptive_iterations = true;
    o.iterations = 4;
    EXPECT_EQ(MustFit(x, o, 8).iterations, 4) << eps;
    o.iterations = 0;
    o.init = GmmInit::kRandom;
    EXPECT_EQ(MustFit(x, o, 8).iterations, kDefaultRandomStartIterations) << eps;
  }
  EXPECT_EQ(seen.size(), 2u);  // Both sides of the threshold were fitted.
  GmmFitOptions plain = test_support::MakeGmmOptions(3, 0, kInf, 0.0, 1.0);
  EXPECT_EQ(MustFit(x, plain, 8).iterations, kDefaultPlainIterations);
}

TEST(PrivateGmmTest, RefusesBadOptionsAndData) {
  const DataMatrix x = ThreeClusters(30, 18);
  auto refused = [&](GmmFitOptions o, const DataMatrix& data) {
    Generator gen = Generator::FromSeed(1);
    StatusOr<GmmFit> fit = FitGmm(data, o, gen);
    EXPECT_EQ(fit.status().code(), StatusCode::kInvalidArgument) << fit.status().ToString();
  };
  GmmFitOptions no_bound = PrivateOptions(2, 2);
  no_bound.domain.data_norm = std::numeric_limits<double>::quiet_NaN();
  refused(no_bound, x);  // A private fit needs the public R.
  GmmFitOptions o = PrivateOptions(2, 2);
  o.components = 31;
  refused(o, x);  // K > N.
  o = PrivateOptions(2, 2);
  o.components = 0;
  refused(o, x);
  o = PrivateOptions(2, -1);  // 0 is the default J (ResolvedIterations).
  refused(o, x);
  o = PrivateOptions(2, 2);
  o.delta = 0.0;
  refused(o, x);
  o = PrivateOptions(2, 2);
  o.epsilon = std::numeric_limits<double>::quiet_NaN();
  refused(o, x);
  o = PrivateOptions(2, 2);
  o.domain.center = Eigen::Vector3d::Zero();
  refused(o, x);  // Centre of the wrong dimension.
  o = PrivateOptions(2, 2);
  o.min_component_count = 0.0;
  refused(o, x);
  o = PrivateOptions(2, 1000001);
  refused(o, x);  // J x K above kMaxIterationsTimesComponents.
  DataMatrix bad = x;
  bad(3, 1) = std::numeric_limits<double>::quiet_NaN();
  refused(PrivateOptions(2, 2), bad);
}

}  // namespace
}  // namespace dpem
