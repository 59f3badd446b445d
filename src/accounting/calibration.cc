#include "dpem/accounting/calibration.h"

#include <cmath>
#include <numeric>
#include <string>

#include "dpem/accounting/analytic_gaussian.h"
#include "internal/numeric.h"

namespace dpem {
namespace {

ReleasePattern MakePattern(std::string name, MechanismKind weights_and_means,
                           int components) {
  ReleasePattern p;
  p.name = std::move(name);
  p.releases = {
      {weights_and_means, 1, 1.0, "weights"},
      {weights_and_means, components, 1.0, "means"},
      {MechanismKind::kGaussian, components, 1.0, "covariances"},
  };
  return p;
}

Status ValidateComponents(int components) {
  if (components < 1) return InvalidArgumentError("components K must be >= 1");
  return OkStatus();
}

Status ValidatePattern(const ReleasePattern& pattern) {
  if (pattern.releases.empty()) {
    return InvalidArgumentError("release pattern '" + pattern.name + "' is empty");
  }
  for (const ReleaseSpec& spec : pattern.releases) {
    if (spec.count_per_iteration < 1) {
      return InvalidArgumentError("release '" + spec.label +
                                  "': count per iteration must be >= 1");
    }
    DPEM_RETURN_IF_ERROR(internal::CheckFinitePositive(
        spec.noise_weight, "release '" + spec.label + "': noise weight"));
  }
  return OkStatus();
}

// Records one repetition of `pattern` with unit sensitivity and the given
// multipliers (one per release kind), each labelled `prefix` + its label.
Status RecordPattern(const ReleasePattern& pattern, const std::vector<double>& multipliers,
                     const std::string& prefix, PrivacyLedger& ledger) {
  for (std::size_t r = 0; r < pattern.releases.size(); ++r) {
    const ReleaseSpec& spec = pattern.releases[r];
    const Release release{spec.mechanism, 1.0, multipliers[r], prefix + spec.label,
                          spec.sampling};
    DPEM_RETURN_IF_ERROR(
        ledger.RecordRepeated(release, static_cast<std::size_t>(spec.count_per_iteration)));
  }
  return OkStatus();
}

// A schedule is empty or has one finite weight > 0 per iteration.
Status ValidateSchedule(const std::vector<double>& weights, int iterations) {
  if (weights.empty()) return OkStatus();
  if (weights.size() != static_cast<std::size_t>(iterations)) {
    return InvalidArgumentError("a budget schedule needs one weight per iteration");
  }
  for (double w : weights) {
    if (!(std::isfinite(w) && w > 0.0)) {
      return InvalidArgumentError("iteration weights must be finite and > 0");
    }
  }
  return OkStatus();
}

// Records `iterations` repetitions of `pattern`, "iteration j / <label>", with
// the multipliers of iteration j of the schedule `weights`.
Status RecordIterations(const ReleasePattern& pattern, int iterations,
                        const std::vector<double>& multipliers,
                        const std::vector<double>& weights, PrivacyLedger& ledger) {
  DPEM_RETURN_IF_ERROR(ValidateSchedule(weights, iterations));
  for (int j = 1; j <= iterations; ++j) {
    DPEM_RETURN_IF_ERROR(RecordPattern(pattern, IterationNoiseMultipliers(multipliers, weights, j),
                                       "iteration " + std::to_string(j) + " / ", ledger));
  }
  return OkStatus();
}

}  // namespace

StatusOr<ReleasePattern> GggPattern(int components) {
  DPEM_RETURN_IF_ERROR(ValidateComponents(components));
  return MakePattern("GGG", MechanismKind::kGaussian, components);
}

StatusOr<ReleasePattern> LlgPattern(int components) {
  DPEM_RETURN_IF_ERROR(ValidateComponents(components));
  return MakePattern("LLG", MechanismKind::kLaplace, components);
}

StatusOr<ReleasePattern> ScenarioPattern(std::string_view name, int components) {
  if (name == "GGG") return GggPattern(components);
  if (name == "LLG") return LlgPattern(components);
  return InvalidArgumentError("unknown scenario '" + std::string(name) +
                              "' (accepted: GGG, LLG)");
}

Status CalibrationOptions::Validate() const {
  if (!(std::isfinite(epsilon) && epsilon > 0.0)) {
    return InvalidArgumentError("epsilon must be finite and > 0");
  }
  if (!(delta > 0.0 && delta < 1.0)) return InvalidArgumentError("delta must be in (0, 1)");
  if (iterations < 1) return InvalidArgumentError("iterations J must be >= 1");
  if (!(per_release_delta > 0.0 && per_release_delta < 1.0)) {
    return InvalidArgumentError("per-release delta must be in (0, 1)");
  }
  if (!(relative_tolerance > 0.0 && relative_tolerance <= 0.1)) {
    return InvalidArgumentError("relative tolerance must be in (0, 0.1]");
  }
  DPEM_RETURN_IF_ERROR(ValidatePattern(pattern));
  DPEM_RETURN_IF_ERROR(ValidateSchedule(iteration_weights, iterations));
  if (start.releases.empty()) return OkStatus();
  if (!(start_share > 0.0 && start_share < 1.0)) {
    return InvalidArgumentError("the start's share of the budget must be in (0, 1)");
  }
  return ValidatePattern(start);
}

StatusOr<std::vector<double>> PatternNoiseMultipliers(const ReleasePattern& pattern,
                                                      double per_release_epsilon,
                                                      double per_release_delta) {
  DPEM_RETURN_IF_ERROR(ValidatePattern(pattern));
  DPEM_ASSIGN_OR_RETURN(const double gaussian,
                        ClassicGaussianNoiseMultiplier(per_release_epsilon, per_release_delta));
  std::vector<double> multipliers;
  for (const ReleaseSpec& spec : pattern.releases) {
    const double base = spec.mechanism == MechanismKind::kGaussian
                            ? gaussian
                            : 1.0 / per_release_epsilon;
    multipliers.push_back(spec.noise_weight * base);
  }
  return multipliers;
}

std::vector<double> IterationNoiseMultipliers(const std::vector<double>& multipliers,
                                              const std::vector<double>& iteration_weights,
                                              int j) {
  if (iteration_weights.empty()) return multipliers;
  const double scale = 1.0 / std::sqrt(iteration_weights[static_cast<std::size_t>(j - 1)]);
  std::vector<double> out = multipliers;
  for (double& z : out) z *= scale;
  return out;
}

StatusOr<PrivacyLedger> PatternLedger(const ReleasePattern& pattern, int iterations,
                                      const std::vector<double>& noise_multipliers,
                                      const std::vector<double>& iteration_weights) {
  DPEM_RETURN_IF_ERROR(ValidatePattern(pattern));
  if (noise_multipliers.size() != pattern.releases.size()) {
    return InvalidArgumentError("one noise multiplier per release kind is required");
  }
  PrivacyLedger ledger;
  DPEM_RETURN_IF_ERROR(
      RecordIterations(pattern, iterations, noise_multipliers, iteration_weights, ledger));
  return ledger;
}

StatusOr<std::vector<double>> StartNoiseMultipliers(const ReleasePattern& start, double share,
                                                    const ReleasePattern& pattern,
                                                    int iterations,
                                                    const std::vector<double>& multipliers,
                                                    const std::vector<double>& iteration_weights) {
  DPEM_RETURN_IF_ERROR(ValidatePattern(start));
  DPEM_RETURN_IF_ERROR(ValidatePattern(pattern));
  if (!(share > 0.0 && share < 1.0)) {
    return InvalidArgumentError("the start's share of the budget must be in (0, 1)");
  }
  if (iterations < 1) return InvalidArgumentError("iterations J must be >= 1");
  DPEM_RETURN_IF_ERROR(ValidateSchedule(iteration_weights, iterations));
  if (multipliers.size() != pattern.releases.size()) {
    return InvalidArgumentError("one noise multiplier per release kind is required");
  }
  // rho of one iteration, and of the start at unit scale (z_s = w_s).
  double rho_iteration = 0.0;
  for (std::size_t r = 0; r < multipliers.size(); ++r) {
    rho_iteration += pattern.releases[r].count_per_iteration /
                     (2.0 * multipliers[r] * multipliers[r]);
  }
  double rho_unit_start = 0.0;
  for (const ReleaseSpec& spec : start.releases) {
    rho_unit_start += spec.count_per_iteration / (2.0 * spec.noise_weight * spec.noise_weight);
  }
  double total_weight = static_cast<double>(iterations);
  if (!iteration_weights.empty()) {
    total_weight = std::accumulate(iteration_weights.begin(), iteration_weights.end(), 0.0);
  }
  const double rho_start = share / (1.0 - share) * total_weight * rho_iteration;
  const double scale = std::sqrt(rho_unit_start / rho_start);
  std::vector<double> start_multipliers;
  for (const ReleaseSpec& spec : start.releases) {
    start_multipliers.push_back(scale * spec.noise_weight);
  }
  return start_multipliers;
}

namespace {

// The ledger and certified epsilon at one per-release budget.
struct Accounted {
  std::vector<double> multipliers;
  std::vector<double> start_multipliers;
  PrivacyLedger ledger;
  double epsilon = 0.0;
};

StatusOr<Accounted> AccountAt(const CalibrationOptions& o, double per_release_epsilon) {
  Accounted a;
  DPEM_ASSIGN_OR_RETURN(a.multipliers, PatternNoiseMultipliers(
                                           o.pattern, per_release_epsilon,
                                           o.per_release_delta));
  if (!o.start.releases.empty()) {
    DPEM_ASSIGN_OR_RETURN(a.start_multipliers,
                          StartNoiseMultipliers(o.start, o.start_share, o.pattern,
                                                o.iterations, a.multipliers,
                                                o.iteration_weights));
    DPEM_RETURN_IF_ERROR(RecordPattern(o.start, a.start_multipliers, "start / ", a.ledger));
  }
  DPEM_RETURN_IF_ERROR(RecordIterations(o.pattern, o.iterations, a.multipliers,
                                        o.iteration_weights, a.ledger));
  DPEM_ASSIGN_OR_RETURN(a.epsilon, ComputeEpsilon(a.ledger, o.delta, o.accountant));
  return a;
}

}  // namespace

StatusOr<CalibrationResult> Calibrate(const CalibrationOptions& options) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  // exceeds(x): the budget x is not admissible. An accountant error counts as
  // not admissible (conservative) and is reported if nothing is admissible.
  Status last_error;
  auto exceeds = [&](double x) {
    StatusOr<Accounted> a = AccountAt(options, x);
    if (!a.ok()) {
      last_error = a.status();
      return true;
    }
    return a->epsilon > options.epsilon;
  };
  // Bracket: [lo, hi] with lo admissible and hi not, by halving / doubling
  // from the target itself (monotone: more budget, less noise, more epsilon).
  StatusOr<double> lo_inv = internal::ExpandUntil(
      [&](double inv) { return !exceeds(options.epsilon / inv); }, 1.0);
  if (!lo_inv.ok()) {
    if (!last_error.ok()) return last_error;
    return OutOfRangeError(
        "the " + std::string(AccountantName(options.accountant)) +
        " accountant cannot certify epsilon = " + std::to_string(options.epsilon) +
        " at this delta with any amount of noise" +
        (options.accountant == AccountantKind::kMoments
             ? " (with lambda <= 100 it never goes below ln(1/delta) / 100)"
             : ""));
  }
  const double lo = options.epsilon / *lo_inv;
  DPEM_ASSIGN_OR_RETURN(const double hi, internal::ExpandUntil(exceeds, 2.0 * lo));
  DPEM_ASSIGN_OR_RETURN(const internal::Bracket bracket,
                        internal::BisectThreshold(exceeds, lo, hi,
                                                  options.relative_tolerance));
  DPEM_ASSIGN_OR_RETURN(Accounted best, AccountAt(options, bracket.lo));
  if (best.epsilon > options.epsilon) {
    return InternalError("calibration re-accounted above the target");
  }
  CalibrationResult result;
  result.per_release_epsilon = bracket.lo;
  result.noise_multipliers = std::move(best.multipliers);
  result.start_noise_multipliers = std::move(best.start_multipliers);
  result.iteration_weights = options.iteration_weights;
  result.ledger = std::move(best.ledger);
  result.epsilon = best.epsilon;
  result.delta = options.delta;
  return result;
}

}  // namespace dpem
