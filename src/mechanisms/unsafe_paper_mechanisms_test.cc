#include "dpem/mechanisms/unsafe_paper_mechanisms.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <string>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/random/generator.h"

namespace dpem {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Eigen::MatrixXd SomeCovariance() {
  Eigen::MatrixXd c(3, 3);
  c << 0.5, 0.1, 0.0, 0.1, 0.4, -0.05, 0.0, -0.05, 0.3;
  return c;
}

void ExpectClaimRecorded(const PrivacyLedger& ledger, double sensitivity,
                         double epsilon, const std::string& label) {
  ASSERT_EQ(ledger.size(), 1u);
  const Release& r = ledger.releases()[0];
  EXPECT_EQ(r.mechanism, MechanismKind::kLaplace);
  EXPECT_EQ(r.sensitivity, sensitivity);
  EXPECT_DOUBLE_EQ(r.noise_scale, sensitivity / epsilon);
  EXPECT_DOUBLE_EQ(r.NoiseMultiplier(), 1.0 / epsilon);
  EXPECT_EQ(r.label, std::string(kUnsafeReleaseLabelPrefix) + label);
  EXPECT_TRUE(IsUnsafeRelease(r));
  EXPECT_TRUE(LedgerHasUnsafeRelease(ledger));
}

TEST(UnsafeGammaTest, RefusedWithoutOptIn) {
  Generator gen = Generator::FromSeed(31);
  PrivacyLedger ledger;
  double variance = 0.25;
  const Status s =
      ReleaseVarianceGammaUnsafe(variance, 0.01, 1.0, gen, ledger, false);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("not differentially private"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("support"), std::string::npos) << s.message();
  EXPECT_EQ(variance, 0.25);
  EXPECT_TRUE(ledger.empty());
}

// privacy-notes.md, "Mechanisms whose output support depends on the data":
// the Gamma noise is one-sided, so the output is never below the input. This
// asserts the defect that makes the mechanism not DP.
TEST(UnsafeGammaTest, WithOptInOutputIsNeverBelowTheInput) {
  Generator gen = Generator::FromSeed(32);
  for (int i = 0; i < 2000; ++i) {
    PrivacyLedger ledger;
    const double truth = 0.01 * (i % 50);
    double variance = truth;
    ASSERT_TRUE(ReleaseVarianceGammaUnsafe(variance, 0.05, 0.5, gen, ledger,
                                           true, "var[1]")
                    .ok());
    ASSERT_GE(variance, truth) << "draw " << i;
    if (i == 0) ExpectClaimRecorded(ledger, 0.05, 0.5, "var[1]");
  }
}

TEST(UnsafeGammaTest, InvalidArgumentsRecordNothing) {
  Generator gen = Generator::FromSeed(33);
  PrivacyLedger ledger;
  struct Case {
    double variance, sensitivity, epsilon;
  };
  for (const Case& c :
       {Case{kNaN, 1, 1}, Case{1, 0, 1}, Case{1, -1, 1}, Case{1, kNaN, 1},
        Case{1, 1, 0}, Case{1, 1, kNaN}, Case{1, 1e300, 1e-300}}) {
    double v = c.variance;
    EXPECT_FALSE(ReleaseVarianceGammaUnsafe(v, c.sensitivity, c.epsilon, gen,
                                            ledger, true)
                     .ok());
    EXPECT_TRUE(std::isnan(c.variance) ? std::isnan(v) : v == c.variance);
  }
  EXPECT_TRUE(ledger.empty());
}

TEST(UnsafeWishartTest, RefusedWithoutOptIn) {
  Generator gen = Generator::FromSeed(34);
  PrivacyLedger ledger;
  Eigen::MatrixXd cov = SomeCovariance();
  const Status s =
      ReleaseCovarianceWishartUnsafe(cov, 0.01, 1.0, gen, ledger, false);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("not differentially private"), std::string::npos);
  EXPECT_TRUE((cov.array() == SomeCovariance().array()).all());
  EXPECT_TRUE(ledger.empty());
}

// The same support defect for Wishart noise: output - input is positive
// definite, on every draw (privacy-notes.md).
TEST(UnsafeWishartTest, WithOptInOutputMinusInputIsPositiveDefinite) {
  Generator gen = Generator::FromSeed(35);
  for (int i = 0; i < 500; ++i) {
    PrivacyLedger ledger;
    Eigen::MatrixXd cov = SomeCovariance();
    ASSERT_TRUE(ReleaseCovarianceWishartUnsafe(cov, 0.02, 0.8, gen, ledger,
                                               true, "cov[0]")
                    .ok());
    ASSERT_TRUE((cov.array() == cov.transpose().array()).all());
    const Eigen::LLT<Eigen::MatrixXd> llt(cov - SomeCovariance());
    ASSERT_EQ(llt.info(), Eigen::Success) << "draw " << i;
    if (i == 0) ExpectClaimRecorded(ledger, 0.02, 0.8, "cov[0]");
  }
}

TEST(UnsafeWishartTest, InvalidArgumentsRecordNothing) {
  Generator gen = Generator::FromSeed(36);
  PrivacyLedger ledger;
  Eigen::MatrixXd asymmetric = SomeCovariance();
  asymmetric(0, 1) += 1e-3;
  Eigen::MatrixXd with_nan = SomeCovariance();
  with_nan(2, 2) = kNaN;
  for (Eigen::MatrixXd m : {asymmetric, with_nan, Eigen::MatrixXd(2, 3)}) {
    EXPECT_EQ(
        ReleaseCovarianceWishartUnsafe(m, 0.1, 1, gen, ledger, true).code(),
        StatusCode::kInvalidArgument);
  }
  Eigen::MatrixXd cov = SomeCovariance();
  EXPECT_FALSE(
      ReleaseCovarianceWishartUnsafe(cov, -0.1, 1, gen, ledger, true).ok());
  EXPECT_FALSE(
      ReleaseCovarianceWishartUnsafe(cov, 0.1, kNaN, gen, ledger, true).ok());
  EXPECT_TRUE((cov.array() == SomeCovariance().array()).all());
  EXPECT_TRUE(ledger.empty());
}

TEST(UnsafeFlagTest, SoundReleasesAreNotFlagged) {
  Generator gen = Generator::FromSeed(37);
  PrivacyLedger ledger;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(2);
  ASSERT_TRUE(
      ReleaseVector(v, {MechanismKind::kLaplace, 1, 1, "weights"}, gen, ledger)
          .ok());
  EXPECT_FALSE(IsUnsafeRelease(ledger.releases()[0]));
  EXPECT_FALSE(LedgerHasUnsafeRelease(ledger));
  double variance = 1.0;
  ASSERT_TRUE(
      ReleaseVarianceGammaUnsafe(variance, 1, 1, gen, ledger, true).ok());
  EXPECT_TRUE(LedgerHasUnsafeRelease(ledger));
}

}  // namespace
}  // namespace dpem
