// Accountants against independent computations written here, not the
// library's code paths: the exact privacy profile of a composed Gaussian
// (a lower bound no sound accountant may go under) and the closed forms of
// each composition for homogeneous ledgers.
#include "dpem/accounting/accountant.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "testing/exact_privacy.h"

namespace dpem {
namespace {

// --- Independent reference computations -------------------------------

// Continuous noise: these tests check the accountants against the formulas
// of the continuous mechanisms (discrete_accounting_test.cc covers discrete).
PrivacyLedger Homogeneous(MechanismKind kind, double z, int count) {
  PrivacyLedger ledger;
  EXPECT_TRUE(
      ledger.RecordRepeated({kind, 1.0, z, "r", NoiseSampling::kContinuous}, count).ok());
  return ledger;
}

double Epsilon(const PrivacyLedger& ledger, double delta, AccountantKind kind) {
  StatusOr<double> eps = ComputeEpsilon(ledger, delta, kind);
  EXPECT_TRUE(eps.ok()) << AccountantName(kind) << ": " << eps.status().ToString();
  return eps.ok() ? *eps : std::nan("");
}

struct GridPoint {
  double z;
  int compositions;
  double delta;
};

std::vector<GridPoint> Grid() {
  std::vector<GridPoint> grid;
  for (double z : {0.8, 2.0, 8.0, 30.0}) {
    for (int j : {1, 10, 70}) {
      for (double delta : {1e-3, 1e-5, 1e-9}) grid.push_back({z, j, delta});
    }
  }
  return grid;
}

// --- Soundness: never below the truth ----------------------------------

TEST(AccountantTest, EveryAccountantIsAtLeastTheExactGaussianEpsilon) {
  for (const GridPoint& p : Grid()) {
    const PrivacyLedger ledger = Homogeneous(MechanismKind::kGaussian, p.z, p.compositions);
    const double exact = test_support::ExactGaussianEpsilon(p.z / std::sqrt(p.compositions), p.delta);
    for (AccountantKind kind : AllAccountants()) {
      EXPECT_GE(Epsilon(ledger, p.delta, kind), exact)
          << AccountantName(kind) << " z=" << p.z << " J=" << p.compositions
          << " delta=" << p.delta;
    }
  }
}

TEST(AccountantTest, LaplaceAccountantsAreAtLeastTheSingleReleaseTruth) {
  // One Laplace release with multiplier z is exactly (1/z, 0)-DP, and its
  // delta at eps < 1/z is 1 - exp((eps - 1/z)/2) (the hockey-stick divergence
  // of Lap(0, z) from Lap(1, z), computed by hand).
  for (double z : {0.5, 1.0, 4.0}) {
    for (double delta : {1e-2, 1e-4, 1e-8}) {
      const double exact = std::max(0.0, 1.0 / z + 2.0 * std::log1p(-delta));
      const PrivacyLedger ledger = Homogeneous(MechanismKind::kLaplace, z, 1);
      for (AccountantKind kind : AllAccountants()) {
        EXPECT_GE(Epsilon(ledger, delta, kind), exact) << AccountantName(kind);
      }
    }
  }
}

// --- Closed forms for homogeneous ledgers ------------------------------

TEST(AccountantTest, ZcdpAndMcdpMatchTheirClosedForms) {
  for (const GridPoint& p : Grid()) {
    const PrivacyLedger ledger = Homogeneous(MechanismKind::kGaussian, p.z, p.compositions);
    const double rho = p.compositions / (2.0 * p.z * p.z);  // Bun-Steinke Prop 1.6.
    const double log_inv_delta = std::log(1.0 / p.delta);
    const double zcdp = rho + 2.0 * std::sqrt(rho * log_inv_delta);
    EXPECT_NEAR(Epsilon(ledger, p.delta, AccountantKind::kZcdp), zcdp, 1e-9 * zcdp);
    // mCDP: mu = J tau^2 / 2, tau_total = sqrt(J) / z (Dwork-Rothblum 3.2, 3.4).
    const double mcdp = rho + std::sqrt(static_cast<double>(p.compositions)) / p.z *
                                  std::sqrt(2.0 * log_inv_delta);
    EXPECT_NEAR(Epsilon(ledger, p.delta, AccountantKind::kMcdp), mcdp, 1e-9 * mcdp);
  }
}

TEST(AccountantTest, RdpMatchesAFineMinimisationOfTheGaussianCurve) {
  for (const GridPoint& p : Grid()) {
    const PrivacyLedger ledger = Homogeneous(MechanismKind::kGaussian, p.z, p.compositions);
    const double rho = p.compositions / (2.0 * p.z * p.z);
    double best = INFINITY;  // CKS Prop. 12 on tau(alpha) = rho alpha.
    for (int i = 0; i <= 200000; ++i) {
      const double alpha = 1.0 + std::pow(10.0, -4.0 + 8.0 * i / 200000.0);
      const double eps = rho * alpha + std::log((alpha - 1.0) / alpha) -
                         (std::log(p.delta) + std::log(alpha)) / (alpha - 1.0);
      best = std::min(best, eps);
    }
    best = std::max(best, 0.0);
    const double rdp = Epsilon(ledger, p.delta, AccountantKind::kRdp);
    EXPECT_GE(rdp, best * (1 - 1e-12));
    EXPECT_LE(rdp, best * 1.005 + 1e-12) << "z=" << p.z << " J=" << p.compositions;
  }
}

TEST(AccountantTest, MomentsAccountantMatchesTheParkFormulaForLaplace) {
  // park2017 eq. (19) composed J times, then eq. (3), over lambda = 1..100.
  for (double z : {1.0, 5.0, 20.0}) {
    for (int j : {1, 30}) {
      const double delta = 1e-5, e = 1.0 / z;
      double best = INFINITY;
      for (int l = 1; l <= 100; ++l) {
        const double moment = std::log((l + 1.0) / (2 * l + 1.0) * std::exp(l * e) +
                                       l / (2 * l + 1.0) * std::exp(-(l + 1.0) * e));
        best = std::min(best, (j * moment + std::log(1.0 / delta)) / l);
      }
      const PrivacyLedger ledger = Homogeneous(MechanismKind::kLaplace, z, j);
      EXPECT_NEAR(Epsilon(ledger, delta, AccountantKind::kMoments), best, 1e-9 * best);
    }
  }
}

TEST(AccountantTest, PureLaplaceLinearAndAdvancedMatchTheBook) {
  for (double z : {2.0, 10.0, 50.0}) {
    for (int k : {1, 10, 70}) {
      const double delta = 1e-5, e = 1.0 / z;
      const PrivacyLedger ledger = Homogeneous(MechanismKind::kLaplace, z, k);
      const double linear = Epsilon(ledger, delta, AccountantKind::kLinear);
      EXPECT_GE(linear, k * e);  // Rounded up, never down.
      EXPECT_LE(linear, k * e * (1 + 1e-9));
      // Dwork-Roth Thm 3.20 with all of delta as slack (no Gaussian release).
      const double adv = std::sqrt(2.0 * k * std::log(1.0 / delta)) * e + k * e * std::expm1(e);
      EXPECT_NEAR(Epsilon(ledger, delta, AccountantKind::kAdvanced), adv, 1e-9 * adv);
    }
  }
}

TEST(AccountantTest, LinearGaussianSplitsDeltaEquallyOverReleases) {
  for (const GridPoint& p : Grid()) {
    const PrivacyLedger ledger = Homogeneous(MechanismKind::kGaussian, p.z, p.compositions);
    const double each = test_support::ExactGaussianEpsilon(p.z, p.delta / p.compositions);
    const double linear = Epsilon(ledger, p.delta, AccountantKind::kLinear);
    EXPECT_GE(linear, p.compositions * each);
    EXPECT_LE(linear, p.compositions * each * (1 + 1e-7) + 1e-12);
  }
}

// --- Orderings and monotonicity -----------------------------------------

TEST(AccountantTest, TightConversionsAreNeverWorseThanClassicOnes) {
  for (const GridPoint& p : Grid()) {
    for (MechanismKind m : {MechanismKind::kGaussian, MechanismKind::kLaplace}) {
      const PrivacyLedger ledger = Homogeneous(m, p.z, p.compositions);
      const double slack = 1e-12;
      EXPECT_LE(Epsilon(ledger, p.delta, AccountantKind::kZcdpTight),
                Epsilon(ledger, p.delta, AccountantKind::kZcdp) + slack);
      EXPECT_LE(Epsilon(ledger, p.delta, AccountantKind::kRdp),
                Epsilon(ledger, p.delta, AccountantKind::kMoments) + slack);
      EXPECT_LE(Epsilon(ledger, p.delta, AccountantKind::kKov),
                Epsilon(ledger, p.delta, AccountantKind::kAdvanced) + slack);
    }
  }
}

TEST(AccountantTest, EpsilonIsMonotoneInNoiseCompositionsAndDelta) {
  for (AccountantKind kind : AllAccountants()) {
    for (MechanismKind m : {MechanismKind::kGaussian, MechanismKind::kLaplace}) {
      double previous = INFINITY;
      for (double z : {0.5, 1.0, 2.0, 4.0, 16.0}) {  // More noise, less epsilon.
        const double eps = Epsilon(Homogeneous(m, z, 10), 1e-5, kind);
        EXPECT_LE(eps, previous) << AccountantName(kind) << " z=" << z;
        previous = eps;
      }
      previous = 0.0;
      for (int j : {1, 2, 5, 20, 100}) {  // More releases, more epsilon.
        const double eps = Epsilon(Homogeneous(m, 4.0, j), 1e-5, kind);
        EXPECT_GE(eps, previous) << AccountantName(kind) << " J=" << j;
        previous = eps;
      }
      previous = INFINITY;
      for (double delta : {1e-10, 1e-7, 1e-5, 1e-3, 1e-1}) {  // Larger delta, less eps.
        const double eps = Epsilon(Homogeneous(m, 4.0, 10), delta, kind);
        EXPECT_LE(eps, previous + 1e-12) << AccountantName(kind) << " delta=" << delta;
        previous = eps;
      }
    }
  }
}

TEST(AccountantTest, MixedLedgerIsInvariantToReleaseOrder) {
  std::vector<Release> releases;
  for (int i = 0; i < 5; ++i) releases.push_back({MechanismKind::kLaplace, 1.0, 8.0, "l"});
  for (int i = 0; i < 4; ++i) releases.push_back({MechanismKind::kGaussian, 2.0, 12.0, "g"});
  std::mt19937 shuffler(7);  // Test-only shuffling; no privacy noise here.
  for (AccountantKind kind : AllAccountants()) {
    PrivacyLedger a, b;
    for (const Release& r : releases) ASSERT_TRUE(a.Record(r).ok());
    std::vector<Release> shuffled = releases;
    std::shuffle(shuffled.begin(), shuffled.end(), shuffler);
    for (const Release& r : shuffled) ASSERT_TRUE(b.Record(r).ok());
    EXPECT_EQ(Epsilon(a, 1e-6, kind), Epsilon(b, 1e-6, kind)) << AccountantName(kind);
  }
}

TEST(AccountantTest, EmptyLedgerCostsNothingAndBadDeltaIsRefused) {
  const PrivacyLedger empty;
  for (AccountantKind kind : AllAccountants()) {
    EXPECT_EQ(Epsilon(empty, 1e-5, kind), 0.0);
    for (double bad : {0.0, 1.0, -1e-5, std::nan("")}) {
      EXPECT_EQ(ComputeEpsilon(Homogeneous(MechanismKind::kGaussian, 1.0, 1), bad, kind)
                    .status().code(),
                StatusCode::kInvalidArgument);
    }
  }
}

TEST(AccountantTest, NamesRoundTrip) {
  for (AccountantKind kind : AllAccountants()) {
    EXPECT_EQ(ParseAccountantKind(AccountantName(kind)).value(), kind);
  }
  EXPECT_EQ(AllAccountants().size(), 8u);
  EXPECT_FALSE(ParseAccountantKind("RDP").ok());
  EXPECT_EQ(AccountantName(kDefaultAccountant), "rdp");
}

}  // namespace
}  // namespace dpem
