#include "dpem/data/private_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/random/discrete_samplers.h"
#include "engine/rank_combine.h"
#include "internal/guarantee.h"
#include "internal/numeric.h"
#include "internal/text.h"

namespace dpem {
namespace {

constexpr Eigen::Index kReadBlockRows = 4096;
constexpr int kMaxRefinementPoints = 1 << 20;

constexpr std::uint64_t kMaxGap = (std::uint64_t{1} << 32) - 1;
constexpr std::uint64_t kMaxEpsilonNumerator = (std::uint64_t{1} << 32) - 1;
constexpr int kMaxEpsilonShift = 61;

// #{x in sorted : x < v}.
std::int64_t CountBelow(std::span<const double> sorted, double v) {
  return std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
}

// Records one permute-and-flip release at pure epsilon e (exact, dyadic), as
// a discrete Laplace release of multiplier z: every accountant's treatment
// of discrete Laplace is its bound for an arbitrary pure (1/z)-DP mechanism
// (docs/accounting.md, "Discrete noise"), which permute-and-flip is. z is
// the largest double with z e <= 1 exactly, so 1/z >= e and the accountant's
// rounded 1/z is >= e (rounding is monotone and e is a double).
Status RecordPermuteAndFlip(double e, const std::string& label, PrivacyLedger& ledger) {
  double z = 1.0 / e;
  if (std::fma(z, e, -1.0) > 0.0) z = std::nextafter(z, 0.0);
  return ledger.Record(Release{MechanismKind::kLaplace, 1.0, z,
                               label + " (permute-and-flip, pure " +
                                   std::to_string(e) + "-DP)",
                               NoiseSampling::kDiscrete});
}

// Coarse utilities: interval [a, b) gets -max(0, #{x<a} - t, t - #{x<b}).
// Each count moves by at most 1 under replace-one, so the utility does too.
// `below` holds #{x < breakpoint} for each breakpoint.
std::vector<std::int64_t> IntervalUtilities(std::span<const std::int64_t> below, std::int64_t t) {
  std::vector<std::int64_t> u(below.size() - 1);
  for (std::size_t j = 0; j + 1 < below.size(); ++j) {
    u[j] = -std::max({std::int64_t{0}, below[j] - t, t - below[j + 1]});
  }
  return u;
}

// #{x < v} over the whole table for each v of `values`: from this process's
// sorted values, added over the ranks of `c` (exact: counts below 2^53).
StatusOr<std::vector<std::int64_t>> TableCountsBelow(std::span<const double> sorted,
                                                     std::span<const double> values,
                                                     const Collective* c) {
  std::vector<double> counts(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    counts[i] = static_cast<double>(CountBelow(sorted, values[i]));
  }
  DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(c, counts));
  return std::vector<std::int64_t>(counts.begin(), counts.end());
}

std::vector<double> Log2Grid(double a, int m) {
  std::vector<double> v;
  for (int j = 1; j <= m; ++j) v.push_back(a * std::exp2(static_cast<double>(j) / m));
  return v;
}

std::vector<double> LinearGrid(double a, double b, int m, bool include_lower) {
  std::vector<double> v;
  for (int j = include_lower ? 0 : 1; j <= m; ++j) {
    v.push_back(a + (b - a) * (static_cast<double>(j) / m));
  }
  return v;
}

struct Columns {
  std::vector<std::vector<double>> values;  // One vector of N per feature.
};

// The records this process holds (all, or a rank's shard), column by column.
Columns ReadColumns(const RowSource& x) {
  Columns c;
  c.values.assign(static_cast<std::size_t>(x.cols()), {});
  DataMatrix scratch;
  const RowRange local = x.LocalRows();
  for (Eigen::Index start = local.begin; start < local.end; start += kReadBlockRows) {
    const Eigen::Index count = std::min(kReadBlockRows, local.end - start);
    const RowBlock block = x.Block(start, count, scratch);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      for (Eigen::Index i = 0; i < count; ++i) c.values[j].push_back(block(i, j));
    }
  }
  return c;
}

