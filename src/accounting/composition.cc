// Composition theorems and concentrated-DP conversions (see composition.h).
//
// Soundness: every privacy parameter returned here is an upper bound on the
// exact value of its formula. Floating-point sums use compensated summation;
// the optimal-composition delta carries explicit error margins (for lgamma,
// exp and the rounding of the privacy loss) before it is compared with the
// target, and every reported value is finally passed through
// internal::RoundUpConservatively.
#include "dpem/accounting/composition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "internal/numeric.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUnit = std::numeric_limits<double>::epsilon();  // 2u.
// Relative tolerance of the optimal-composition bisection.
constexpr double kKovRelativeTolerance = 1e-10;
// Search range of log(alpha - 1) for the tight zCDP conversion.
constexpr double kZcdpLogAlphaMinusOneLo = -13.815510557964274;  // log(1e-6)
constexpr double kZcdpLogAlphaMinusOneHi = 18.420680743952367;   // log(1e8)
constexpr int kZcdpCoarseGridPoints = 321;
constexpr int kZcdpGoldenIterations = 200;

// Neumaier (improved Kahan) summation: error about 2u of the sum of |terms|,
// independent of the number of terms.
class CompensatedSum {
 public:
  void Add(double x) {
    const double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x)) {
      compensation_ += (sum_ - t) + x;
    } else {
      compensation_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  double Value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

// Checks one (epsilon, delta) guarantee: finite epsilon >= 0, delta in [0, 1).
Status ValidateMechanism(const EpsDelta& m, std::size_t index) {
  const std::string where = "mechanisms[" + std::to_string(index) + "]";
  if (!(m.epsilon >= 0.0) || !std::isfinite(m.epsilon)) {
    return InvalidArgumentError(where + ".epsilon must be finite and >= 0, got " +
                                std::to_string(m.epsilon));
  }
  if (!(m.delta >= 0.0 && m.delta < 1.0)) {
    return InvalidArgumentError(where + ".delta must be in [0, 1), got " +
                                std::to_string(m.delta));
  }
  return OkStatus();
}

Status ValidateMechanisms(std::span<const EpsDelta> mechanisms) {
  for (std::size_t i = 0; i < mechanisms.size(); ++i) {
    DPEM_RETURN_IF_ERROR(ValidateMechanism(mechanisms[i], i));
  }
  return OkStatus();
}

// Checks 0 < value < 1 for a probability parameter called `name`.
Status ValidateOpenUnit(double value, const std::string& name) {
  if (!(value > 0.0 && value < 1.0)) {
    return InvalidArgumentError(name + " must be in (0, 1), got " + std::to_string(value));
  }
  return OkStatus();
}

// Checks value >= 0 (not NaN; +inf allowed) for a parameter called `name`.
Status ValidateNonNegative(double value, const std::string& name) {
  if (!(value >= 0.0)) {
    return InvalidArgumentError(name + " must be >= 0, got " + std::to_string(value));
  }
  return OkStatus();
}

// ------------------------------------------------ optimal composition (KOV)

// Mechanisms sharing one epsilon > 0: the number of "minus" outcomes of
// their randomized responses is Binomial(n, 1/(1+e^eps)) under P.
struct RrGroup {
  double epsilon = 0.0;
  std::int64_t count = 0;
  std::vector<double> log_pmf;  // log P[m minus outcomes], m = 0..count.
  double magnitude = 0.0;       // Bound on |terms| entering log_pmf.
};

// The composed dominating pair of KOV Thm. 3.3 / Murtagh-Vadhan.
struct KovProblem {
  std::vector<RrGroup> groups;
  std::vector<double> max_loss_from;  // max_loss_from[g] = sum_{h>=g} n_h eps_h.
  double log_no_failure = 0.0;        // log prod_r (1 - delta_r).
  double atoms = 1.0;                 // prod_g (n_g + 1).
  double log_error = 0.0;             // Relative error bound of a log term.
};

// log Binomial(n, q) pmf at m, q = 1/(1+e^eps), from lgamma and stable
// log p = -log1p(e^-eps), log q = -eps - log1p(e^-eps).
void FillLogPmf(RrGroup& g) {
  const double n = static_cast<double>(g.count);
  const double log_p = -std::log1p(std::exp(-g.epsilon));
  const double log_q = -g.epsilon + log_p;
  const double lg_n = std::lgamma(n + 1.0);
  g.log_pmf.resize(static_cast<std::size_t>(g.count) + 1);
  for (std::int64_t m = 0; m <= g.count; ++m) {
    const double md = static_cast<double>(m);
    g.log_pmf[m] = lg_n - std::lgamma(md + 1.0) - std::lgamma(n - md + 1.0) +
                   (n - md) * log_p + md * log_q;
  }
  g.magnitude = 3.0 * lg_n + n * (std::fabs(log_p) + std::fabs(log_q)) + 1.0;
}

// Fills max_loss_from (suffix sums of n_g eps_g) and the relative error
// bound of a computed log term (lgamma, exp, log1p, expm1 and the additions:
// a generous 16 ulps of every magnitude involved).
void FillBounds(KovProblem& problem) {
  problem.max_loss_from.assign(problem.groups.size() + 1, 0.0);
  double magnitude = 0.0;
  for (std::size_t g = problem.groups.size(); g-- > 0;) {
    const RrGroup& grp = problem.groups[g];
    problem.max_loss_from[g] =
        problem.max_loss_from[g + 1] + static_cast<double>(grp.count) * grp.epsilon;
    magnitude += grp.magnitude;
  }
  problem.log_error = 16.0 * kUnit * (magnitude + 16.0 * problem.groups.size() + 16.0);
}

// Groups the mechanisms by epsilon (delta_r only enters through
// prod (1 - delta_r)); epsilon-0 mechanisms have zero privacy loss and are
// dropped from the lattice. Refuses lattices above kKovMaxAtoms.
StatusOr<KovProblem> BuildKovProblem(std::span<const EpsDelta> mechanisms) {
  KovProblem problem;
  std::map<double, std::int64_t> counts;
  CompensatedSum log_no_failure;
  for (const EpsDelta& m : mechanisms) {
    log_no_failure.Add(std::log1p(-m.delta));
    if (m.epsilon > 0.0) ++counts[m.epsilon];
  }
  problem.log_no_failure = log_no_failure.Value();
  for (const auto& [eps, n] : counts) {
    problem.atoms *= static_cast<double>(n) + 1.0;
    if (problem.atoms > kKovMaxAtoms) {
      return InvalidArgumentError(
          "mechanisms: optimal composition needs more than kKovMaxAtoms = " +
          std::to_string(kKovMaxAtoms) + " lattice points (product of group sizes + 1)");
    }
  }
  for (const auto& [eps, n] : counts) {
    problem.groups.push_back(RrGroup{eps, n, {}, 0.0});
    FillLogPmf(problem.groups.back());
  }
  FillBounds(problem);
  return problem;
}

// Accumulators of the randomized-response hockey-stick divergence.
struct RrDeltaSums {
  CompensatedSum main;   // sum over L > eps of P(m) (1 - e^{eps - L}).
  CompensatedSum near;   // sum over L > eps - tol of P(m) e^{min(0, eps - L)}.
};

struct RrWalk {
  const KovProblem& problem;
  double epsilon;    // The composed epsilon at which delta is evaluated.
  double tolerance;  // Bound on the rounding error of a computed loss L.
  RrDeltaSums sums;
};

// Depth-first walk over the count lattice; m increases the number of minus
// outcomes in group g, so the loss decreases and the loop can stop once even
// the best completion cannot exceed epsilon - tolerance.
void WalkLattice(RrWalk& w, std::size_t g, double loss, double log_prob) {
  const auto& groups = w.problem.groups;
  if (g == groups.size()) {
    const double d = w.epsilon - loss;  // <= 0 where the term is positive.
    if (d < 0.0) w.sums.main.Add(std::exp(log_prob + std::log(-std::expm1(d))));
    w.sums.near.Add(std::exp(log_prob + std::min(0.0, d)));
    return;
  }
  const RrGroup& grp = groups[g];
  const double rest = w.problem.max_loss_from[g + 1];
  for (std::int64_t m = 0; m <= grp.count; ++m) {
    const double l = loss + grp.epsilon * static_cast<double>(grp.count - 2 * m);
    if (l + rest <= w.epsilon - w.tolerance) break;
    WalkLattice(w, g + 1, l, log_prob + grp.log_pmf[m]);
  }
}

// An upper bound on delta(epsilon) = 1 - prod(1-delta_r) (1 - delta_rr(eps)).
double KovDeltaUpper(const KovProblem& problem, double epsilon) {
  const double scale = problem.max_loss_from[0] + epsilon;
  RrWalk walk{problem, epsilon,
              4.0 * kUnit * (problem.groups.size() + 2.0) * scale, RrDeltaSums{}};
  WalkLattice(walk, 0, 0.0, 0.0);
  const double rr_main = walk.sums.main.Value() * std::exp(problem.log_error) * (1.0 + 8.0 * kUnit);
  const double rr = rr_main + walk.tolerance * walk.sums.near.Value() * (1.0 + 8.0 * kUnit);
  const double no_failure = std::min(1.0, std::exp(problem.log_no_failure) * (1.0 + 4.0 * kUnit));
  const double failure = -std::expm1(problem.log_no_failure);
  return internal::RoundUpConservatively(failure + no_failure * std::min(1.0, rr));
}

// ------------------------------------------------ tight zCDP conversion

// Canonne-Kamath-Steinke 2020 Prop. 12 applied to (alpha, alpha rho)-RDP,
// with alpha = 1 + e^t; an upper bound on the exact value at that alpha
// (rounding margin of 8 ulps of the sum of |terms| added).
double CksZcdpBound(double rho, double log_delta, double t) {
  const double alpha = 1.0 + std::exp(t);
  const double alpha_minus_one = alpha - 1.0;  // Exact in floating point.
  const double a = alpha * rho;
  const double b = std::log1p(-1.0 / alpha);
  const double c = (log_delta + std::log(alpha)) / alpha_minus_one;
  const double value = a + b - c;
  return value + 8.0 * kUnit * (std::fabs(a) + std::fabs(b) + std::fabs(c));
}

// Minimises CksZcdpBound over t = log(alpha - 1): coarse grid locating the
// basin, then golden-section search between the grid neighbours.
double MinimiseCksOverAlpha(double rho, double log_delta) {
  auto f = [&](double t) { return CksZcdpBound(rho, log_delta, t); };
  const double step = (kZcdpLogAlphaMinusOneHi - kZcdpLogAlphaMinusOneLo) /
                      (kZcdpCoarseGridPoints - 1);
  int best = 0;
  double best_value = kInf;
  for (int i = 0; i < kZcdpCoarseGridPoints; ++i) {
    const double v = f(kZcdpLogAlphaMinusOneLo + i * step);
    if (v < best_value) best_value = v, best = i;
  }
  const double lo = kZcdpLogAlphaMinusOneLo + std::max(0, best - 1) * step;
  const double hi = kZcdpLogAlphaMinusOneLo +
                    std::min(kZcdpCoarseGridPoints - 1, best + 1) * step;
  const double t = internal::GoldenSectionMinimise(f, lo, hi, kZcdpGoldenIterations);
  return std::min(best_value, f(t));
}

}  // namespace

