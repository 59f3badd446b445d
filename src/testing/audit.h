// Test support: empirical privacy audits (lower bounds on epsilon).
//
// An audit runs a mechanism many times on two neighbouring inputs D0 and D1,
// reduces each output to a scalar statistic, and tests an event E of the form
// "statistic > t" or "statistic <= t". For an (epsilon, delta)-DP mechanism,
// P[M(D0) in E] <= e^epsilon P[M(D1) in E] + delta for every E, so with
// Clopper-Pearson bounds p0_lower <= P[M(D0) in E] and p1_upper >=
// P[M(D1) in E] (each failing with probability <= alpha / 2),
//     epsilon >= log((p0_lower - delta) / p1_upper)
// holds with probability >= 1 - alpha (Jagielski, Ullman, Oprea 2020,
// "Auditing differentially private machine learning", Sec. 3; the event is
// a threshold as in DP-Sniper, Bichsel et al. 2021, restricted to one
// scalar). The event (threshold, direction, and which side is D0) is chosen
// on a SEPARATE set of selection runs, so that the bound runs are independent
// of it and the bound is valid. The event chosen maximises the bound the
// bound runs would give if their frequencies were the selection runs'
// pessimistic ones (one-sided Clopper-Pearson at level 0.1).
//
// Run counts scale with the environment variable DPEM_AUDIT_SCALE (a
// positive integer, default 1): `DPEM_AUDIT_SCALE=20 ctest -L audit` is the
// long mode that docs/audits.md reports.
//
// Not part of the library.
#ifndef DPEM_TESTING_AUDIT_H_
#define DPEM_TESTING_AUDIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "dpem/random/generator.h"

namespace dpem::test_support {

// One-sided Clopper-Pearson bounds on a binomial proportion from `hits` of
// `trials`: P(p < lower) <= alpha and P(p > upper) <= alpha.
double ClopperPearsonLower(std::size_t hits, std::size_t trials, double alpha);
double ClopperPearsonUpper(std::size_t hits, std::size_t trials, double alpha);

// log((p0_lower - delta) / p1_upper) from the two sides' event counts, each
// Clopper-Pearson bound at level alpha / 2; -infinity if p0_lower <= delta.
double EpsilonLowerBound(std::size_t hits0, std::size_t runs0, std::size_t hits1,
                         std::size_t runs1, double delta, double alpha);

// The event an audit tests.
struct AuditEvent {
  double threshold = 0.0;
  bool above = true;     // "statistic > threshold", else "statistic <= threshold".
  bool swapped = false;  // The numerator side is D1 (the bound is symmetric).
};

struct AuditOptions {
  // Runs per side used to choose the event, and to bound epsilon (the latter
  // multiplied by AuditScale()).
  std::size_t selection_runs = 20000;
  std::size_t bound_runs = 200000;
  // The bound holds with probability >= 1 - alpha.
  double alpha = 1e-6;
  // The mechanism's claimed delta (0 for pure DP).
  double delta = 0.0;
  // Quantiles of the pooled selection statistics tried as thresholds (plus
  // the extremes of each side, which find support gaps).
  int threshold_candidates = 512;
  std::uint64_t seed = 1;
};

struct AuditResult {
  double epsilon_lower_bound = 0.0;
  AuditEvent event;
  std::size_t hits0 = 0, hits1 = 0;  // Event counts, numerator side first.
  std::size_t runs = 0;              // Bound runs per side.
  double p0_lower = 0.0, p1_upper = 0.0;

  // "eps_lb = ... (event ..., hits ../.. vs ../..)" for test logs.
  std::string Describe() const;
};

// One run of the audited mechanism on neighbour `side` (0 or 1), reduced to
// a scalar statistic. Must draw all randomness from `gen`.
using AuditedRun = std::function<double(int side, Generator& gen)>;

// DPEM_AUDIT_SCALE from the environment (>= 1; 1 if unset or invalid).
std::size_t AuditScale();

// The audit described above: selection runs from one Split() stream of
// Generator::FromSeed(options.seed), bound runs from another.
AuditResult RunAudit(const AuditedRun& run, const AuditOptions& options);

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_AUDIT_H_
