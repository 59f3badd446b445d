// Accounting of discrete noise (issue: discrete Laplace and Gaussian releases
// must not be certified with the continuous mechanisms' curves). The
// expectations are computed here from the discrete distributions' mass
// functions, independently of src/accounting.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/rdp.h"
#include "accounting/ledger_json.h"
#include "testing/exact_privacy.h"

namespace dpem {
namespace {

// log P(k) of the discrete Laplace with scale t (mass proportional to
// e^{-|k|/t}), the distribution SampleDiscreteLaplace draws.
long double LogDiscreteLaplace(long k, long double t) {
  const long double log_norm = std::log((1 - std::exp(-1 / t)) / (1 + std::exp(-1 / t)));
  return log_norm - std::fabs(static_cast<long double>(k)) / t;
}

// The exact Renyi divergence D_alpha(P || P shifted by s) of the discrete
// Laplace with scale t, by direct summation over the integers.
double ExactDiscreteLaplaceRenyi(long s, long double t, long double alpha) {
  const long limit = static_cast<long>(80 * t) + 4 * std::labs(s) + 50;
  long double sum = 0;
  for (long k = -limit; k <= limit; ++k) {
    sum += std::exp(alpha * LogDiscreteLaplace(k, t) +
                    (1 - alpha) * LogDiscreteLaplace(k - s, t));
  }
  return static_cast<double>(std::log(sum) / (alpha - 1));
}

TEST(PureDpRdpTest, BoundsTheExactDiscreteLaplaceDivergence) {
  for (long double t : {0.5L, 1.0L, 2.0L, 5.0L}) {
    for (long s : {1L, 2L, 3L}) {
      for (double alpha : {1.01, 1.1, 1.5, 2.0, 4.0, 10.0, 50.0}) {
        const double exact = ExactDiscreteLaplaceRenyi(s, t, alpha);
        const double bound = PureDpRdp(static_cast<double>(s / t), alpha);
        EXPECT_GE(bound, exact) << "t " << static_cast<double>(t) << " s " << s << " alpha "
                                << alpha;
      }
    }
  }
}

TEST(PureDpRdpTest, IsTightAtUnitShiftAndExceedsTheContinuousLaplace) {
  // The review's example: scale 1, shift 1, order 1.5.
  const double exact = ExactDiscreteLaplaceRenyi(1, 1.0L, 1.5L);
  EXPECT_NEAR(exact, 0.627, 5e-4);
  EXPECT_LT(LaplaceRdp(1.0, 1.5), exact);  // The continuous curve is too low.
  EXPECT_LE(PureDpRdp(1.0, 1.5), exact * (1 + 1e-6));  // Randomised response.
}

TEST(PureDpRdpTest, SplitShiftsStayBelowTheBound) {
  // A shift of L1 norm 2 spread over two coordinates: divergences add.
  for (double alpha : {1.5, 3.0, 20.0}) {
    const double split = 2 * ExactDiscreteLaplaceRenyi(1, 2.0L, alpha);
    EXPECT_GE(PureDpRdp(1.0, alpha), split);
  }
}

// A ledger of `count` discrete releases.
PrivacyLedger Discrete(MechanismKind kind, double z, int count) {
  PrivacyLedger ledger;
  EXPECT_TRUE(ledger.RecordRepeated({kind, 1.0, z, "r", NoiseSampling::kDiscrete}, count).ok());
  return ledger;
}

TEST(DiscreteAccountingTest, LaplaceRdpAndMomentsCoverTheExactDiscreteCurve) {
  // z = 1, 2: noise scale t = z grid units per unit of sensitivity 1 unit.
  for (long double t : {1.0L, 2.0L}) {
    for (int count : {1, 10}) {
      const double delta = 1e-5;
      const std::vector<double>& orders = DefaultRdpOrders();
      std::vector<double> exact(orders.size());
      for (size_t i = 0; i < orders.size(); ++i) {
        exact[i] = count * ExactDiscreteLaplaceRenyi(1, t, orders[i]);
      }
      StatusOr<double> truth = RdpToEpsilon(orders, exact, delta);
      ASSERT_TRUE(truth.ok());
      const PrivacyLedger ledger = Discrete(MechanismKind::kLaplace, static_cast<double>(t), count);
      StatusOr<double> rdp = ComputeEpsilon(ledger, delta, AccountantKind::kRdp);
      ASSERT_TRUE(rdp.ok());
      EXPECT_GE(*rdp, *truth);
      std::vector<double> moments(kMomentsMaxLambda);
      for (int l = 1; l <= kMomentsMaxLambda; ++l) {
        moments[l - 1] = count * l * ExactDiscreteLaplaceRenyi(1, t, l + 1.0L);
      }
      StatusOr<double> truth_ma = LogMomentsToEpsilon(moments, delta);
      StatusOr<double> ma = ComputeEpsilon(ledger, delta, AccountantKind::kMoments);
      ASSERT_TRUE(truth_ma.ok() && ma.ok());
      EXPECT_GE(*ma, *truth_ma);
    }
  }
}

TEST(DiscreteAccountingTest, GaussianCurveAccountantsUseTheRenyiConversion) {
  for (double z : {0.8, 2.0, 6.0}) {
    for (int count : {1, 5}) {
      const double delta = 1e-5;
      const PrivacyLedger discrete = Discrete(MechanismKind::kGaussian, z, count);
      PrivacyLedger continuous;
      ASSERT_TRUE(continuous
                      .RecordRepeated({MechanismKind::kGaussian, 1.0, z, "r",
                                       NoiseSampling::kContinuous},
                                      count)
                      .ok());
      StatusOr<double> linear = ComputeEpsilon(discrete, delta, AccountantKind::kLinear);
      StatusOr<double> each = GaussianRdpEpsilonForDelta(z, delta / count);
      ASSERT_TRUE(linear.ok() && each.ok());
      EXPECT_NEAR(*linear, count * *each, 1e-9 * *linear);
      // Never the continuous Gaussian's exact profile.
      const double exact_each = test_support::ExactGaussianEpsilon(z, delta / count);
      EXPECT_GT(*each, exact_each * (1 + 1e-3));
      for (AccountantKind kind : {AccountantKind::kAdvanced, AccountantKind::kKov}) {
        StatusOr<double> d = ComputeEpsilon(discrete, delta, kind);
        StatusOr<double> c = ComputeEpsilon(continuous, delta, kind);
        ASSERT_TRUE(d.ok() && c.ok());
        EXPECT_GT(*d, *c) << AccountantName(kind);
      }
      // The Renyi-based accountants treat both samplings alike.
      for (AccountantKind kind : {AccountantKind::kRdp, AccountantKind::kZcdp,
                                  AccountantKind::kMoments, AccountantKind::kMcdp}) {
        StatusOr<double> d = ComputeEpsilon(discrete, delta, kind);
        StatusOr<double> c = ComputeEpsilon(continuous, delta, kind);
        ASSERT_TRUE(d.ok() && c.ok());
        EXPECT_EQ(*d, *c) << AccountantName(kind);
      }
    }
  }
}

TEST(DiscreteAccountingTest, SingleGaussianCalibrationMeetsItsTarget) {
  for (double eps : {0.1, 1.0, 5.0}) {
    for (double delta : {1e-3, 1e-8}) {
      StatusOr<double> z = CalibrateSingleGaussian(eps, delta, NoiseSampling::kDiscrete);
      ASSERT_TRUE(z.ok());
      StatusOr<double> at = SingleGaussianEpsilon(*z, delta, NoiseSampling::kDiscrete);
      StatusOr<double> below =
          SingleGaussianEpsilon(*z * (1 - 1e-6), delta, NoiseSampling::kDiscrete);
      ASSERT_TRUE(at.ok() && below.ok());
      EXPECT_LE(*at, eps);
      EXPECT_GT(*below, eps);
      EXPECT_GE(*at, test_support::ExactGaussianEpsilon(*z, delta));
    }
  }
}

TEST(LedgerJsonTest, KeepsTheSamplingAndReadsOldFilesAsDiscrete) {
  PrivacyLedger ledger;
  ASSERT_TRUE(ledger.Record({MechanismKind::kLaplace, 2.0, 3.0, "a",
                             NoiseSampling::kContinuous}).ok());
  ASSERT_TRUE(ledger.Record({MechanismKind::kGaussian, 1.0, 4.0, "b"}).ok());
  nlohmann::json j = internal::LedgerToJson(ledger);
  StatusOr<PrivacyLedger> back = internal::LedgerFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->releases()[0].sampling, NoiseSampling::kContinuous);
  EXPECT_EQ(back->releases()[1].sampling, NoiseSampling::kDiscrete);
  j[0].erase("noise");
  back = internal::LedgerFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->releases()[0].sampling, NoiseSampling::kDiscrete);
  j[0]["noise"] = "fuzzy";
  EXPECT_FALSE(internal::LedgerFromJson(j).ok());
}

}  // namespace
}  // namespace dpem
