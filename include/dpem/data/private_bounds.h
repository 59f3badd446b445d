// A public domain released from the data under pure epsilon-DP, for users
// who know no centre and radius of their data (docs/bounds.md).
//
// ReleasePrivateBounds releases a centre c (one private median per
// coordinate) and a radius R (a private quantile of ||x - c||), each by
// permute-and-flip (McKenna and Sheldon 2020, Thm. 1: pure epsilon-DP like
// the exponential mechanism, never worse in expected utility) over a
// data-independent grid, sampled EXACTLY (integer utilities, a dyadic
// epsilon, CKS 2020 Bernoulli(exp(-g)) coins from the Generator's integers),
// and a noisy count of the records outside the released ball, so that the
// user learns from released values when most records would be clipped. The
// releases compose by basic composition (Dwork and Roth 2014, Thm 3.16): the
// result is pure epsilon-DP under replace-one neighbours (N public). Using
// the released domain in a later fit of the same data is post-processing of
// the bounds; the fit's own cost adds (ComposeBoundsWithFit).
//
// Each permute-and-flip step's epsilon is rounded DOWN to a dyadic rational
// e (ExactEpsilonAtMost) and recorded in the ledger as a DISCRETE Laplace
// release with sensitivity 1 and noise multiplier z, 1/z >= e: every
// accountant treats a discrete Laplace release with multiplier z as an
// arbitrary pure (1/z)-DP mechanism (docs/accounting.md, "Discrete noise":
// PureDpRdp, (1/z, 0), (1/z)^2/2 zCDP), and those bounds hold for every pure
// (1/z)-DP mechanism, permute-and-flip at e included (KOV 2015 Thm 2.1; Bun
// and Steinke 2016 Prop 1.4).
//
// Thread safety: the functions are reentrant; they use only their arguments.
#ifndef DPEM_DATA_PRIVATE_BOUNDS_H_
#define DPEM_DATA_PRIVATE_BOUNDS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/domain.h"
#include "dpem/data/row_source.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// The candidate grid of the first (coarse) step: the breakpoints 0 and
// +-2^k for k in [kBoundsMinExponent, kBoundsMaxExponent], fixed before
// looking at the data.
inline constexpr int kBoundsMinExponent = -40;
inline constexpr int kBoundsMaxExponent = 40;

// The budget split of ReleasePrivateBounds, the named rule
// "centre 1/2, radius 7/16, outside count 1/16": epsilon/2 for the centre,
// split equally over the d coordinates' medians; 7 epsilon/16 for the radius
// quantile; epsilon/16 for the noisy outside count. Each median spends half
// its share on the coarse step and half on the refinement
// (kQuantileCoarseShare); the radius spends 3/4 on the coarse octave and 1/4
// on a log2 grid of kRadiusRefinementPoints points inside it (a radius's
// error is relative: the octave matters most).
inline constexpr double kBoundsCentreShare = 0.5;
inline constexpr double kBoundsRadiusShare = 0.4375;
inline constexpr double kBoundsOutsideShare = 0.0625;
inline constexpr double kQuantileCoarseShare = 0.5;
inline constexpr double kRadiusCoarseShare = 0.75;
inline constexpr int kRadiusRefinementPoints = 16;
// Every release of ReleasePrivateBounds has a label starting with this; a
// model file's ledger lists them before the fit's own releases.
inline constexpr const char* kBoundsLabelPrefix = "bounds / ";

struct PrivateBoundsOptions {
  // Total pure epsilon of the bounds. No default (NaN); finite and > 0.
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  // The quantile q of ||x - c|| that is released privately, in (0, 1); R is
  // radius_inflation times it. Default 0.9: overshooting the q-quantile
  // costs rank error up to (1 - q) N, so a lower q makes far too large radii
  // much less likely at small epsilon (docs/bounds.md).
  double quantile = 0.9;
  // Public factor >= 1 applied to the released quantile (post-processing).
  // Default 1.5 (for a 2-D Gaussian the 0.9-quantile of the distance times
  // 1.5 is about the 0.996-quantile).
  double radius_inflation = 1.5;
  // Points of the linear grid of the refinement step inside the chosen
  // coarse bracket, in [2, 2^20]. Default 4096.
  int refinement_points = 4096;