// Dwork-Roth 2014 Thm. 3.16: (sum eps_r, sum delta_r).
StatusOr<EpsDelta> ComposeLinear(std::span<const EpsDelta> mechanisms) {
  DPEM_RETURN_IF_ERROR(ValidateMechanisms(mechanisms));
  CompensatedSum eps, delta;
  for (const EpsDelta& m : mechanisms) {
    eps.Add(m.epsilon);
    delta.Add(m.delta);
  }
  return EpsDelta{internal::RoundUpConservatively(eps.Value()),
                  internal::RoundUpConservatively(delta.Value())};
}

// Dwork-Rothblum-Vadhan 2010 / Dwork-Roth 2014 Thm. 3.20, heterogeneous form:
// sqrt(2 ln(1/delta') sum eps_r^2) + sum eps_r (e^eps_r - 1).
StatusOr<EpsDelta> ComposeAdvanced(std::span<const EpsDelta> mechanisms,
                                   double delta_slack) {
  DPEM_RETURN_IF_ERROR(ValidateMechanisms(mechanisms));
  DPEM_RETURN_IF_ERROR(ValidateOpenUnit(delta_slack, "delta_slack"));
  CompensatedSum squares, drift, delta;
  delta.Add(delta_slack);
  for (const EpsDelta& m : mechanisms) {
    squares.Add(m.epsilon * m.epsilon);
    drift.Add(m.epsilon * std::expm1(m.epsilon));
    delta.Add(m.delta);
  }
  const double spread = std::sqrt(2.0 * -std::log(delta_slack) * squares.Value());
  return EpsDelta{internal::RoundUpConservatively(spread + drift.Value()),
                  internal::RoundUpConservatively(delta.Value())};
}

