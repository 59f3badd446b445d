// The exact privacy profile of the Gaussian mechanism (Balle and Wang 2018,
// Thm. 8) and the calibrations built on it (see analytic_gaussian.h).
//
// Soundness. With z the noise multiplier, A = 1/(2z) - eps z and
// B = -1/(2z) - eps z, the exact profile is
//   delta(eps) = Phi(A) - e^eps Phi(B).
// Both terms are evaluated as exp(log-value) with internal::LogNormalCdf, so
// e^eps never overflows and Phi never underflows prematurely. The difference
// can cancel, so the reported value is
//   Phi(A)~ - (e^eps Phi(B))~ + err(A) + err(B) + kUnderflowAllowance,
// clamped to [0, 1], where err(.) is an explicit bound on the absolute
// rounding error of the computed term (TermWithErrorBound) and the allowance
// covers terms whose exact value lies in the subnormal range. Every value
// this file reports is therefore >= the exact delta, and the bisections
// return the end of their bracket at which this upper bound meets the target.
#include "dpem/accounting/analytic_gaussian.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "internal/numeric.h"

namespace dpem {
namespace {

// Relative width of the final bisection brackets.
constexpr double kBisectionRelativeTolerance = 1e-10;
// Multiple of DBL_EPSILON (= 2u) per unit of "magnitude" in the error bound
// of one exponentiated term (see TermWithErrorBound); generous by design.
constexpr double kTermErrorFactor = 8.0 * DBL_EPSILON;
// Absolute allowance for terms whose exact value is subnormal or underflows:
// exp() there has absolute error below DBL_MIN, far below this allowance.
constexpr double kUnderflowAllowance = 4.0 * DBL_MIN;

std::string FormatDouble(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", x);
  return buffer;
}

Status CheckNoiseMultiplier(double z) {
  if (std::isfinite(z) && z > 0.0) return OkStatus();
  return InvalidArgumentError("noise_multiplier must be finite and > 0, got " +
                              FormatDouble(z));
}

Status CheckEpsilon(double eps, bool allow_zero) {
  if (std::isfinite(eps) && (eps > 0.0 || (allow_zero && eps == 0.0))) {
    return OkStatus();
  }
  return InvalidArgumentError(std::string("epsilon must be finite and ") +
                              (allow_zero ? ">= 0" : "> 0") + ", got " +
                              FormatDouble(eps));
}

Status CheckDelta(double delta) {
  if (delta > 0.0 && delta < 1.0) return OkStatus();
  return InvalidArgumentError("delta must be in (0, 1), got " + FormatDouble(delta));
}

struct BoundedTerm {
  double value;
  double error;  // Upper bound on |computed value - exact value|.
};

// exp(shift + log Phi(x)), the one term of Balle-Wang Thm. 8 (shift = 0 for
// Phi(A), shift = eps for e^eps Phi(B)), with an absolute error bound.
// Error budget, in units of DBL_EPSILON relative to the term (exp turns an
// absolute error in its argument into the same relative error):
//   - x = +-1/(2z) - eps z is computed with absolute error <= 2 ulp of
//     `x_scale` = 1/(2z) + eps z, and d log Phi/dx = phi/Phi <= |x| + 1, so
//     log Phi(x) moves by <= (|x| + 1) x_scale;
//   - log Phi itself (erfc + log, or the series) errs by <= 4 + |log Phi|;
//   - the sum shift + log Phi errs by <= shift + |log Phi|.
// kTermErrorFactor = 8 DBL_EPSILON per unit covers all of these with room.
BoundedTerm TermWithErrorBound(double shift, double x, double x_scale) {
  const double log_phi = internal::LogNormalCdf(x);
  const double value = std::exp(shift + log_phi);
  if (value == 0.0) return {0.0, 0.0};  // Exact value is < DBL_MIN here.
  const double magnitude =
      1.0 + shift + std::fabs(log_phi) + (std::fabs(x) + 1.0) * x_scale;
  return {value, value * kTermErrorFactor * magnitude};
}

// Balle-Wang Thm. 8, rounded up by an explicit error bound and clamped to
// [0, 1]. Requires z > 0 and eps >= 0, both finite.
double DeltaUpperBound(double z, double eps) {
  const double half_inverse = 0.5 / z;
  const double shift = eps * z;
  const double x_scale = half_inverse + shift;
  const BoundedTerm first = TermWithErrorBound(0.0, half_inverse - shift, x_scale);
  const BoundedTerm second = TermWithErrorBound(eps, -half_inverse - shift, x_scale);
  const double delta = (first.value - second.value) + first.error + second.error +
                       kUnderflowAllowance;
  if (std::isnan(delta)) return 1.0;  // Only from an infinite error bound.
  return std::clamp(delta, 0.0, 1.0);
}

}  // namespace

// Balle and Wang 2018, Thm. 8 (see the file comment for the rounding).
StatusOr<double> GaussianDeltaForEpsilon(double noise_multiplier, double epsilon) {
  DPEM_RETURN_IF_ERROR(CheckNoiseMultiplier(noise_multiplier));
  DPEM_RETURN_IF_ERROR(CheckEpsilon(epsilon, /*allow_zero=*/true));
  return DeltaUpperBound(noise_multiplier, epsilon);
}

// Balle and Wang 2018, Thm. 8 inverted in eps by bisection; delta(eps) is
// decreasing in eps, and the top of the final bracket satisfies it.
StatusOr<double> GaussianEpsilonForDelta(double noise_multiplier, double delta) {
  DPEM_RETURN_IF_ERROR(CheckNoiseMultiplier(noise_multiplier));
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  const auto meets = [&](double eps) {
    return DeltaUpperBound(noise_multiplier, eps) <= delta;
  };
  if (meets(0.0)) return 0.0;
  auto hi = internal::ExpandUntil(meets, 1.0);
  if (!hi.ok()) {
    return OutOfRangeError("delta " + FormatDouble(delta) +
                           " is below the resolution of the Gaussian profile");
  }
  const double lo = *hi > 1.0 ? 0.5 * *hi : 0.0;
  DPEM_ASSIGN_OR_RETURN(internal::Bracket bracket,
                        internal::BisectThreshold(meets, lo, *hi,
                                                  kBisectionRelativeTolerance));
  return bracket.hi;
}

// Balle and Wang 2018, Thm. 8 (their Algorithm 1 solves the same equation):
// delta(z) is decreasing in z; bracket geometrically from z = 1, then bisect.
StatusOr<double> CalibrateAnalyticGaussian(double epsilon, double delta) {
  DPEM_RETURN_IF_ERROR(CheckEpsilon(epsilon, /*allow_zero=*/false));
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  const auto meets = [&](double z) { return DeltaUpperBound(z, epsilon) <= delta; };
  double lo = 1.0, hi = 2.0;
  if (meets(1.0)) {
    // Shrink z = 1/w until the target fails; z -> 0 gives delta -> 1.
    const auto fails = [&](double w) { return !meets(1.0 / w); };
    DPEM_ASSIGN_OR_RETURN(const double w, internal::ExpandUntil(fails, 2.0));
    lo = 1.0 / w;
    hi = 2.0 / w;
  } else {
    auto expanded = internal::ExpandUntil(meets, 2.0);
    if (!expanded.ok()) {
      return OutOfRangeError("delta " + FormatDouble(delta) +
                             " is below the resolution of the Gaussian profile");
    }
    hi = *expanded;
    lo = 0.5 * hi;
  }
  DPEM_ASSIGN_OR_RETURN(internal::Bracket bracket,
                        internal::BisectThreshold(meets, lo, hi,
                                                  kBisectionRelativeTolerance));
  return bracket.hi;
}

// Dwork and Roth 2014, Thm. 3.22: z = sqrt(2 ln(1.25/delta)) / eps, rounded
// up (a larger z is always at least as private).
StatusOr<double> ClassicGaussianNoiseMultiplier(double epsilon, double delta) {
  DPEM_RETURN_IF_ERROR(CheckEpsilon(epsilon, /*allow_zero=*/false));
  DPEM_RETURN_IF_ERROR(CheckDelta(delta));
  return internal::RoundUpConservatively(std::sqrt(2.0 * std::log(1.25 / delta)) /
                                         epsilon);
}

}  // namespace dpem
