#include "dpem/data/private_bounds.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dpem/mechanisms/additive_noise.h"
#include "internal/guarantee.h"
#include "internal/numeric.h"

namespace dpem {
namespace {

constexpr Eigen::Index kReadBlockRows = 4096;
constexpr int kMaxRefinementPoints = 1 << 20;

// #{x in sorted : x < v}.
double CountBelow(std::span<const double> sorted, double v) {
  return static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), v) -
                             sorted.begin());
}

// Records one exponential-mechanism release at pure epsilon e, as a discrete
// Laplace release of multiplier 1/e: every accountant's treatment of
// discrete Laplace is its bound for an arbitrary pure (1/z)-DP mechanism
// (docs/accounting.md, "Discrete noise"), which the exponential mechanism is.
Status RecordExponentialMechanism(double e, const std::string& label, PrivacyLedger& ledger) {
  return ledger.Record(Release{MechanismKind::kLaplace, 1.0, 1.0 / e,
                               label + " (exponential mechanism, pure " +
                                   std::to_string(e) + "-DP)",
                               NoiseSampling::kDiscrete});
}

// Coarse utilities: interval [a, b) gets -max(0, #{x<a} - t, t - #{x<b}).
// Each count moves by at most 1 under replace-one, so the utility does too.
std::vector<double> IntervalUtilities(std::span<const double> sorted, double t,
                                      std::span<const double> breakpoints) {
  std::vector<double> u(breakpoints.size() - 1);
  for (std::size_t j = 0; j + 1 < breakpoints.size(); ++j) {
    const double below_a = CountBelow(sorted, breakpoints[j]);
    const double below_b = CountBelow(sorted, breakpoints[j + 1]);
    u[j] = -std::max({0.0, below_a - t, t - below_b});
  }
  return u;
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

Columns ReadColumns(const RowSource& x) {
  Columns c;
  c.values.assign(static_cast<std::size_t>(x.cols()), {});
  DataMatrix scratch;
  for (Eigen::Index start = 0; start < x.rows(); start += kReadBlockRows) {
    const Eigen::Index count = std::min(kReadBlockRows, x.rows() - start);
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
Status ReleaseOutsideCount(std::span<const double> sorted, double r, double e,
                           Generator& gen, PrivateBounds& out) {
  const double n = static_cast<double>(sorted.size());
  const double inside = static_cast<double>(
      std::upper_bound(sorted.begin(), sorted.end(), r) - sorted.begin());
  Eigen::VectorXd count(1);
  count(0) = n - inside;
  NoiseSpec spec{MechanismKind::kLaplace, 1.0, 1.0 / e,
                 "bounds / records outside the ball", NoiseSampling::kDiscrete};
  DPEM_RETURN_IF_ERROR(ReleaseVector(count, spec, gen, out.ledger));
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
  if (refinement_points < 2 || refinement_points > kMaxRefinementPoints) {
    return InvalidArgumentError("bounds refinement_points must be in [2, 2^20]");
  }
  return OkStatus();
}

std::vector<double> RankUtilities(std::span<const double> sorted,
                                  std::span<const double> candidates, double t) {
  std::vector<double> u(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    u[i] = -std::abs(CountBelow(sorted, candidates[i]) - t);
  }
  return u;
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

StatusOr<std::size_t> SampleExponentialMechanism(std::span<const double> utilities,
                                                 double epsilon, double sensitivity,
                                                 Generator& gen) {
  if (utilities.empty()) return InvalidArgumentError("no candidates");
  if (!(epsilon > 0.0 && std::isfinite(epsilon) && sensitivity > 0.0 &&
        std::isfinite(sensitivity))) {
    return InvalidArgumentError("epsilon and sensitivity must be finite and > 0");
  }
  std::vector<double> log_w(utilities.size());
  for (std::size_t j = 0; j < utilities.size(); ++j) {
    if (!std::isfinite(utilities[j])) return InvalidArgumentError("non-finite utility");
    log_w[j] = epsilon * utilities[j] / (2.0 * sensitivity);
  }
  // Weights relative to the largest, so the largest is 1 and none overflows.
  const double top = *std::max_element(log_w.begin(), log_w.end());
  double total = 0.0;
  for (double& w : log_w) total += (w = std::exp(w - top));
  const double target = gen.UniformOpen01() * total;
  double cumulative = 0.0;
  for (std::size_t j = 0; j < log_w.size(); ++j) {
    cumulative += log_w[j];
    if (target < cumulative) return j;
  }
  // Rounding of the cumulative sum: the last candidate of positive weight.
  std::size_t last = log_w.size() - 1;
  while (last > 0 && log_w[last] == 0.0) --last;
  return last;
}

StatusOr<double> PrivateQuantile(std::span<const double> sorted, double q,
                                 std::span<const double> breakpoints, bool include_lower,
                                 double epsilon, int refinement_points,
                                 const std::string& label, Generator& gen,
                                 PrivacyLedger& ledger) {
  if (sorted.empty() || breakpoints.size() < 2 || !(q > 0.0 && q < 1.0)) {
    return InvalidArgumentError("PrivateQuantile: empty data, < 2 breakpoints or q not in (0, 1)");
  }
  const double t = q * static_cast<double>(sorted.size());
  const double e_coarse = epsilon * kQuantileCoarseShare;
  const double e_fine = epsilon - e_coarse;
  const std::vector<double> coarse = IntervalUtilities(sorted, t, breakpoints);
  DPEM_ASSIGN_OR_RETURN(const std::size_t j, SampleExponentialMechanism(coarse, e_coarse, 1.0, gen));
  DPEM_RETURN_IF_ERROR(RecordExponentialMechanism(e_coarse, label + " / coarse bracket", ledger));
  const std::vector<double> grid =
      LinearGrid(breakpoints[j], breakpoints[j + 1], refinement_points, include_lower);
  const std::vector<double> fine = RankUtilities(sorted, grid, t);
  DPEM_ASSIGN_OR_RETURN(const std::size_t i, SampleExponentialMechanism(fine, e_fine, 1.0, gen));
  DPEM_RETURN_IF_ERROR(RecordExponentialMechanism(e_fine, label + " / refinement", ledger));
  return grid[i];
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
                          PrivateQuantile(v, 0.5, signed_grid, true, e_median,
                                          options.refinement_points,
                                          "bounds / centre[" + std::to_string(j) + "] median",
                                          gen, out.ledger));
  }
  // Columns are sorted independently now; recover the rows from the source.
  cols = ReadColumns(x);
  const std::vector<double> norms = SortedDistances(cols, out.domain.center);
  DPEM_ASSIGN_OR_RETURN(out.domain.data_norm,
                        PrivateQuantile(norms, options.quantile, BoundsBreakpoints(false), false,
                                        options.epsilon * kBoundsRadiusShare,
                                        options.refinement_points,
                                        "bounds / radius quantile", gen, out.ledger));
  DPEM_RETURN_IF_ERROR(ReleaseOutsideCount(norms, out.domain.data_norm,
                                           options.epsilon * kBoundsOutsideShare, gen, out));
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
