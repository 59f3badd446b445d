// Calibration: from a target (epsilon, delta) for a whole iterative fit to
// the noise of each release.
//
// An EM fit releases the same pattern of noisy statistics in each of its J
// iterations (park2017 Sec. 5: in scenario GGG the mixing weights, K means and
// K covariances all by Gaussian mechanisms; in LLG the weights and means by
// Laplace and the covariances by Gaussian). Following park2017, the noise is
// parametrised by one per-release budget epsilon_i: a Laplace release gets
// scale b = Delta_1 / epsilon_i and a Gaussian one sigma = c Delta_2 /
// epsilon_i with c = sqrt(2 ln(1.25 / delta_i)), the classical calibration at
// a fixed per-release delta_i (park2017 Sec. 5; Dwork-Roth Thm. 3.22). Each
// release kind may scale its noise by a relative weight. Calibration finds the
// largest epsilon_i whose J-fold pattern the chosen accountant certifies within
// the target, by monotone bracketing and bisection, and re-accounts the result:
// the reported epsilon is what the accountant computed for the returned noise,
// and never exceeds the target.
//
// The noise actually added is what matters for privacy; epsilon_i and delta_i
// are only a parametrisation, and the accountant (not the classical formula,
// which is valid only for epsilon_i < 1) certifies the total.
//
// Thread safety: pure functions of their arguments.
#ifndef DPEM_ACCOUNTING_CALIBRATION_H_
#define DPEM_ACCOUNTING_CALIBRATION_H_

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/status.h"

namespace dpem {

// One kind of release in an iteration: `count_per_iteration` releases by
// `mechanism`, each with noise multiplier noise_weight * (base multiplier of
// the mechanism at epsilon_i).
struct ReleaseSpec {
  MechanismKind mechanism = MechanismKind::kGaussian;
  int count_per_iteration = 1;
  double noise_weight = 1.0;
  std::string label;  // e.g. "weights", "means", "covariances".
  // How the noise will be sampled; the accountants treat discrete noise
  // conservatively (ledger.h), so calibrate with what the releases will use.
  NoiseSampling sampling = NoiseSampling::kDiscrete;
};

// The releases of one iteration.
struct ReleasePattern {
  std::string name;  // "GGG", "LLG" or a caller's name.
  std::vector<ReleaseSpec> releases;
};

// park2017 scenario GGG for K components: weights (1), means (K) and
// covariances (K) by Gaussian mechanisms. Requires components >= 1.
StatusOr<ReleasePattern> GggPattern(int components);
// park2017 scenario LLG: weights (1) and means (K) by Laplace, covariances (K)
// by Gaussian. Requires components >= 1.
StatusOr<ReleasePattern> LlgPattern(int components);
// "GGG" or "LLG" (case-sensitive) for K components; InvalidArgument otherwise.
StatusOr<ReleasePattern> ScenarioPattern(std::string_view name, int components);

// The per-release delta of park2017's Fig. 2 experiments, used by default to
// express Gaussian noise as a per-release budget (see above).
inline constexpr double kDefaultPerReleaseDelta = 1e-6;

struct CalibrationOptions {
  // Target total privacy. No defaults: Validate() refuses NaN.
  double epsilon = std::numeric_limits<double>::quiet_NaN();  // > 0, finite.
  double delta = std::numeric_limits<double>::quiet_NaN();    // In (0, 1).
  // Number of EM iterations J (>= 1). No default.
  int iterations = 0;
  // The releases of one iteration (non-empty, counts >= 1, weights > 0).
  ReleasePattern pattern;
  // Releases made once, before the first iteration (a private start); empty
  // for none. Their noise weights are relative to one another: the start as a
  // whole takes `start_share` of the fit's zCDP cost (StartNoiseMultipliers).
  ReleasePattern start;
  // The start's share of the fit's budget, in (0, 1) when `start` has
  // releases (ignored otherwise). No default here: each model names its rule.
  double start_share = 0.0;
  // A budget schedule: the relative zCDP cost of each iteration. Empty (the
  // default): J equal iterations. Else J finite weights > 0, and iteration j
  // releases `pattern` with every noise multiplier divided by sqrt(w_j)
  // (IterationNoiseMultipliers), a zCDP cost w_j times that of a unit-weight
  // iteration (rho(z) = 1 / (2 z^2)). Calibration scales all iterations
  // together; the accountant certifies the ledger as recorded. Each model
  // names its rule.
  std::vector<double> iteration_weights;
  AccountantKind accountant = kDefaultAccountant;
  // delta_i in the parametrisation of Gaussian noise; in (0, 1).
  double per_release_delta = kDefaultPerReleaseDelta;
  // Bisection stops when the returned epsilon_i is within this relative
  // distance of the largest admissible one; the re-accounted epsilon is then
  // within about this much of the target. In (0, 0.1].
  double relative_tolerance = 1e-4;

