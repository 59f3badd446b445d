// A public domain released from the data under pure epsilon-DP, for users
// who know no centre and radius of their data (docs/bounds.md).
//
// ReleasePrivateBounds releases a centre c (one private median per
// coordinate) and a radius R (a private high quantile of ||x - c||), each by
// the exponential mechanism over a data-independent grid (McSherry and
// Talwar 2007, Thm 6), and a noisy count of the records outside the released
// ball, so that the user learns from released values when most records would
// be clipped. The releases compose by basic composition (Dwork and Roth 2014,
// Thm 3.16): the result is pure epsilon-DP under replace-one neighbours (N
// public). Using the released domain in a later fit of the same data is
// post-processing of the bounds; the fit's own cost adds (ComposeBoundsWithFit).
//
// The exponential-mechanism releases are recorded in the ledger as DISCRETE
// Laplace releases with sensitivity 1 and noise scale 1/e (noise multiplier
// 1/e): every accountant treats a discrete Laplace release with multiplier z
// as an arbitrary pure (1/z)-DP mechanism (docs/accounting.md, "Discrete
// noise": PureDpRdp, (1/z, 0), (1/z)^2/2 zCDP), and those bounds hold for
// every pure (1/z)-DP mechanism, the exponential mechanism at epsilon e among
// them (KOV 2015 Thm 2.1; Bun and Steinke 2016 Prop 1.4).
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
// "centre 1/2, radius 3/8, outside count 1/8": epsilon/2 for the centre,
// split equally over the d coordinates' medians; 3 epsilon/8 for the radius
// quantile; epsilon/8 for the noisy outside count. Each quantile spends half
// its share on the coarse step and half on the refinement (kCoarseShare).
inline constexpr double kBoundsCentreShare = 0.5;
inline constexpr double kBoundsRadiusShare = 0.375;
inline constexpr double kBoundsOutsideShare = 0.125;
inline constexpr double kQuantileCoarseShare = 0.5;
// Every release of ReleasePrivateBounds has a label starting with this; a
// model file's ledger lists them before the fit's own releases.
inline constexpr const char* kBoundsLabelPrefix = "bounds / ";

struct PrivateBoundsOptions {
  // Total pure epsilon of the bounds. No default (NaN); finite and > 0.
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  // The quantile of ||x - c|| released as R, in (0, 1). Default 0.95: about
  // 5% of the records are clipped when the mechanism is accurate.
  double quantile = 0.95;
  // Points of the linear grid of the refinement step inside the chosen
  // coarse bracket, in [2, 2^20]. Default 4096.
  int refinement_points = 4096;

  // InvalidArgument for a missing or non-positive epsilon, a quantile
  // outside (0, 1) or a grid size outside [2, 2^20].
  Status Validate() const;
};

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

// Exponential mechanism (McSherry and Talwar 2007): draws index j with
// probability proportional to exp(epsilon u_j / (2 sensitivity)), from
// log-space weights and one Generator::UniformOpen01() (inverse CDF).
// Floating-point caveat: the draw resolves probabilities only to about
// 2^-53 of the total weight, so a candidate whose ideal probability is far
// below that is never drawn; the realised mechanism is within total
// variation M 2^-52 of the ideal one (M candidates). Requires utilities
// non-empty and finite, epsilon and sensitivity finite and > 0.
StatusOr<std::size_t> SampleExponentialMechanism(std::span<const double> utilities,
                                                 double epsilon, double sensitivity,
                                                 Generator& gen);

// The epsilon-DP quantile of `sorted` (ascending, N >= 1 values) in two
// exponential-mechanism steps, each recorded in `ledger` as described in the
// file comment: (1) over the intervals between consecutive `breakpoints`
// (ascending, >= 2), utility -max(0, #{x < a} - qN, qN - #{x < b}) for
// [a, b], at epsilon * kQuantileCoarseShare; (2) over the linear grid
// a + (b - a) j / M, j = (include_lower ? 0 : 1) .. M, utility
// -|#{x < v} - qN|, at the rest. Both utilities have sensitivity 1 under
// replace-one. `label` prefixes the ledger labels.
StatusOr<double> PrivateQuantile(std::span<const double> sorted, double q,
                                 std::span<const double> breakpoints, bool include_lower,
                                 double epsilon, int refinement_points,
                                 const std::string& label, Generator& gen,
                                 PrivacyLedger& ledger);

// The refinement step's utilities: -|#{x in sorted : x < v} - t| for each
// candidate v (sensitivity 1 under replace-one: one count moves by <= 1).
std::vector<double> RankUtilities(std::span<const double> sorted,
                                  std::span<const double> candidates, double t);

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
