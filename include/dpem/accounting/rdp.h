// Renyi differential privacy (Mironov 2017) and the moments accountant of
// park2017 (Abadi et al. 2016), for the Laplace and Gaussian mechanisms.
//
// A mechanism is (alpha, tau)-RDP if the Renyi divergence of order alpha
// between its outputs on neighbours is at most tau. RDP composes by adding
// tau at each order. The moments accountant is RDP at integer orders in
// another parametrisation: its lambda-th log moment is lambda * tau(lambda+1).
//
// Functions here are pure and thread-safe.
#ifndef DPEM_ACCOUNTING_RDP_H_
#define DPEM_ACCOUNTING_RDP_H_

#include <span>
#include <vector>

#include "dpem/status.h"

namespace dpem {

// The default grid of Renyi orders: from 1 + 1e-4 up to 10^4 (past the 1024
// that issue 2 asks for; very small budgets need large orders), dense enough that the minimising order of
// any smooth RDP curve is within a fraction of a percent of a grid point.
// Sorted ascending; every order > 1. Concretely: alpha - 1 log-spaced with 40
// points per decade (ratio 10^(1/40) ~= 1.059) from 1e-4 upward, the top
// point being alpha = 1e4, merged with the integers 2..256 (573 orders).
// At ratio 1.059 the excess of the grid minimum of the Gaussian's
// epsilon(alpha) over the continuous minimum is below 0.1%.
const std::vector<double>& DefaultRdpOrders();

// RDP of the Gaussian mechanism at order alpha > 1: alpha / (2 z^2), where z
// is the noise multiplier sigma / Delta_2 (Mironov 2017, Prop. 7).
// Returns NaN if z <= 0 or alpha <= 1 (RdpToEpsilon rejects NaN).
double GaussianRdp(double noise_multiplier, double alpha);

// RDP of the Laplace mechanism with scale b = z * Delta_1 at order alpha > 1
// (Mironov 2017, Prop. 6), with eps0 = 1/z:
//   1/(alpha-1) log( alpha/(2 alpha-1) e^{(alpha-1) eps0}
//                    + (alpha-1)/(2 alpha-1) e^{-alpha eps0} ),
// computed in log space so that large alpha * eps0 does not overflow, and
// continuous as alpha -> 1 (limit: the KL divergence eps0 + e^{-eps0} - 1).
// alpha = +inf gives eps0. Rounded up by a bound on its rounding error
// (~1e-14 absolute near alpha = 1). Returns NaN if z <= 0 or alpha <= 1.
double LaplaceRdp(double noise_multiplier, double alpha);

// An upper bound on the RDP at order alpha > 1 of ANY pure epsilon-DP
// mechanism, used for the discrete Laplace (whose Renyi divergence exceeds
// the continuous Laplace's: scale 1, shift 1, order 1.5 gives 0.627 against
// LaplaceRdp's 0.513). Every epsilon-DP pair of output distributions is a
// post-processing of binary randomised response with parameter epsilon
// (Kairouz, Oh and Viswanath 2015, Thm. 2.1 with delta = 0), so by the data
// processing inequality its divergence is at most randomised response's:
//   1/(alpha-1) log( (e^{(alpha-1) eps} + e^{-alpha eps}) / (1 + e^{-eps}) ),
// evaluated with expm1/log1p, rounded up, and capped by the two simpler
// bounds eps (pure DP) and alpha eps^2 / 2 (Bun and Steinke 2016, Prop. 3.3),
// both also valid. alpha = +inf gives eps. Returns NaN if eps <= 0 or
// alpha <= 1.
double PureDpRdp(double epsilon, double alpha);

// The improved conversion from RDP to (epsilon, delta)-DP (Canonne, Kamath
// and Steinke 2020, Prop. 12; equal to Balle et al. 2020, Thm. 21): for each
// order alpha with RDP tau,
//   epsilon(alpha) = tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1),
// and the result is the minimum over the orders, clamped at 0 and rounded up.
// Requires orders.size() == rdp.size() > 0, every order finite and > 1,
// every rdp >= 0 (NaN is InvalidArgument), 0 < delta < 1. Orders whose rdp
// is +inf are skipped; OutOfRange if all are. Each candidate carries an
// explicit rounding-error bound before the minimum is taken.
StatusOr<double> RdpToEpsilon(std::span<const double> orders,
                              std::span<const double> rdp, double delta);

// The epsilon of ONE Gaussian release with noise multiplier z at `delta`
// through its Renyi curve alpha / (2 z^2) and RdpToEpsilon over
// DefaultRdpOrders(). Valid for the discrete Gaussian, whose Renyi
// divergence on integer shifts is at most the continuous one's (Canonne,
// Kamath and Steinke 2020, Prop. 5 and its multivariate form, Thm. 14);
// never below the continuous Gaussian's exact GaussianEpsilonForDelta.
// Requires z > 0, 0 < delta < 1.
StatusOr<double> GaussianRdpEpsilonForDelta(double noise_multiplier, double delta);

// The smallest noise multiplier z (rounded up: the top of a bisection
// bracket of relative width 1e-10) with GaussianRdpEpsilonForDelta(z, delta)
// <= epsilon: the calibration of a one-shot discrete Gaussian release.
// Requires epsilon > 0, 0 < delta < 1.
StatusOr<double> CalibrateGaussianRdp(double epsilon, double delta);

// The moments accountant's orders: lambda = 1, ..., kMomentsMaxLambda, as
// park2017 searches them (integers only, following Abadi et al. 2016).
inline constexpr int kMomentsMaxLambda = 100;

// park2017 Sec. 5: the lambda-th log moment of the Gaussian mechanism's
// privacy loss, (lambda^2 + lambda) / (2 z^2). Equals
// lambda * GaussianRdp(z, lambda + 1). Returns NaN if z <= 0 or lambda < 0.
double GaussianLogMoment(double noise_multiplier, int lambda);

// park2017 eq. (19) and supplement Sec. 2.1: the lambda-th log moment of the
// Laplace mechanism's privacy loss with eps = 1/z:
//   log[ (lambda+1)/(2 lambda+1) e^{lambda eps}
//        + lambda/(2 lambda+1) e^{-(lambda+1) eps} ].
// Equals lambda * LaplaceRdp(z, lambda + 1); rounded up by a bound on its
// rounding error. Returns NaN if z <= 0 or lambda < 0.
double LaplaceLogMoment(double noise_multiplier, int lambda);

// park2017 eq. (3) solved for epsilon: epsilon = min over lambda of
// (alpha(lambda) + log(1/delta)) / lambda, where log_moments[i] is the
// composed log moment at lambda = i + 1. Rounded up.
// Requires log_moments non-empty, each >= 0 (NaN is InvalidArgument), and
// 0 < delta < 1; +inf entries are skipped (OutOfRange if all are).
StatusOr<double> LogMomentsToEpsilon(std::span<const double> log_moments,
                                     double delta);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_RDP_H_
