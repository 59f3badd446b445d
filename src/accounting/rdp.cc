// Renyi DP of the Laplace and Gaussian mechanisms, its conversion to
// (epsilon, delta)-DP, and the moments accountant of park2017 (see rdp.h).
//
// Soundness: the conversions add to every candidate epsilon an explicit bound
// on the rounding error of its evaluation (kSumErrorFactor times the sum of
// the magnitudes of its terms) before taking the minimum, and round the
// result up with internal::RoundUpConservatively. Invalid per-mechanism
// inputs give NaN, which the conversions reject rather than skip.
#include "dpem/accounting/rdp.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "internal/numeric.h"

namespace dpem {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Error bound per unit of term magnitude in a sum of a few rounded terms
// (each term is within a few ulps; generous by design).
constexpr double kSumErrorFactor = 8.0 * DBL_EPSILON;

// The default grid: alpha - 1 = 10^(k / kOrdersPerDecade) for
// k = kLowestDecade * kOrdersPerDecade, ..., kHighestDecade * kOrdersPerDecade
// (consecutive ratio 10^(1/40) ~= 1.059), the top point replaced by alpha =
// 10^4 exactly, merged with the integers 2..kLargestIntegerOrder.
constexpr int kOrdersPerDecade = 40;
constexpr int kLowestDecade = -4;
constexpr int kHighestDecade = 4;
constexpr double kLargestOrder = 1e4;
constexpr int kLargestIntegerOrder = 256;

std::string FormatDouble(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", x);
  return buffer;
}

Status CheckDelta(double delta) {
  if (delta > 0.0 && delta < 1.0) return OkStatus();
  return InvalidArgumentError("delta must be in (0, 1), got " + FormatDouble(delta));
}

std::vector<double> MakeDefaultRdpOrders() {
  std::vector<double> orders;
  for (int k = kLowestDecade * kOrdersPerDecade; k < kHighestDecade * kOrdersPerDecade;
       ++k) {
    orders.push_back(1.0 + std::pow(10.0, static_cast<double>(k) / kOrdersPerDecade));
  }
  orders.push_back(kLargestOrder);
  for (int a = 2; a <= kLargestIntegerOrder; ++a) orders.push_back(a);
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

// Canonne-Kamath-Steinke 2020, Prop. 12 at one order, plus its error bound:
//   tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1).
// log((alpha-1)/alpha) is log1p(-1/alpha) for alpha >= 2 (error ~u of the
// result) and log(alpha-1) - log(alpha) below (alpha - 1 exact, but each log
// errs by ~u of its own size, which the magnitude then includes).
double CksEpsilonUpperBound(double alpha, double tau, double log_delta) {
  const double log_alpha = std::log(alpha);
  double log_ratio = 0.0, magnitude = 0.0;
  if (alpha >= 2.0) {
    log_ratio = std::log1p(-1.0 / alpha);
    magnitude = std::fabs(log_ratio);
  } else {
    const double log_alpha_minus_one = std::log(alpha - 1.0);
    log_ratio = log_alpha_minus_one - log_alpha;
    magnitude = std::fabs(log_alpha_minus_one) + log_alpha;
  }
  const double tail = -(log_delta + log_alpha) / (alpha - 1.0);
  magnitude += std::fabs(tau) + std::fabs(tail) +
               (std::fabs(log_delta) + log_alpha) / (alpha - 1.0);
  return tau + log_ratio + tail + kSumErrorFactor * magnitude;
}

}  // namespace

// Grid of orders: see the constants above (40 points per decade of alpha - 1
// from 1e-4 to 1e4, plus the integers 2..256).
const std::vector<double>& DefaultRdpOrders() {
  static const std::vector<double> kOrders = MakeDefaultRdpOrders();
  return kOrders;
}

// Mironov 2017, Prop. 7 (Table II): alpha / (2 z^2). NaN for z <= 0 or
// alpha <= 1.
double GaussianRdp(double noise_multiplier, double alpha) {
  if (!(noise_multiplier > 0.0) || !(alpha > 1.0)) return kNaN;
  return alpha / (2.0 * noise_multiplier * noise_multiplier);
}

// Mironov 2017, Prop. 6 (Table II) with eps0 = 1/z, in log space:
//   log(alpha/(2a-1)) + (alpha-1) eps0  and  log((alpha-1)/(2a-1)) - alpha eps0
// combined by LogAddExp and divided by alpha - 1. With h = alpha - 1 (exact
// for alpha <= 2), log1p keeps the first term accurate as alpha -> 1, where
// the value tends to the KL divergence eps0 + e^{-eps0} - 1. alpha = +inf
// gives the max divergence eps0. The result is rounded up by a bound on its
// rounding error (relative ~1e-15, more where log_up cancels near alpha = 1).
// NaN for z <= 0 or alpha <= 1.
double LaplaceRdp(double noise_multiplier, double alpha) {
  if (!(noise_multiplier > 0.0) || !(alpha > 1.0)) return kNaN;
  const double eps0 = 1.0 / noise_multiplier;
  if (std::isinf(alpha)) return eps0;
  const double h = alpha - 1.0;
  const double log_alpha = std::log1p(h);
  const double log_denominator = std::log1p(2.0 * h);  // log(2 alpha - 1)
  const double log_up = log_alpha - log_denominator + h * eps0;
  const double log_down = std::log(h) - log_denominator - alpha * eps0;
  const double log_sum = internal::LogAddExp(log_up, log_down);
  // log_up cancels as alpha -> 1 (its parts are ~h, the sum ~h eps0^2/2):
  // round up by a bound on the absolute error of log_sum, then divide.
  const double magnitude =
      log_alpha + log_denominator + h * eps0 + std::fabs(log_sum) + std::fabs(log_up);
  return (log_sum + kSumErrorFactor * magnitude) / h;
}

// Randomised response with parameter eps (see rdp.h), with h = alpha - 1:
//   log((e^{h eps} + e^{-(1+h) eps}) / (1 + e^{-eps})) / h
//   = log1p((expm1(h eps) + e^{-eps} expm1(-h eps)) / (1 + e^{-eps})) / h.
// The two expm1 terms cancel to about h eps (1 - e^{-eps}), so the relative
// error is about DBL_EPSILON / min(eps, 1) (a few ulps per operation);
// kPureDpRelativeMargin covers it for eps >= kPureDpSmallEpsilon, below which
// (and past overflow) the two simpler bounds are used alone.
constexpr double kPureDpRelativeMargin = 1e-9;
constexpr double kPureDpSmallEpsilon = 1e-5;

double PureDpRdp(double epsilon, double alpha) {
  if (!(epsilon > 0.0) || !(alpha > 1.0) || std::isnan(epsilon)) return kNaN;
  if (std::isinf(epsilon)) return kInf;
  const double simple = std::min(epsilon, alpha * epsilon * epsilon / 2.0);
  if (std::isinf(alpha)) return epsilon;
  const double h = alpha - 1.0;
  if (epsilon < kPureDpSmallEpsilon || h * epsilon > 700.0) {
    return internal::RoundUpConservatively(simple);
  }
  const double e = std::exp(-epsilon);
  const double ratio = (std::expm1(h * epsilon) + e * std::expm1(-h * epsilon)) / (1.0 + e);
  const double rr = std::log1p(ratio) / h;
  const double bound = rr * (1.0 + kPureDpRelativeMargin) + std::numeric_limits<double>::min();
  return internal::RoundUpConservatively(std::min(simple, bound));
}

// Canonne, Kamath and Steinke 2020, Prop. 12 (the formula of Opacus'
// get_privacy_spent and TF Privacy's compute_eps), minimised over the orders.
StatusOr<double> RdpToEpsilon(std::span<const double> orders,
                              std::span<const double> rdp, double delta) {
  if (orders.empty() || orders.size() != rdp.size()) {
    return InvalidArgumentError("orders and rdp must be non-empty and of equal size");
  }
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  const double log_delta = std::log(delta);
  double best = kInf;
  for (size_t i = 0; i < orders.size(); ++i) {
    if (!(orders[i] > 1.0) || !std::isfinite(orders[i])) {
      return InvalidArgumentError("orders must be finite and > 1, got " +
                                  FormatDouble(orders[i]));
    }
    if (!(rdp[i] >= 0.0)) {
      return InvalidArgumentError("rdp must be >= 0 and not NaN, got " +
                                  FormatDouble(rdp[i]));
    }
    if (std::isinf(rdp[i])) continue;
    best = std::min(best, CksEpsilonUpperBound(orders[i], rdp[i], log_delta));
  }
  if (std::isinf(best)) return OutOfRangeError("rdp is infinite at every order");
  return internal::RoundUpConservatively(std::max(best, 0.0));
}

// park2017 Sec. 5 (after eq. (19)): (lambda^2 + lambda) / (2 z^2).
// NaN for z <= 0 or lambda < 0.
double GaussianLogMoment(double noise_multiplier, int lambda) {
  if (!(noise_multiplier > 0.0) || lambda < 0) return kNaN;
  const double l = lambda;
  return l * (l + 1.0) / (2.0 * noise_multiplier * noise_multiplier);
}

// park2017 eq. (19), supplement Sec. 2.1, with eps = 1/z, in log space:
//   LogAddExp(log((l+1)/(2l+1)) + l eps, log(l/(2l+1)) - (l+1) eps),
// rounded up by a bound on its rounding error. NaN for z <= 0 or lambda < 0.
double LaplaceLogMoment(double noise_multiplier, int lambda) {
  if (!(noise_multiplier > 0.0) || lambda < 0) return kNaN;
  const double eps = 1.0 / noise_multiplier;
  const double l = lambda;
  const double log_numerator = std::log(l + 1.0);
  const double log_denominator = std::log(2.0 * l + 1.0);
  const double log_up = log_numerator - log_denominator + l * eps;
  const double log_sum = internal::LogAddExp(
      log_up, std::log(l) - log_denominator - (l + 1.0) * eps);
  // As in LaplaceRdp: log_up cancels for small eps; round up by its error.
  const double magnitude = log_numerator + log_denominator + l * eps +
                           std::fabs(log_sum) + std::fabs(log_up);
  return log_sum + kSumErrorFactor * magnitude;
}

// park2017 eq. (3) solved for epsilon: min over lambda = i + 1 of
// (alpha(lambda) + log(1/delta)) / lambda, each candidate rounded up by its
// error bound; infinite log moments are skipped, NaN or negative rejected.
StatusOr<double> LogMomentsToEpsilon(std::span<const double> log_moments,
                                     double delta) {
  if (log_moments.empty()) return InvalidArgumentError("log_moments must be non-empty");
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  const double log_inverse_delta = -std::log(delta);
  double best = kInf;
  for (size_t i = 0; i < log_moments.size(); ++i) {
    const double moment = log_moments[i];
    if (!(moment >= 0.0)) {
      return InvalidArgumentError("log_moments must be >= 0 and not NaN, got " +
                                  FormatDouble(moment));
    }
    if (std::isinf(moment)) continue;
    const double lambda = static_cast<double>(i + 1);
    const double candidate = (moment + log_inverse_delta) / lambda;
    best = std::min(best, candidate + kSumErrorFactor * candidate);
  }
  if (std::isinf(best)) return OutOfRangeError("log moments are infinite at every order");
  return internal::RoundUpConservatively(best);
}

StatusOr<double> GaussianRdpEpsilonForDelta(double noise_multiplier, double delta) {
  if (!(noise_multiplier > 0.0) || !std::isfinite(noise_multiplier)) {
    return InvalidArgumentError("noise multiplier must be finite and > 0, got " +
                                FormatDouble(noise_multiplier));
  }
  const std::vector<double>& orders = DefaultRdpOrders();
  std::vector<double> rdp(orders.size());
  for (size_t i = 0; i < orders.size(); ++i) rdp[i] = GaussianRdp(noise_multiplier, orders[i]);
  return RdpToEpsilon(orders, rdp, delta);
}

// The certified epsilon decreases in z: bracket geometrically, then bisect
// (the bracket's top always meets the target).
StatusOr<double> CalibrateGaussianRdp(double epsilon, double delta) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) {
    return InvalidArgumentError("epsilon must be finite and > 0, got " + FormatDouble(epsilon));
  }
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  const auto meets = [&](double z) {
    const StatusOr<double> e = GaussianRdpEpsilonForDelta(z, delta);
    return e.ok() && *e <= epsilon;
  };
  double lo = 1.0;
  while (meets(lo) && lo > 1e-300) lo *= 0.5;
  double hi = 2.0 * lo;
  while (!meets(hi)) {
    if (!(hi < 1e300)) return OutOfRangeError("no noise multiplier meets the target");
    lo = hi;
    hi *= 2.0;
  }
  DPEM_ASSIGN_OR_RETURN(const internal::Bracket bracket,
                        internal::BisectThreshold(meets, lo, hi, 1e-10));
  return bracket.hi;
}

}  // namespace dpem