// Kairouz-Oh-Viswanath 2015 Thm. 3.3 (general epsilon: Murtagh-Vadhan 2016):
// bisection for the smallest epsilon with delta(epsilon) <= delta_total.
StatusOr<double> ComposeOptimalEpsilon(std::span<const EpsDelta> mechanisms,
                                       double delta_total) {
  DPEM_RETURN_IF_ERROR(ValidateMechanisms(mechanisms));
  DPEM_RETURN_IF_ERROR(ValidateOpenUnit(delta_total, "delta_total"));
  DPEM_ASSIGN_OR_RETURN(KovProblem problem, BuildKovProblem(mechanisms));
  auto fits = [&](double eps) { return KovDeltaUpper(problem, eps) <= delta_total; };
  const double sum_eps = problem.max_loss_from[0];
  // Past sum_eps + 2 tol no loss exceeds eps - tol: delta is 1 - prod(1-delta_r).
  const double hi = sum_eps * (1.0 + 64.0 * kUnit * (problem.groups.size() + 2.0)) + 1e-300;
  if (!fits(hi)) {
    return InvalidArgumentError(
        "delta_total = " + std::to_string(delta_total) +
        " must exceed 1 - prod_r (1 - delta_r) = " +
        std::to_string(-std::expm1(problem.log_no_failure)) + " (no finite epsilon)");
  }
  if (fits(0.0)) return 0.0;
  DPEM_ASSIGN_OR_RETURN(internal::Bracket bracket,
                        internal::BisectThreshold(fits, 0.0, hi, kKovRelativeTolerance));
  // delta(sum eps_r) = 1 - prod(1 - delta_r) <= delta_total exactly, so the
  // linear epsilon is also valid: never report more than it.
  CompensatedSum linear;
  for (const EpsDelta& m : mechanisms) linear.Add(m.epsilon);
  return std::min(internal::RoundUpConservatively(bracket.hi),
                  internal::RoundUpConservatively(linear.Value()));
}

