// Unit tests of the audit harness (testing/audit.h): Clopper-Pearson bounds
// against their closed forms at the extremes, and the harness on mechanisms
// whose privacy is known exactly in closed form.
#include "testing/audit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace dpem::test_support {
namespace {

// With 0 hits the upper bound solves (1 - p)^n = alpha; with n hits the
// lower bound solves p^n = alpha.
TEST(ClopperPearsonTest, MatchesTheClosedFormsAtTheExtremes) {
  for (std::size_t n : {1u, 10u, 1000u}) {
    EXPECT_NEAR(ClopperPearsonUpper(0, n, 1e-3), 1 - std::pow(1e-3, 1.0 / n), 1e-12);
    EXPECT_NEAR(ClopperPearsonLower(n, n, 1e-3), std::pow(1e-3, 1.0 / n), 1e-12);
    EXPECT_EQ(ClopperPearsonLower(0, n, 1e-3), 0.0);
    EXPECT_EQ(ClopperPearsonUpper(n, n, 1e-3), 1.0);
  }
}

// Binomial(10, p) tail: P(K >= 7) at the lower bound for 7 hits equals alpha.
TEST(ClopperPearsonTest, LowerBoundIsTheExactBinomialQuantile) {
  const double p = ClopperPearsonLower(7, 10, 0.05);
  double tail = 0;
  for (int k = 7; k <= 10; ++k) {
    tail += std::tgamma(11) / (std::tgamma(k + 1) * std::tgamma(11 - k)) * std::pow(p, k) *
            std::pow(1 - p, 10 - k);
  }
  EXPECT_NEAR(tail, 0.05, 1e-9);
}

TEST(EpsilonLowerBoundTest, IsMinusInfinityWhenDeltaSwallowsTheEvent) {
  EXPECT_EQ(EpsilonLowerBound(0, 100, 0, 100, 0.0, 1e-3), -INFINITY);
  EXPECT_LT(EpsilonLowerBound(50, 100, 50, 100, 0.0, 1e-3), 0.0);
}

// Randomised response with P(truth) = e^eps / (1 + e^eps) is exactly
// eps-DP: the audit must stay below eps and come close to it.
TEST(RunAuditTest, RandomisedResponseIsBoundedAndNearlyTight) {
  const double eps = 1.5, keep = std::exp(eps) / (1 + std::exp(eps));
  const auto run = [&](int side, Generator& gen) {
    const bool truth = gen.UniformOpen01() < keep;
    return (truth ? side : 1 - side) * 1.0;
  };
  AuditOptions o;
  o.seed = 3;
  const AuditResult r = RunAudit(run, o);
  EXPECT_LE(r.epsilon_lower_bound, eps) << r.Describe();
  EXPECT_GT(r.epsilon_lower_bound, 0.95 * eps) << r.Describe();
}

// A mechanism that ignores its input has epsilon 0.
TEST(RunAuditTest, AConstantMechanismHasNoPrivacyLoss) {
  const auto run = [](int, Generator& gen) { return gen.UniformOpen01(); };
  AuditOptions o;
  o.seed = 4;
  o.bound_runs = 50000;
  EXPECT_LE(RunAudit(run, o).epsilon_lower_bound, 0.0);
}

// A support gap ([0, 0.5) only under D0) is found with a bound near
// log(n p0 / log(2/alpha)) = 8.1 (the threshold is just below the smallest
// D1 value of the selection runs, so a few bound runs of D1 may fall in).
TEST(RunAuditTest, FindsASupportGap) {
  const auto run = [](int side, Generator& gen) {
    const double u = gen.UniformOpen01();
    return side == 0 ? u : 0.5 + 0.5 * u;
  };
  AuditOptions o;
  o.seed = 5;
  o.bound_runs = 100000;
  const AuditResult r = RunAudit(run, o);
  EXPECT_LT(r.hits1, 20u) << r.Describe();
  EXPECT_GT(r.epsilon_lower_bound, 6.5) << r.Describe();
}

TEST(AuditScaleTest, DefaultsToOne) {
  unsetenv("DPEM_AUDIT_SCALE");
  EXPECT_EQ(AuditScale(), 1u);
  setenv("DPEM_AUDIT_SCALE", "7", 1);
  EXPECT_EQ(AuditScale(), 7u);
  setenv("DPEM_AUDIT_SCALE", "x", 1);
  EXPECT_EQ(AuditScale(), 1u);
  unsetenv("DPEM_AUDIT_SCALE");
}

}  // namespace
}  // namespace dpem::test_support
