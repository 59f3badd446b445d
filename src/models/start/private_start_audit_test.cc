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
// essentially the fine release's epsilon and a bug in it shows. The plan
// has no cell frames (with K = 1 the lone fine candidate would get none
// anyway); the framed release, the GMM default, is audited separately below
// at a worst case across its parts, with the optimal statistic. Both paths
// share SketchRound, whose post-processing this audit covers.
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

// One engine thread: the audited passes are deterministic given the noise.
Engine OneThread() {
  EngineOptions one;
  one.threads = 1;
  return *Engine::Create(one);
}

// The audits' run counts (CI mode; DPEM_AUDIT_SCALE multiplies the bound
// runs) with `seed`.
AuditOptions Options(std::uint64_t seed) {
  AuditOptions a;
  a.seed = seed;
  a.delta = kDelta;
  a.selection_runs = 10000;
  a.bound_runs = 200000;
  return a;
}

// What the library would claim for `statistic(side, gen, ledger)`'s
// releases: the rdp accountant's epsilon of the ledger it records on D0.
template <typename Statistic>
double ClaimOf(const Statistic& statistic) {
  Generator gen = Generator::FromSeed(1);
  PrivacyLedger ledger;
  statistic(0, gen, &ledger);
  return *ComputeEpsilon(ledger, kDelta, AccountantKind::kRdp);
}

// The start's centre on neighbour `side` under `plan`; its ledger, if asked.
double StartCentre(int side, const PrivateStartPlan& plan, Generator& gen,
                   PrivacyLedger* ledger_out = nullptr) {
  const DataMatrix x = Neighbour(side);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  PrivacyLedger ledger;
  StatusOr<StartClusters> s = PrivateStart(source, plan, OneThread(), gen, ledger);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (ledger_out != nullptr) *ledger_out = ledger;
  return s.ok() ? s->centres(0, 0) : NAN;
}

// What the library would claim for the start: the epsilon of the ledger its
// correct plan records (both releases).
double Claimed(const PrivateStartPlan& plan) {
  return ClaimOf([&](int side, Generator& gen, PrivacyLedger* ledger) {
    StartCentre(side, plan, gen, ledger);
    EXPECT_EQ(ledger->size(), kPrivateStartReleases);
  });
}

AuditResult Audit(const PrivateStartPlan& plan, std::uint64_t seed) {
  return RunAudit([&](int side, Generator& gen) { return StartCentre(side, plan, gen); },
                  Options(seed));
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

// The fine round's framed release at a worst case that crosses its parts:
// two cells with candidates at +-0.1 and FineCellFrames' frames (radius
// 0.4), 100 records at 0 (cell 0, the lower index on the tie; inside its
// frame) and one just inside cell 0's frame boundary, at 0.1 + 0.4 (1 - 1e-9)
// (D0: frame count and frame vector of norm 1 - 1e-9), or at -1 (D1: cell
// 1's plain count and sum). The released vector [counts; sums; frame counts;
// frame sums] moves by -1 and +1 in cell 1's plain count and sum and by +1
// and +(1 - 1e-9) in cell 0's frame count and sum: a norm of 2 to 1e-9, the
// sensitivity. The statistic is the released vector's projection on that
// direction, optimal for the pair.
double FramedStatistic(int side, const NoiseSpec& spec, Generator& gen,
                       PrivacyLedger* ledger_out = nullptr) {
  DataMatrix x = DataMatrix::Zero(101, 1);
  x(0, 0) = side == 0 ? 0.1 + 0.4 * (1.0 - 1e-9) : -1.0;
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  Eigen::MatrixXd candidates(2, 1);
  candidates << 0.1, -0.1;
  const CellFrames frames = FineCellFrames(candidates);
  EXPECT_NEAR(frames.radii(0), 0.4, 1e-15);
  KmeansStatistics s = *ComputeKmeansStatistics(candidates, source, OneThread(), &frames);
  EXPECT_EQ(s.frame_counts(0), side == 0 ? 101.0 : 100.0);  // The record's part.
  PrivacyLedger ledger;
  EXPECT_TRUE(ReleaseCountsAndSums(s, spec, gen, ledger).ok());
  if (ledger_out != nullptr) *ledger_out = ledger;
  return s.frame_counts(0) + s.frame_sums(0, 0) - s.counts(1) + s.sums(1, 0);
}

AuditResult AuditFramed(const NoiseSpec& spec, std::uint64_t seed) {
  return RunAudit([&](int side, Generator& gen) { return FramedStatistic(side, spec, gen); },
                  Options(seed));
}

double ClaimedFramed(const NoiseSpec& spec) {
  return ClaimOf([&](int side, Generator& gen, PrivacyLedger* ledger) {
    FramedStatistic(side, spec, gen, ledger);
  });
}

TEST(PrivateStartAudit, TheFramedFineReleaseNeverExceedsItsEpsilon) {
  const NoiseSpec spec = AuditPlan(2.5).fine;
  const double claimed = ClaimedFramed(spec);
  const AuditResult r = AuditFramed(spec, 33);
  std::printf("[audit] framed fine release z=2.5, claim %.4f: %s\n", claimed,
              r.Describe().c_str());
  EXPECT_LE(r.epsilon_lower_bound, claimed);
  EXPECT_GT(r.epsilon_lower_bound, 0.5);  // The audit has power.
}

// Planted bug: the framed release calibrated for sensitivity 1, half of the
// 2 that replacing one record moves it by; the claim stays the correct
// spec's.
TEST(PrivateStartAudit, CatchesAFramedReleaseCalibratedForHalfItsSensitivity) {
  const NoiseSpec spec = AuditPlan(2.5).fine;
  const double claimed = ClaimedFramed(spec);
  NoiseSpec bug = spec;
  bug.sensitivity = 1.0;
  const AuditResult r = AuditFramed(bug, 34);
  std::printf("[audit] planted: framed release with half its sensitivity, claim %.4f: %s\n",
              claimed, r.Describe().c_str());
  EXPECT_GT(r.epsilon_lower_bound, claimed);
}

}  // namespace
}  // namespace dpem::internal
