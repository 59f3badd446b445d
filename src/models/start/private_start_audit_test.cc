// End-to-end privacy audit of the private start (models/start/private_start.h,
// testing/audit.h): the start's two releases and their post-processing on
// two neighbouring tiny data sets, with a planted bug that the audit must
// catch. Label: audit. Long mode: DPEM_AUDIT_SCALE=20 ctest -L audit.
//
// Neighbours (replace-one, records in the public unit ball, d = 1): 100
// records at 0 and one at +1 (D0) or -1 (D1): the released sum changes by 2,
// the largest any replacement causes. For power the plan has one coarse and
// one fine candidate (K = 1), so that every record lies in the one cell of
// each round and the start's centre is S~ / n~ of the fine release: an
// increasing function of its noisy sum, the optimal statistic for this pair.
// The coarse release gets a large multiplier (50), so that the claim is
// essentially the fine release's epsilon and a bug in it shows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "dpem/accounting/accountant.h"
#include "dpem/data/row_source.h"
#include "models/start/private_start.h"
#include "testing/audit.h"

namespace dpem::internal {
namespace {

using test_support::AuditOptions;
using test_support::AuditResult;
using test_support::RunAudit;

constexpr double kDelta = 1e-5;

DataMatrix Neighbour(int side) {
  DataMatrix x = DataMatrix::Zero(101, 1);
  x(0, 0) = side == 0 ? 1.0 : -1.0;
  return x;
}

// The plan with fine multiplier z (sensitivity 2 each, Gaussian) and one
// candidate per round.
PrivateStartPlan AuditPlan(double z) {
  PrivateStartPlan plan =
      *MakePrivateStartPlan(NoiseSampling::kDiscrete, {50.0, z}, 1, 101);
  plan.coarse_candidates = 1;
  plan.fine_candidates = 1;
  return plan;
}

// The start's centre on neighbour `side` under `plan`; its ledger, if asked.
double StartCentre(int side, const PrivateStartPlan& plan, Generator& gen,
                   PrivacyLedger* ledger_out = nullptr) {
  const DataMatrix x = Neighbour(side);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  EngineOptions one;
  one.threads = 1;
  const Engine engine = *Engine::Create(one);
  PrivacyLedger ledger;
  StatusOr<StartClusters> s = PrivateStart(source, plan, engine, gen, ledger);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (ledger_out != nullptr) *ledger_out = ledger;
  return s.ok() ? s->centres(0, 0) : NAN;
}

// What the library would claim for the start: the rdp accountant's epsilon
// of the ledger its correct plan records.
double Claimed(const PrivateStartPlan& plan) {
  Generator gen = Generator::FromSeed(1);
  PrivacyLedger ledger;
  StartCentre(0, plan, gen, &ledger);
  EXPECT_EQ(ledger.size(), kPrivateStartReleases);
  return *ComputeEpsilon(ledger, kDelta, AccountantKind::kRdp);
}

AuditResult Audit(const PrivateStartPlan& plan, std::uint64_t seed) {
  AuditOptions a;
  a.seed = seed;
  a.delta = kDelta;
  a.selection_runs = 10000;
  a.bound_runs = 200000;
  return RunAudit([&](int side, Generator& gen) { return StartCentre(side, plan, gen); }, a);
}

// z = 2.5 for the fine release.
TEST(PrivateStartAudit, NeverExceedsItsEpsilon) {
  const PrivateStartPlan plan = AuditPlan(2.5);
  const double claimed = Claimed(plan);
  const AuditResult r = Audit(plan, 31);
  std::printf("[audit] private start z=2.5, claim %.4f: %s\n", claimed, r.Describe().c_str());
  EXPECT_LE(r.epsilon_lower_bound, claimed);
  EXPECT_GT(r.epsilon_lower_bound, 0.5);  // The audit has power.
}

// Planted bug: both releases calibrated for sensitivity 1 instead of the
// joint sensitivity 2 (half the noise), while the claim stays the correct
// plan's. The audit must see more than the claim.
TEST(PrivateStartAudit, CatchesAStartCalibratedForHalfItsSensitivity) {
  const double claimed = Claimed(AuditPlan(2.5));
  PrivateStartPlan bug = AuditPlan(2.5);
  bug.coarse.sensitivity = 1.0;
  bug.fine.sensitivity = 1.0;
  const AuditResult r = Audit(bug, 32);
  std::printf("[audit] planted: start with half its sensitivity, claim %.4f: %s\n", claimed,
              r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, claimed);
}

}  // namespace
}  // namespace dpem::internal
