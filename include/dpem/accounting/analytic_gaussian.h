// The exact privacy profile of the Gaussian mechanism, and calibration by it.
//
// Balle and Wang, "Improving the Gaussian Mechanism for Differential Privacy:
// Analytical Calibration and Optimal Denoising", ICML 2018, Theorem 8: the
// Gaussian mechanism with L2 sensitivity Delta and noise N(0, sigma^2 I) is
// (epsilon, delta)-DP if and only if
//   delta >= Phi(Delta/(2 sigma) - epsilon sigma/Delta)
//            - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta).
// Everything here is in terms of the noise multiplier z = sigma / Delta.
//
// These functions are pure and thread-safe.
#ifndef DPEM_ACCOUNTING_ANALYTIC_GAUSSIAN_H_
#define DPEM_ACCOUNTING_ANALYTIC_GAUSSIAN_H_

#include "dpem/status.h"

namespace dpem {

// The smallest delta for which a Gaussian mechanism with noise multiplier z
// is (epsilon, delta)-DP (Balle-Wang Thm 8). Requires z > 0, epsilon >= 0.
// The result is rounded up, never down: it carries an explicit bound on the
// rounding error of the difference (and an allowance of 4 DBL_MIN for
// underflow), and is clamped to [0, 1]. Thus it is never below ~8.9e-308.
StatusOr<double> GaussianDeltaForEpsilon(double noise_multiplier,
                                         double epsilon);

// The smallest epsilon >= 0 for which the Gaussian mechanism with noise
// multiplier z is (epsilon, delta)-DP. Requires z > 0, 0 < delta < 1.
// The result is an upper bound on the exact value (bisection bracket's top,
// relative width 1e-10). OutOfRange if delta is below the resolution of
// GaussianDeltaForEpsilon (about 1e-307).
StatusOr<double> GaussianEpsilonForDelta(double noise_multiplier, double delta);

// The smallest noise multiplier z for which the Gaussian mechanism is
// (epsilon, delta)-DP: the analytic Gaussian mechanism for one-shot releases.
// Requires epsilon > 0, 0 < delta < 1. The result is rounded up (bisection
// bracket's top, relative width 1e-10).
StatusOr<double> CalibrateAnalyticGaussian(double epsilon, double delta);

// The classical calibration z = sqrt(2 ln(1.25/delta)) / epsilon (Dwork and
// Roth 2014, Thm 3.22), which the papers use and which is valid only for
// epsilon < 1. dpem uses it only to express a noise level as a per-release
// budget (epsilon_i, delta_i), as park2017 Sec. 5 does. Requires epsilon > 0,
// 0 < delta < 1.
StatusOr<double> ClassicGaussianNoiseMultiplier(double epsilon, double delta);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_ANALYTIC_GAUSSIAN_H_