// ||x_i - c|| for every record, sorted ascending.
std::vector<double> SortedDistances(const Columns& cols, const Eigen::VectorXd& c) {
  const std::size_t n = cols.values.empty() ? 0 : cols.values[0].size();
  Eigen::VectorXd row(static_cast<Eigen::Index>(cols.values.size()));
  std::vector<double> norms(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < row.size(); ++j) row(j) = cols.values[j][i] - c(j);
    norms[i] = row.stableNorm();
  }
  std::sort(norms.begin(), norms.end());
  return norms;
}

// The noisy count of distances > R, released by discrete Laplace
// (sensitivity 1: one record moves the count by at most 1), clamped to
// [0, N] (post-processing).
// The outside count's release at epsilon e: discrete Laplace, sensitivity 1.
NoiseSpec OutsideCountSpec(double e) {
  return {MechanismKind::kLaplace, 1.0, 1.0 / e, "bounds / records outside the ball",
          NoiseSampling::kDiscrete};
}

Status ReleaseOutsideCount(std::span<const double> sorted, double r, double e,
                           const RowSource& x, Generator& gen, PrivateBounds& out) {
  const double n = static_cast<double>(x.rows());
  // #{norm <= r} = #{norm < the next double above r}.
  const double above_r = std::nextafter(r, std::numeric_limits<double>::infinity());
  DPEM_ASSIGN_OR_RETURN(const std::vector<std::int64_t> inside_count,
                        TableCountsBelow(sorted, {&above_r, 1}, x.collective()));
  const double inside = static_cast<double>(inside_count[0]);
  Eigen::VectorXd count(1);
  count(0) = n - inside;
  DPEM_RETURN_IF_ERROR(ReleaseVector(count, OutsideCountSpec(e), gen, out.ledger));
  out.outside_count_noisy = std::clamp(count(0), 0.0, n);
  out.outside_fraction_noisy = out.outside_count_noisy / n;
  return OkStatus();
}

double LedgerPureEpsilon(const PrivacyLedger& ledger) {
  double sum = 0.0;
  for (const Release& r : ledger.releases()) sum += 1.0 / r.NoiseMultiplier();
  return internal::RoundUpConservatively(sum);
}

}  // namespace

Status PrivateBoundsOptions::Validate() const {
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) {
    return InvalidArgumentError("bounds epsilon must be finite and > 0 (no default)");
  }
  if (!(quantile > 0.0 && quantile < 1.0)) {
    return InvalidArgumentError("bounds quantile must be in (0, 1)");
  }
  if (!(radius_inflation >= 1.0 && std::isfinite(radius_inflation))) {
    return InvalidArgumentError("bounds radius_inflation must be finite and >= 1");
  }
  if (refinement_points < 2 || refinement_points > kMaxRefinementPoints) {
    return InvalidArgumentError("bounds refinement_points must be in [2, 2^20]");
  }
  // The outside count's release depends on public values only: check it
  // here, so that an epsilon too small for its grid fails before the data is
  // read (and before a budget is charged), not after (review finding).
  if (!CheckRelease(OutsideCountSpec(epsilon * kBoundsOutsideShare), 1).ok()) {
    return InvalidArgumentError("bounds epsilon " + std::to_string(epsilon) +
                                " is too small for the outside count's release");
  }
  return OkStatus();
}

std::vector<std::int64_t> RankUtilities(std::span<const double> sorted,
                                        std::span<const double> candidates, std::int64_t t) {
  std::vector<std::int64_t> u(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    u[i] = -std::abs(CountBelow(sorted, candidates[i]) - t);
  }
  return u;
}

