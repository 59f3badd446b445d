// Empirical privacy audits of the mechanisms (testing/audit.h): lower bounds
// on epsilon from runs on adversarial replace-one neighbours. The sound
// mechanisms must never exceed their claim; planted bugs (defined HERE, never
// in the library) and park2016's unsafe mechanisms must be caught.
//
// Long mode: DPEM_AUDIT_SCALE=20 ctest -L audit (docs/audits.md).
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>

#include "dpem/accounting/analytic_gaussian.h"
#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
#include "testing/audit.h"

namespace dpem {
namespace {

using test_support::AuditOptions;
using test_support::AuditResult;
using test_support::RunAudit;

constexpr double kDelta = 1e-5;

// The claimed epsilon of one Gaussian release with multiplier z: the tightest
// claim dpem makes (the analytic Gaussian profile; every accountant's
// epsilon for one release is at least this).
double ClaimedGaussianEpsilon(double z) {
  StatusOr<double> eps = GaussianEpsilonForDelta(z, kDelta);
  EXPECT_TRUE(eps.ok());
  return eps.ok() ? *eps : NAN;
}

// ReleaseVector on `value` with `spec`, returning the projection of the
// output on `direction`.
double ReleasedProjection(Eigen::VectorXd value, const NoiseSpec& spec,
                          const Eigen::VectorXd& direction, Generator& gen) {
  PrivacyLedger ledger;
  EXPECT_TRUE(ReleaseVector(value, spec, gen, ledger).ok());
  return direction.dot(value);
}

AuditOptions Options(std::uint64_t seed, double delta, std::size_t bound_runs = 200000) {
  AuditOptions o;
  o.seed = seed;
  o.delta = delta;
  o.bound_runs = bound_runs;
  return o;
}

// Laplace, scalar, neighbours 0 and Delta; `declared` is the sensitivity the
// mechanism is told, `claimed_epsilon` = Delta / b for the true Delta.
AuditResult AuditLaplace(double declared, std::uint64_t seed, NoiseSampling sampling) {
  constexpr double kTrueSensitivity = 1.0, kEpsilon = 1.0;
  NoiseSpec spec{MechanismKind::kLaplace, declared, 1.0 / kEpsilon, "audit"};
  spec.sampling = sampling;
  const Eigen::VectorXd e = Eigen::VectorXd::Ones(1);
  return RunAudit(
      [&](int side, Generator& gen) {
        return ReleasedProjection(e * (side * kTrueSensitivity), spec, e, gen);
      },
      Options(seed, 0.0));
}

class SamplingAudit : public ::testing::TestWithParam<NoiseSampling> {};

TEST_P(SamplingAudit, LaplaceNeverExceedsItsEpsilon) {
  const AuditResult r = AuditLaplace(1.0, 11, GetParam());
  RecordProperty("eps_lb", std::to_string(r.epsilon_lower_bound));
  std::printf("[audit] laplace eps=1: %s\n", r.Describe().c_str());
  EXPECT_LE(r.epsilon_lower_bound, 1.0);
  EXPECT_GT(r.epsilon_lower_bound, 0.7);  // The audit has power.
}

// Planted bug: the sensitivity declared is half the true one.
TEST_P(SamplingAudit, CatchesAHalvedSensitivity) {
  const AuditResult r = AuditLaplace(0.5, 12, GetParam());
  std::printf("[audit] laplace, halved sensitivity, claim 1: %s\n", r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, 1.0);
}

// Gaussian on R^3, neighbours differing by Delta along (1,1,1)/sqrt(3);
// the statistic is the projection on that direction (the optimal test).
AuditResult AuditGaussian(double sigma, std::uint64_t seed, NoiseSampling sampling) {
  constexpr double kSensitivity = 0.1;
  NoiseSpec spec{MechanismKind::kGaussian, kSensitivity, sigma / kSensitivity, "audit"};
  spec.sampling = sampling;
  const Eigen::VectorXd u = Eigen::VectorXd::Ones(3) / std::sqrt(3.0);
  return RunAudit(
      [&](int side, Generator& gen) {
        return ReleasedProjection(u * (side * kSensitivity), spec, u, gen);
      },
      Options(seed, kDelta));
}

TEST_P(SamplingAudit, GaussianNeverExceedsItsEpsilon) {
  constexpr double kMultiplier = 3.0;
  const double claimed = ClaimedGaussianEpsilon(kMultiplier);
  const AuditResult r = AuditGaussian(0.1 * kMultiplier, 13, GetParam());
  std::printf("[audit] gaussian z=3, claim %.4f: %s\n", claimed, r.Describe().c_str());
  EXPECT_LE(r.epsilon_lower_bound, claimed);
  EXPECT_GT(r.epsilon_lower_bound, 0.3);
}

// Planted bug: the variance sigma^2 = 0.09 is passed where the standard
// deviation sigma = 0.3 belongs (as park2017's factor-analysis script does).
TEST_P(SamplingAudit, CatchesAVarianceUsedAsAStandardDeviation) {
  constexpr double kMultiplier = 3.0, kSigma = 0.1 * kMultiplier;
  const double claimed = ClaimedGaussianEpsilon(kMultiplier);
  const AuditResult r = AuditGaussian(kSigma * kSigma, 14, GetParam());
  std::printf("[audit] gaussian, variance as sd, claim %.4f: %s\n", claimed,
              r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, claimed);
}

// Planted bug: the mean of the records with x > 0 released with Laplace noise
// whose sensitivity 2/n uses the TRUE count n of that group. Neighbours: D0
// has one positive record (1.0), D1 replaces a negative record by 1e-9, so
// n = 1 vs 2 and the noise scale differs between neighbours.
TEST_P(SamplingAudit, CatchesATrueCountInASensitivity) {
  constexpr double kEpsilon = 1.0;
  const Eigen::VectorXd e = Eigen::VectorXd::Ones(1);
  const auto run = [&](int side, Generator& gen) {
    const Eigen::VectorXd positives =
        side == 0 ? Eigen::VectorXd::Constant(1, 1.0) : Eigen::VectorXd{{1.0, 1e-9}};
    const double n = static_cast<double>(positives.size());
    NoiseSpec spec{MechanismKind::kLaplace, 2.0 / n, 1.0 / kEpsilon, "audit"};
    spec.sampling = GetParam();
    return ReleasedProjection(e * positives.mean(), spec, e, gen);
  };
  const AuditResult r = RunAudit(run, Options(15, 0.0));
  std::printf("[audit] true count in sensitivity, claim 1: %s\n", r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, kEpsilon);
}

// Analyze Gauss, d = 2: neighbours 0 and diag(Delta, 0) (Frobenius distance
// Delta, all of it on one released coordinate); statistic: entry (0, 0).
TEST_P(SamplingAudit, AnalyzeGaussNeverExceedsItsEpsilon) {
  constexpr double kSensitivity = 1.0, kMultiplier = 3.0;
  const double claimed = ClaimedGaussianEpsilon(kMultiplier);
  NoiseSpec spec{MechanismKind::kGaussian, kSensitivity, kMultiplier, "audit"};
  spec.sampling = GetParam();
  const auto run = [&](int side, Generator& gen) {
    Eigen::MatrixXd a = Eigen::MatrixXd::Identity(2, 2);
    a(0, 0) += side * kSensitivity;
    PrivacyLedger ledger;
    EXPECT_TRUE(ReleaseSymmetric(a, spec, gen, ledger).ok());
    return a(0, 0);
  };
  const AuditResult r = RunAudit(run, Options(16, kDelta));
  std::printf("[audit] analyze gauss z=3, claim %.4f: %s\n", claimed, r.Describe().c_str());
  EXPECT_LE(r.epsilon_lower_bound, claimed);
  EXPECT_GT(r.epsilon_lower_bound, 0.3);
}

INSTANTIATE_TEST_SUITE_P(Modes, SamplingAudit,
                         ::testing::Values(NoiseSampling::kDiscrete, NoiseSampling::kContinuous),
                         [](const auto& info) {
                           return info.param == NoiseSampling::kDiscrete ? "Discrete"
                                                                         : "Continuous";
                         });

// park2016 Gamma: variances 0.5 and 1.5 (sensitivity 1), claimed epsilon 1.
// The event "output <= 1.5 - 0" has probability 0 under D1.
TEST(UnsafeMechanismAudit, CatchesTheOneSidedGammaMechanism) {
  constexpr double kEpsilon = 1.0, kSensitivity = 1.0;
  const auto run = [&](int side, Generator& gen) {
    double variance = 0.5 + side * kSensitivity;
    PrivacyLedger ledger;
    EXPECT_TRUE(
        ReleaseVarianceGammaUnsafe(variance, kSensitivity, kEpsilon, gen, ledger, true).ok());
    return variance;
  };
  const AuditResult r = RunAudit(run, Options(17, 0.0, 20000));
  std::printf("[audit] park2016 gamma, claim 1: %s\n", r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, 3.0 * kEpsilon);
}

// park2016 Wishart: covariances I/2 and I/2 + diag(1, 0) (trace distance =
// sensitivity 1), claimed epsilon 1; statistic: entry (0, 0), never below
// 1.5 under D1.
TEST(UnsafeMechanismAudit, CatchesTheWishartMechanism) {
  constexpr double kEpsilon = 1.0, kSensitivity = 1.0;
  const auto run = [&](int side, Generator& gen) {
    Eigen::MatrixXd cov = 0.5 * Eigen::MatrixXd::Identity(2, 2);
    cov(0, 0) += side * kSensitivity;
    PrivacyLedger ledger;
    EXPECT_TRUE(
        ReleaseCovarianceWishartUnsafe(cov, kSensitivity, kEpsilon, gen, ledger, true).ok());
    return cov(0, 0);
  };
  const AuditResult r = RunAudit(run, Options(18, 0.0, 20000));
  std::printf("[audit] park2016 wishart, claim 1: %s\n", r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, 3.0 * kEpsilon);
}

}  // namespace
}  // namespace dpem