// Dwork-Rothblum 2016 Thm. 3.5: (eps (e^eps - 1) / 2, eps)-mCDP.
MeanConcentrated PureDpToMcdp(double epsilon) {
  if (!(epsilon >= 0.0)) return MeanConcentrated{std::nan(""), std::nan("")};
  return MeanConcentrated{internal::RoundUpConservatively(0.5 * epsilon * std::expm1(epsilon)),
                          epsilon};
}

// Dwork-Rothblum 2016 Thm. 3.2: (tau^2 / 2, tau)-mCDP with tau = 1 / z.
MeanConcentrated GaussianMcdp(double noise_multiplier) {
  if (!(noise_multiplier >= 0.0)) return MeanConcentrated{std::nan(""), std::nan("")};
  const double tau = internal::RoundUpConservatively(1.0 / noise_multiplier);
  return MeanConcentrated{internal::RoundUpConservatively(0.5 * tau * tau), tau};
}

// Dwork-Rothblum 2016 Thm. 3.4: (sum mu_r, sqrt(sum tau_r^2)).
MeanConcentrated ComposeMcdp(std::span<const MeanConcentrated> mechanisms) {
  CompensatedSum mu, tau_squared;
  for (const MeanConcentrated& m : mechanisms) {
    if (!(m.mu >= 0.0) || !(m.tau >= 0.0)) return MeanConcentrated{std::nan(""), std::nan("")};
    mu.Add(m.mu);
    tau_squared.Add(m.tau * m.tau);
  }
  return MeanConcentrated{internal::RoundUpConservatively(mu.Value()),
                          internal::RoundUpConservatively(std::sqrt(tau_squared.Value()))};
}

