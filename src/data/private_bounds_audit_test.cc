// Empirical audit of the permute-and-flip quantile (the refinement step of
// PrivateQuantile) on a worst-case pair of neighbours, and of a planted bug
// (the sensitivity halved, i.e. epsilon doubled in the sampler while
// claiming epsilon) that the audit must catch. docs/bounds.md.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dpem/data/private_bounds.h"
#include "testing/audit.h"

namespace dpem {
namespace {

constexpr double kEpsilon = 1.0;
constexpr int kGrid = 64;

// D0 = {0.5, 1.5}, D1 = {1.5, 64.5} (one record replaced), median t = 1,
// candidates 0..64. Under D0 candidate 1 has utility 0 and 2..64 utility -1;
// under D1 the reverse: the privacy loss of "output <= 1" tends to the
// claimed epsilon as the grid grows (about 0.98 here).
test_support::AuditedRun QuantileRun(double sensitivity) {
  std::vector<double> grid;
  for (int v = 0; v <= kGrid; ++v) grid.push_back(v);
  const std::vector<std::vector<double>> data = {{0.5, 1.5}, {1.5, kGrid + 0.5}};
  return [grid, data, sensitivity](int side, Generator& gen) {
    const std::vector<std::int64_t> u = RankUtilities(data[side], grid, 1);
    return grid[*SamplePermuteAndFlip(u, *ExactEpsilonAtMost(kEpsilon / sensitivity), gen)];
  };
}

TEST(PrivateBoundsAuditTest, QuantileMechanismStaysBelowItsClaim) {
  test_support::AuditOptions o;
  o.seed = 11;
  const test_support::AuditResult r = test_support::RunAudit(QuantileRun(1.0), o);
  EXPECT_LT(r.epsilon_lower_bound, kEpsilon) << r.Describe();
  EXPECT_GT(r.epsilon_lower_bound, 0.6) << r.Describe();  // The audit has power.
}

TEST(PrivateBoundsAuditTest, CatchesAHalvedSensitivity) {
  test_support::AuditOptions o;
  o.seed = 12;
  const test_support::AuditResult r = test_support::RunAudit(QuantileRun(0.5), o);
  EXPECT_GT(r.epsilon_lower_bound, kEpsilon) << r.Describe();
}

}  // namespace
}  // namespace dpem