  // InvalidArgument for a missing or non-positive epsilon, a quantile
  // outside (0, 1), a radius_inflation not finite or < 1, or a grid size
  // outside [2, 2^20].
  Status Validate() const;
};

// A released outside fraction above this is worth a warning: most records
// will be clipped (MostOutsideWarning).
inline constexpr double kOutsideFractionWarning = 0.5;

// What ReleasePrivateBounds released.
struct PrivateBounds {
  // Released centre (d entries) and radius R > 0; from_data stays false.
  DataDomain domain;
  // Noisy count of records with ||x - c|| > R (discrete Laplace), clamped
  // to [0, N], and that count / N. Released values: safe to publish.
  double outside_count_noisy = 0.0;
  double outside_fraction_noisy = 0.0;
  // Pure epsilon of `ledger` by basic composition (the sum of 1/z over its
  // releases); <= options.epsilon up to the discrete grid's charge.
  double epsilon = 0.0;
  PrivacyLedger ledger;
  // A seeded generator voids the guarantee (docs/privacy.md, section 1).
  bool guarantee_void = false;
  std::vector<std::string> void_reasons;
  std::optional<std::uint64_t> seed;
};

// Releases a domain for `x` (N >= 1 records, d >= 1) under pure
// options.epsilon-DP (see the file comment). Nothing after reading the data
// fails or branches on it except through released values. InvalidArgument
// if the options fail Validate() or x is empty.
StatusOr<PrivateBounds> ReleasePrivateBounds(const RowSource& x,
                                             const PrivateBoundsOptions& options,
                                             Generator& gen);

// The warning (without "warning: ") that `bounds` clip most records, when
// their released outside fraction exceeds kOutsideFractionWarning; empty
// otherwise. Post-processing of released values.
std::string MostOutsideWarning(const PrivateBounds& bounds);

// An epsilon held exactly as a dyadic rational numerator / 2^shift, with
// numerator < 2^32 and shift <= 61, so that every exponent of
// SamplePermuteAndFlip is an exact ratio of 64-bit integers.
struct ExactEpsilon {
  std::uint64_t numerator = 0;
  int shift = 0;
  // numerator * 2^-shift: exact in a double (numerator < 2^32).
  double value() const;
};

// The largest dyadic epsilon' = n / 2^s <= epsilon with n < 2^32, s <= 61
// (epsilon' = epsilon whenever epsilon is such a rational, e.g. 0.25;
// otherwise epsilon' >= epsilon (1 - 2^-31)). Rounding DOWN keeps the
// ledger, which records epsilon', exact. InvalidArgument for epsilon not
// finite or below 2^-61.
StatusOr<ExactEpsilon> ExactEpsilonAtMost(double epsilon);

// Permute-and-flip (McKenna and Sheldon 2020, Alg. 1), sensitivity 1: visits
// the candidates in a uniformly random order (Fisher-Yates with
// SampleUniformBelow, exactly uniform) and returns the first r accepted, r
// accepted with probability exp(-epsilon (u_max - u_r) / 2), u_max the
// largest utility, by SampleBernoulliExpNeg with the exact exponent
// numerator (u_max - u_r) / 2^(shift + 1). The candidate with u_max is
// accepted surely, so it ends within M steps. Exactly epsilon-DP when every
// utility has sensitivity 1 (McKenna and Sheldon 2020, Thm. 1; a gap
// u_max - u_r above 2^32 - 1 is clamped to it, which is permute-and-flip on
// max(u_r, u_max - 2^32 + 1), again of sensitivity 1). Requires utilities
// non-empty and epsilon from ExactEpsilonAtMost.
StatusOr<std::size_t> SamplePermuteAndFlip(std::span<const std::int64_t> utilities,
                                           const ExactEpsilon& epsilon, Generator& gen);