// Subgaussian tail (Dwork-Rothblum 2016, Sec. 3): mu + tau sqrt(2 ln(1/delta)).
StatusOr<double> McdpToEpsilon(MeanConcentrated mcdp, double delta) {
  DPEM_RETURN_IF_ERROR(ValidateNonNegative(mcdp.mu, "mcdp.mu"));
  DPEM_RETURN_IF_ERROR(ValidateNonNegative(mcdp.tau, "mcdp.tau"));
  DPEM_RETURN_IF_ERROR(ValidateOpenUnit(delta, "delta"));
  if (mcdp.tau == 0.0) return internal::RoundUpConservatively(mcdp.mu);
  return internal::RoundUpConservatively(mcdp.mu +
                                         mcdp.tau * std::sqrt(2.0 * -std::log(delta)));
}

// Bun-Steinke 2016 Prop. 1.4: eps^2 / 2.
double PureDpToZcdp(double epsilon) {
  if (!(epsilon >= 0.0)) return std::nan("");
  return internal::RoundUpConservatively(0.5 * epsilon * epsilon);
}

// Bun-Steinke 2016 Prop. 1.6: 1 / (2 z^2).
double GaussianZcdp(double noise_multiplier) {
  if (!(noise_multiplier >= 0.0)) return std::nan("");
  return internal::RoundUpConservatively(0.5 / (noise_multiplier * noise_multiplier));
}

// Bun-Steinke 2016 Prop. 1.3: rho + 2 sqrt(rho ln(1/delta)).
StatusOr<double> ZcdpToEpsilon(double rho, double delta) {
  DPEM_RETURN_IF_ERROR(ValidateNonNegative(rho, "rho"));
  DPEM_RETURN_IF_ERROR(ValidateOpenUnit(delta, "delta"));
  if (rho == 0.0) return 0.0;
  return internal::RoundUpConservatively(rho + 2.0 * std::sqrt(rho * -std::log(delta)));
}

// Canonne-Kamath-Steinke 2020 Prop. 12 on (alpha, alpha rho)-RDP, minimised
// over real alpha > 1; never above Bun-Steinke Prop. 1.3.
StatusOr<double> ZcdpToEpsilonTight(double rho, double delta) {
  DPEM_ASSIGN_OR_RETURN(double classic, ZcdpToEpsilon(rho, delta));
  if (rho == 0.0 || !std::isfinite(rho)) return classic;
  const double tight = std::max(0.0, MinimiseCksOverAlpha(rho, std::log(delta)));
  return std::min(classic, internal::RoundUpConservatively(tight));
}

}  // namespace dpem
