#include "testing/audit.h"

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <vector>

namespace dpem::test_support {
namespace {

constexpr std::uint64_t kSelectionStream = 1;
constexpr std::uint64_t kBoundStream = 2;

// `runs` statistics of side `side`, sorted.
std::vector<double> SortedStatistics(const AuditedRun& run, int side, std::size_t runs,
                                     Generator& gen) {
  std::vector<double> out(runs);
  for (double& v : out) v = run(side, gen);
  std::sort(out.begin(), out.end());
  return out;
}

// Number of entries of the sorted `s` in the event.
std::size_t Hits(const std::vector<double>& s, double t, bool above) {
  const auto below = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), t) - s.begin());
  return above ? s.size() - below : below;
}

bool InEvent(double v, const AuditEvent& e) { return e.above ? v > e.threshold : v <= e.threshold; }

// Candidate thresholds: quantiles of both samples pooled, each side's
// extremes, and just below each side's minimum (a support gap).
std::vector<double> Candidates(const std::vector<double>& s0, const std::vector<double>& s1,
                               int quantiles) {
  std::vector<double> pooled(s0);
  pooled.insert(pooled.end(), s1.begin(), s1.end());
  std::sort(pooled.begin(), pooled.end());
  std::vector<double> out;
  for (int i = 0; i <= quantiles; ++i) {
    out.push_back(pooled[static_cast<std::size_t>(i) * (pooled.size() - 1) /
                         static_cast<std::size_t>(quantiles)]);
  }
  const double low = -std::numeric_limits<double>::infinity();
  for (const auto* s : {&s0, &s1}) {
    out.push_back(s->back());
    out.push_back(std::nextafter(s->front(), low));
  }
  return out;
}

// Confidence level of the selection runs' own Clopper-Pearson bounds.
constexpr double kSelectionAlpha = 0.1;

// The event's score: the bound the bound runs would give if their
// frequencies were the selection runs' pessimistic ones (Clopper-Pearson at
// kSelectionAlpha, so that rare events seen a few times are not favoured by
// chance).
double ProjectedScore(std::size_t h0, std::size_t h1, std::size_t selection_runs,
                      std::size_t bound_runs, const AuditOptions& o) {
  const double n = static_cast<double>(bound_runs);
  const auto project = [&](double p) {
    return std::min(bound_runs, static_cast<std::size_t>(std::llround(p * n)));
  };
  const double p0 = ClopperPearsonLower(h0, selection_runs, kSelectionAlpha);
  const double p1 = ClopperPearsonUpper(h1, selection_runs, kSelectionAlpha);
  return EpsilonLowerBound(project(p0), bound_runs, project(p1), bound_runs, o.delta, o.alpha);
}

}  // namespace

double ClopperPearsonLower(std::size_t hits, std::size_t trials, double alpha) {
  if (hits == 0) return 0.0;
  return boost::math::ibeta_inv(static_cast<double>(hits), static_cast<double>(trials - hits + 1),
                                alpha);
}

double ClopperPearsonUpper(std::size_t hits, std::size_t trials, double alpha) {
  if (hits == trials) return 1.0;
  return boost::math::ibetac_inv(static_cast<double>(hits + 1),
                                 static_cast<double>(trials - hits), alpha);
}

double EpsilonLowerBound(std::size_t hits0, std::size_t runs0, std::size_t hits1,
                         std::size_t runs1, double delta, double alpha) {
  const double p0 = ClopperPearsonLower(hits0, runs0, alpha / 2.0);
  const double p1 = ClopperPearsonUpper(hits1, runs1, alpha / 2.0);
  if (p0 <= delta) return -std::numeric_limits<double>::infinity();
  return std::log((p0 - delta) / p1);
}

std::string AuditResult::Describe() const {
  std::ostringstream out;
  out << "eps_lb = " << epsilon_lower_bound << " (event: statistic "
      << (event.above ? "> " : "<= ") << event.threshold << ", numerator side D"
      << (event.swapped ? 1 : 0) << "; hits " << hits0 << " vs " << hits1 << " of " << runs
      << " per side; p0_lower = " << p0_lower << ", p1_upper = " << p1_upper << ")";
  return out.str();
}

std::size_t AuditScale() {
  const char* env = std::getenv("DPEM_AUDIT_SCALE");
  if (env == nullptr) return 1;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  return (end != env && *end == '\0' && v >= 1) ? static_cast<std::size_t>(v) : 1;
}

AuditResult RunAudit(const AuditedRun& run, const AuditOptions& options) {
  const std::size_t bound_runs = options.bound_runs * AuditScale();
  const Generator root = Generator::FromSeed(options.seed);
  Generator selection_gen = root.Split(kSelectionStream);
  const std::vector<double> s0 = SortedStatistics(run, 0, options.selection_runs, selection_gen);
  const std::vector<double> s1 = SortedStatistics(run, 1, options.selection_runs, selection_gen);
  AuditEvent best;
  double best_score = -std::numeric_limits<double>::infinity();
  for (double t : Candidates(s0, s1, options.threshold_candidates)) {
    for (bool above : {true, false}) {
      const std::size_t h0 = Hits(s0, t, above), h1 = Hits(s1, t, above);
      for (bool swapped : {false, true}) {
        const double score =
            swapped ? ProjectedScore(h1, h0, s0.size(), bound_runs, options)
                    : ProjectedScore(h0, h1, s0.size(), bound_runs, options);
        if (score > best_score) {
          best_score = score;
          best = AuditEvent{t, above, swapped};
        }
      }
    }
  }
  AuditResult result;
  result.event = best;
  result.runs = bound_runs;
  Generator bound_gen = root.Split(kBoundStream);
  const int numerator = best.swapped ? 1 : 0;
  for (int side : {numerator, 1 - numerator}) {
    std::size_t hits = 0;
    for (std::size_t i = 0; i < result.runs; ++i) hits += InEvent(run(side, bound_gen), best);
    (side == numerator ? result.hits0 : result.hits1) = hits;
  }
  result.p0_lower = ClopperPearsonLower(result.hits0, result.runs, options.alpha / 2.0);
  result.p1_upper = ClopperPearsonUpper(result.hits1, result.runs, options.alpha / 2.0);
  result.epsilon_lower_bound = EpsilonLowerBound(result.hits0, result.runs, result.hits1,
                                                 result.runs, options.delta, options.alpha);
  return result;
}

}  // namespace dpem::test_support