// How PrivateQuantile refines the chosen bracket [a, b].
enum class RefinementGrid {
  // a + (b - a) j / M, j = (include_lower ? 0 : 1) .. M.
  kLinear,
  // a 2^(j/M), j = 1 .. M when a > 0 (b = 2a for octave breakpoints); the
  // linear grid when a = 0.
  kLog2,
};

// The epsilon-DP quantile of `sorted` (ascending, N >= 1 values) in two
// permute-and-flip steps with the integer target rank t = floor(qN + 1/2)
// (public), each recorded in `ledger` as described in the file comment:
// (1) over the intervals between consecutive `breakpoints` (ascending,
// >= 2), utility -max(0, #{x < a} - t, t - #{x < b}) for [a, b], at
// epsilon * coarse_share; (2) over the refinement grid of M =
// refinement_points candidates in the chosen bracket, utility
// -|#{x < v} - t|, at the rest. Both utilities are integers of sensitivity 1
// under replace-one. Each step's epsilon is rounded down to an ExactEpsilon
// and the ledger records the rounded value. `label` prefixes the labels.
StatusOr<double> PrivateQuantile(std::span<const double> sorted, double q,
                                 std::span<const double> breakpoints, bool include_lower,
                                 double epsilon, int refinement_points,
                                 const std::string& label, Generator& gen,
                                 PrivacyLedger& ledger,
                                 double coarse_share = kQuantileCoarseShare,
                                 RefinementGrid grid = RefinementGrid::kLinear);

// The refinement step's utilities: -|#{x in sorted : x < v} - t| for each
// candidate v (sensitivity 1 under replace-one: one count moves by <= 1).
std::vector<std::int64_t> RankUtilities(std::span<const double> sorted,
                                        std::span<const double> candidates, std::int64_t t);

namespace internal {
// A PrivateQuantile query: its arguments besides the data, the generator and
// the ledger.
struct QuantileQuery {
  double q = 0.5;
  std::span<const double> breakpoints;
  bool include_lower = true;
  double epsilon = 0.0;
  int refinement_points = 0;
  std::string label;
  double coarse_share = kQuantileCoarseShare;
  RefinementGrid grid = RefinementGrid::kLinear;
};

// PrivateQuantile of a table of `n` values of which this process holds the
// ascending `sorted` (all n, or on a rank of a distributed fit its shard's,
// with `c` its ranks; null for one process): the counts it needs are summed
// over the ranks, so every rank draws the same result from the shared
// generator stream.
StatusOr<double> PrivateTableQuantile(std::span<const double> sorted, std::int64_t n,
                                      const Collective* c, const QuantileQuery& query,
                                      Generator& gen, PrivacyLedger& ledger);
}  // namespace internal

// The coarse breakpoints: signed (-2^40 .. -2^-40, 0, 2^-40 .. 2^40) for
// medians, or non-negative (0, 2^-40 .. 2^40) for norms.
std::vector<double> BoundsBreakpoints(bool signed_axis);

// A fit's guarantee composed with the bounds it used, by the named rule
// "basic composition of the bounds" (Dwork and Roth 2014, Thm 3.16): the
// bounds cost bounds.epsilon (pure) and the fit fit_epsilon at fit_delta, so
// the whole costs their sum at fit_delta. The ledger is the bounds'
// releases followed by the fit's; epsilon is the smaller of that sum and
// the accountant's epsilon for the whole ledger (both are valid bounds).
struct ComposedGuarantee {
  PrivacyLedger ledger;
  double epsilon = 0.0;
};
StatusOr<ComposedGuarantee> ComposeBoundsWithFit(const PrivateBounds& bounds,
                                                 const PrivacyLedger& fit_ledger,
                                                 double fit_epsilon, double fit_delta,
                                                 AccountantKind accountant);

}  // namespace dpem

#endif  // DPEM_DATA_PRIVATE_BOUNDS_H_