namespace {
// RankUtilities from the counts below each candidate.
std::vector<std::int64_t> RankUtilitiesOfCounts(std::span<const std::int64_t> below,
                                                std::int64_t t) {
  std::vector<std::int64_t> u(below.size());
  for (std::size_t i = 0; i < below.size(); ++i) u[i] = -std::abs(below[i] - t);
  return u;
}
}  // namespace

double ExactEpsilon::value() const {
  return std::ldexp(static_cast<double>(numerator), -shift);
}

StatusOr<ExactEpsilon> ExactEpsilonAtMost(double epsilon) {
  if (!std::isfinite(epsilon) || !(epsilon >= std::ldexp(1.0, -kMaxEpsilonShift))) {
    return InvalidArgumentError("epsilon must be finite and >= 2^-61");
  }
  // The largest shift s <= 61 with floor(epsilon 2^s) < 2^32; ldexp and
  // floor are exact, so n / 2^s <= epsilon exactly.
  int shift = kMaxEpsilonShift;
  while (shift > -1 && std::floor(std::ldexp(epsilon, shift)) >
                           static_cast<double>(kMaxEpsilonNumerator)) {
    --shift;
  }
  if (shift < 0) return InvalidArgumentError("epsilon must be below 2^32");
  ExactEpsilon e{static_cast<std::uint64_t>(std::floor(std::ldexp(epsilon, shift))), shift};
  while (e.shift > 0 && e.numerator % 2 == 0) {
    e.numerator /= 2;
    --e.shift;
  }
  return e;
}

