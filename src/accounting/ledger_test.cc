#include "dpem/accounting/ledger.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace dpem {
namespace {

Release Gaussian(double sensitivity, double sigma, std::string label = "x") {
  return Release{MechanismKind::kGaussian, sensitivity, sigma, std::move(label)};
}

TEST(LedgerTest, RecordsValidReleasesInOrder) {
  PrivacyLedger ledger;
  ASSERT_TRUE(ledger.Record(Gaussian(2.0, 3.0, "a")).ok());
  ASSERT_TRUE(ledger.Record({MechanismKind::kLaplace, 0.5, 1.0, "b"}).ok());
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger.releases()[0].label, "a");
  EXPECT_DOUBLE_EQ(ledger.releases()[0].NoiseMultiplier(), 1.5);
  EXPECT_DOUBLE_EQ(ledger.releases()[1].NoiseMultiplier(), 2.0);
  EXPECT_EQ(ledger.releases()[0].SensitivityNorm(), "L2");
  EXPECT_EQ(ledger.releases()[1].SensitivityNorm(), "L1");
}

TEST(LedgerTest, RejectsInvalidReleasesAndRecordsNothing) {
  PrivacyLedger ledger;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {0.0, -1.0, inf, nan}) {
    EXPECT_EQ(ledger.Record(Gaussian(bad, 1.0)).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(ledger.Record(Gaussian(1.0, bad)).code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(ledger.RecordRepeated(Gaussian(1.0, bad), 3).ok());
  }
  EXPECT_TRUE(ledger.empty());
}

TEST(LedgerTest, GroupsByMechanismAndNoiseMultiplier) {
  PrivacyLedger ledger;
  ASSERT_TRUE(ledger.RecordRepeated(Gaussian(1.0, 2.0), 3).ok());
  ASSERT_TRUE(ledger.Record(Gaussian(0.5, 1.0)).ok());  // Same multiplier 2.
  ASSERT_TRUE(ledger.Record({MechanismKind::kLaplace, 1.0, 2.0, "l"}).ok());
  ASSERT_TRUE(ledger.Record(Gaussian(1.0, 4.0)).ok());
  const std::vector<ReleaseGroup> groups = ledger.Groups();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].mechanism, MechanismKind::kGaussian);
  EXPECT_EQ(groups[0].count, 4u);
  EXPECT_EQ(groups[1].mechanism, MechanismKind::kLaplace);
  EXPECT_EQ(groups[1].count, 1u);
  EXPECT_DOUBLE_EQ(groups[2].noise_multiplier, 4.0);
}

TEST(LedgerTest, ParsesMechanismNames) {
  EXPECT_EQ(ParseMechanismKind("laplace").value(), MechanismKind::kLaplace);
  EXPECT_EQ(ParseMechanismKind("gaussian").value(), MechanismKind::kGaussian);
  EXPECT_EQ(ParseMechanismKind("Gauss").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MechanismName(MechanismKind::kLaplace), "laplace");
}

}  // namespace
}  // namespace dpem