  // OK, or InvalidArgument naming the first invalid field.
  Status Validate() const;
};

struct CalibrationResult {
  // The per-release budget epsilon_i.
  double per_release_epsilon = 0.0;
  // Noise multiplier (noise scale / sensitivity) of each ReleaseSpec, in the
  // order of pattern.releases.
  std::vector<double> noise_multipliers;
  // Noise multiplier of each ReleaseSpec of options.start, in its order;
  // empty without a start.
  std::vector<double> start_noise_multipliers;
  // The iterations' schedule, as in the options (empty: equal).
  std::vector<double> iteration_weights;
  // The start's releases (labelled "start / <label>") then the J iterations'
  // releases, with unit sensitivity, as accounted.
  PrivacyLedger ledger;
  // What the accountant certifies for `ledger`: epsilon <= target epsilon at
  // the target delta.
  double epsilon = 0.0;
  double delta = 0.0;
};

// The noise multipliers of `pattern` at per-release budget epsilon_i
// (see the file comment). Requires epsilon_i > 0 and 0 < per_release_delta < 1.
StatusOr<std::vector<double>> PatternNoiseMultipliers(const ReleasePattern& pattern,
                                                      double per_release_epsilon,
                                                      double per_release_delta);

// The noise multipliers of iteration j (1-based) of a schedule
// `iteration_weights` (CalibrationOptions; empty: equal): `multipliers`, the
// unit-weight iteration's, divided by sqrt(w_j). Requires 1 <= j <= J for a
// non-empty schedule.
std::vector<double> IterationNoiseMultipliers(const std::vector<double>& multipliers,
                                              const std::vector<double>& iteration_weights,
                                              int j);

// The ledger of `iterations` repetitions of `pattern` with the given noise
// multipliers (those of a unit-weight iteration, divided by sqrt(w_j) in
// iteration j of a non-empty schedule `iteration_weights`) and unit
// sensitivity, labelled "iteration j / <label>".
StatusOr<PrivacyLedger> PatternLedger(const ReleasePattern& pattern, int iterations,
                                      const std::vector<double>& noise_multipliers,
                                      const std::vector<double>& iteration_weights = {});

// The noise multipliers of the releases made once, `start`, given one
// iteration's `pattern` and its multipliers, so that the start takes `share`
// of the fit's zCDP cost (the named split rule of a private start):
//   sum_start count / (2 z_s^2) = share / (1 - share) * W * sum_pattern count / (2 z^2),
// with W = J, or the sum of the weights of a non-empty schedule
// `iteration_weights` (CalibrationOptions).
// rho(z) = 1 / (2 z^2) is the zCDP cost of a Gaussian release with noise
// multiplier z (Bun and Steinke 2016, Prop. 1.6) and a bound on that of a
// Laplace release with multiplier z, which is pure (1/z)-DP (Prop. 1.4). The
// rule only splits: the accountant certifies the whole ledger whatever it is.
// The start's noise weights keep their ratios. Requires 0 < share < 1,
// iterations >= 1 and valid patterns with one multiplier per release kind.
StatusOr<std::vector<double>> StartNoiseMultipliers(const ReleasePattern& start, double share,
                                                    const ReleasePattern& pattern,
                                                    int iterations,
                                                    const std::vector<double>& multipliers,
                                                    const std::vector<double>& iteration_weights = {});

// Finds the largest per-release budget that meets the target; see above.
StatusOr<CalibrationResult> Calibrate(const CalibrationOptions& options);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_CALIBRATION_H_