// Permute-and-flip (McKenna and Sheldon 2020, Alg. 1). Proof of exactness:
// their Thm. 1 shows the mechanism that accepts r with probability
// exp(epsilon (u_r - u*) / (2 Delta)), u* = max_r u_r computed on the data
// itself, in a uniformly random order, is epsilon-DP (and Prop. 1 that its
// expected utility is never below the exponential mechanism's). The proof
// holds for the law of the output, so it holds for this code exactly when
// (a) the order is exactly uniform: Fisher-Yates with SampleUniformBelow
// (rejection sampling, exactly uniform on [0, n)); and (b) each coin is
// exactly Bernoulli(exp(-epsilon (u* - u_r) / 2)): epsilon = n / 2^s and the
// integer gap g < 2^32 make the exponent n g / 2^(s+1) a ratio of 64-bit
// integers (n < 2^32, s + 1 <= 62), which SampleBernoulliExpNeg samples
// exactly (CKS 2020 Alg. 1; up to its overflow event, of probability below
// 1/2^28!, see discrete_samplers.h). No floating point touches the draw.
StatusOr<std::size_t> SamplePermuteAndFlip(std::span<const std::int64_t> utilities,
                                           const ExactEpsilon& epsilon, Generator& gen) {
  if (utilities.empty()) return InvalidArgumentError("no candidates");
  if (epsilon.numerator == 0 || epsilon.numerator > kMaxEpsilonNumerator ||
      epsilon.shift < 0 || epsilon.shift > kMaxEpsilonShift) {
    return InvalidArgumentError("SamplePermuteAndFlip: epsilon out of range");
  }
  const std::int64_t top = *std::max_element(utilities.begin(), utilities.end());
  std::vector<std::size_t> order(utilities.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::uint64_t denominator = std::uint64_t{1} << (epsilon.shift + 1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t j = i + SampleUniformBelow(gen, order.size() - i);
    std::swap(order[i], order[j]);
    const std::size_t r = order[i];
    // top >= u, so the unsigned difference is the true gap (< 2^64). A gap
    // above kMaxGap is clamped: that is permute-and-flip on
    // u' = max(u, u* - kMaxGap), again of sensitivity 1 with maximum u*.
    const std::uint64_t gap = std::min(
        static_cast<std::uint64_t>(top) - static_cast<std::uint64_t>(utilities[r]), kMaxGap);
    DPEM_ASSIGN_OR_RETURN(const bool accept,
                          SampleBernoulliExpNeg(gen, epsilon.numerator * gap, denominator));
    if (accept) return r;
  }
  // Unreachable: the candidate with utility `top` has gap 0 and is accepted.
  return InternalError("permute-and-flip accepted no candidate");
}

std::vector<double> BoundsBreakpoints(bool signed_axis) {
  std::vector<double> b;
  if (signed_axis) {
    for (int k = kBoundsMaxExponent; k >= kBoundsMinExponent; --k) b.push_back(-std::ldexp(1.0, k));
  }
  b.push_back(0.0);
  for (int k = kBoundsMinExponent; k <= kBoundsMaxExponent; ++k) b.push_back(std::ldexp(1.0, k));
  return b;
}

StatusOr<double> PrivateQuantile(std::span<const double> sorted, double q,
                                 std::span<const double> breakpoints, bool include_lower,
                                 double epsilon, int refinement_points,
                                 const std::string& label, Generator& gen,
                                 PrivacyLedger& ledger, double coarse_share,
                                 RefinementGrid grid) {
  return internal::PrivateTableQuantile(sorted, static_cast<std::int64_t>(sorted.size()), nullptr,
                                        {.q = q,
                                         .breakpoints = breakpoints,
                                         .include_lower = include_lower,
                                         .epsilon = epsilon,
                                         .refinement_points = refinement_points,
                                         .label = label,
                                         .coarse_share = coarse_share,
                                         .grid = grid},
                                        gen, ledger);
}

namespace internal {

StatusOr<double> PrivateTableQuantile(std::span<const double> sorted, std::int64_t n,
                                      const Collective* c, const QuantileQuery& query,
                                      Generator& gen, PrivacyLedger& ledger) {
  const auto& [q, breakpoints, include_lower, epsilon, refinement_points, label, coarse_share,
               grid_kind] = query;
  if (n < 1 || breakpoints.size() < 2 || !(q > 0.0 && q < 1.0)) {
    return InvalidArgumentError("PrivateQuantile: empty data, < 2 breakpoints or q not in (0, 1)");
  }
  if (!(coarse_share > 0.0 && coarse_share < 1.0)) {
    return InvalidArgumentError("PrivateQuantile: coarse_share must be in (0, 1)");
  }
  // Public integer target rank: q and N are public.
  const auto t = static_cast<std::int64_t>(std::floor(q * static_cast<double>(n) + 0.5));
  DPEM_ASSIGN_OR_RETURN(const ExactEpsilon e_coarse, ExactEpsilonAtMost(epsilon * coarse_share));
  DPEM_ASSIGN_OR_RETURN(const ExactEpsilon e_fine,
                        ExactEpsilonAtMost(epsilon * (1.0 - coarse_share)));
  DPEM_ASSIGN_OR_RETURN(const std::vector<std::int64_t> below_breakpoints,
                        TableCountsBelow(sorted, breakpoints, c));
  const std::vector<std::int64_t> coarse = IntervalUtilities(below_breakpoints, t);
  DPEM_ASSIGN_OR_RETURN(const std::size_t j, SamplePermuteAndFlip(coarse, e_coarse, gen));
  DPEM_RETURN_IF_ERROR(RecordPermuteAndFlip(e_coarse.value(), label + " / coarse bracket", ledger));
  const double a = breakpoints[j], b = breakpoints[j + 1];
  const std::vector<double> grid = grid_kind == RefinementGrid::kLog2 && a > 0.0
                                       ? Log2Grid(a, refinement_points)
                                       : LinearGrid(a, b, refinement_points, include_lower);
  DPEM_ASSIGN_OR_RETURN(const std::vector<std::int64_t> below_grid,
                        TableCountsBelow(sorted, grid, c));
  const std::vector<std::int64_t> fine = RankUtilitiesOfCounts(below_grid, t);
  DPEM_ASSIGN_OR_RETURN(const std::size_t i, SamplePermuteAndFlip(fine, e_fine, gen));
  DPEM_RETURN_IF_ERROR(RecordPermuteAndFlip(e_fine.value(), label + " / refinement", ledger));
  return grid[i];
}

}  // namespace internal

std::string MostOutsideWarning(const PrivateBounds& bounds) {
  if (!(bounds.outside_fraction_noisy > kOutsideFractionWarning)) return "";
  return "the released (noisy) fraction of records outside the released ball is " +
         internal::FormatShortest(bounds.outside_fraction_noisy) +
         ": most records will be clipped";
}

StatusOr<PrivateBounds> ReleasePrivateBounds(const RowSource& x,
                                             const PrivateBoundsOptions& options,
                                             Generator& gen) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (x.rows() < 1 || x.cols() < 1) return InvalidArgumentError("the data is empty");
  PrivateBounds out;
  out.seed = gen.seed();
  internal::AppendSeededGeneratorVoidReason(gen, true, out.void_reasons);
  out.guarantee_void = !out.void_reasons.empty();
  Columns cols = ReadColumns(x);
  const double e_median = options.epsilon * kBoundsCentreShare / static_cast<double>(x.cols());
  const std::vector<double> signed_grid = BoundsBreakpoints(true);
  out.domain.center.resize(x.cols());
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    std::vector<double>& v = cols.values[j];
    std::sort(v.begin(), v.end());
    DPEM_ASSIGN_OR_RETURN(out.domain.center(j),
                          internal::PrivateTableQuantile(
                              v, x.rows(), x.collective(),
                              {.q = 0.5,
                               .breakpoints = signed_grid,
                               .include_lower = true,
                               .epsilon = e_median,
                               .refinement_points = options.refinement_points,
                               .label = "bounds / centre[" + std::to_string(j) + "] median",
                               .coarse_share = kQuantileCoarseShare,
                               .grid = RefinementGrid::kLinear},
                              gen, out.ledger));
  }
  // Columns are sorted independently now; recover the rows from the source.
  cols = ReadColumns(x);
  const std::vector<double> norms = SortedDistances(cols, out.domain.center);
  const std::vector<double> radius_grid = BoundsBreakpoints(false);
  DPEM_ASSIGN_OR_RETURN(const double radius_quantile,
                        internal::PrivateTableQuantile(
                            norms, x.rows(), x.collective(),
                            {.q = options.quantile,
                             .breakpoints = radius_grid,
                             .include_lower = false,
                             .epsilon = options.epsilon * kBoundsRadiusShare,
                             .refinement_points = kRadiusRefinementPoints,
                             .label = "bounds / radius quantile",
                             .coarse_share = kRadiusCoarseShare,
                             .grid = RefinementGrid::kLog2},
                            gen, out.ledger));
  out.domain.data_norm = options.radius_inflation * radius_quantile;
  DPEM_RETURN_IF_ERROR(ReleaseOutsideCount(norms, out.domain.data_norm,
                                           options.epsilon * kBoundsOutsideShare, x, gen, out));
  out.epsilon = LedgerPureEpsilon(out.ledger);
  return out;
}

StatusOr<ComposedGuarantee> ComposeBoundsWithFit(const PrivateBounds& bounds,
                                                 const PrivacyLedger& fit_ledger,
                                                 double fit_epsilon, double fit_delta,
                                                 AccountantKind accountant) {
  ComposedGuarantee g;
  g.ledger = bounds.ledger;
  for (const Release& r : fit_ledger.releases()) DPEM_RETURN_IF_ERROR(g.ledger.Record(r));
  g.epsilon = internal::RoundUpConservatively(bounds.epsilon + fit_epsilon);
  StatusOr<double> whole = ComputeEpsilon(g.ledger, fit_delta, accountant);
  if (whole.ok()) g.epsilon = std::min(g.epsilon, *whole);
  return g;
}

}  // namespace dpem
