// Composition theorems for (epsilon, delta)-DP mechanisms, and the
// concentrated-DP notions the papers use, as plain formulas.
//
// accountant.h applies these to a ledger; this header is the formula layer,
// each function one theorem, cited. All results that are privacy parameters
// are rounded up (never reported smaller than the exact value of the formula).
//
// Functions here are pure and thread-safe.
#ifndef DPEM_ACCOUNTING_COMPOSITION_H_
#define DPEM_ACCOUNTING_COMPOSITION_H_

#include <span>

#include "dpem/status.h"

namespace dpem {

// A per-mechanism or total (epsilon, delta)-DP guarantee.
struct EpsDelta {
  double epsilon = 0.0;
  double delta = 0.0;
};

// Basic (linear) composition (Dwork and Roth 2014, Thm. 3.16): the sum of the
// epsilons and the sum of the deltas. Requires every epsilon finite and >= 0
// and delta in [0, 1) (InvalidArgument naming mechanisms[i]).
StatusOr<EpsDelta> ComposeLinear(std::span<const EpsDelta> mechanisms);

// Advanced composition (Dwork, Rothblum and Vadhan 2010; Dwork and Roth 2014,
// Thm. 3.20), in its heterogeneous form (the same proof via Azuma's inequality
// with per-step bounds eps_r):
//   epsilon = sqrt(2 ln(1/delta_slack) sum_r eps_r^2) + sum_r eps_r (e^{eps_r} - 1),
//   delta   = delta_slack + sum_r delta_r.
// For k equal mechanisms this is the papers' formula. Requires
// 0 < delta_slack < 1 and the mechanisms as for ComposeLinear.
StatusOr<EpsDelta> ComposeAdvanced(std::span<const EpsDelta> mechanisms,
                                   double delta_slack);

// Optimal composition (Kairouz, Oh and Viswanath 2015, Thm. 3.3, in the
// general-epsilon form of Murtagh and Vadhan 2016): the smallest epsilon such
// that the adaptive composition of the given mechanisms is
// (epsilon, delta_total)-DP, computed exactly from the composition of the
// dominating randomized-response pairs:
//   delta_total = 1 - prod_r (1 - delta_r) (1 - delta_rr(epsilon)),
// where delta_rr is the hockey-stick divergence of the composed randomized
// responses. The randomized-response losses depend on eps_r only, so
// mechanisms with equal eps_r are grouped (delta_r enters only through the
// product; eps_r = 0 mechanisms add no loss and form no group); the work is
// the product over groups of (group size + 1), refused (InvalidArgument) above
// kKovMaxAtoms. Requires every eps_r finite and >= 0, delta_r in [0, 1) and
// 0 < delta_total < 1; fails (InvalidArgument) if
// delta_total <= 1 - prod_r (1 - delta_r). The result is the top of a
// bisection bracket of relative width 1e-10 on an upper bound of delta (with
// explicit floating-point error margins), never above the linear sum of eps_r.
// An empty list gives 0.
inline constexpr double kKovMaxAtoms = 2e7;
StatusOr<double> ComposeOptimalEpsilon(std::span<const EpsDelta> mechanisms,
                                       double delta_total);

// Mean-concentrated DP (Dwork and Rothblum 2016): the privacy loss has mean
// at most mu and, centred, is subgaussian with parameter tau.
//
// The conversions below that return a plain value cannot report errors: a
// NaN or negative argument gives NaN parameters, which every StatusOr
// function here rejects (InvalidArgument). A noise multiplier of 0 gives
// infinite parameters.
struct MeanConcentrated {
  double mu = 0.0;
  double tau = 0.0;
};

// Dwork-Rothblum Thm. 3.5: an eps-DP mechanism is (eps (e^eps - 1)/2, eps)-mCDP.
MeanConcentrated PureDpToMcdp(double epsilon);
// Dwork-Rothblum Thm. 3.2: the Gaussian mechanism with noise multiplier z is
// (tau^2/2, tau)-mCDP with tau = 1/z.
MeanConcentrated GaussianMcdp(double noise_multiplier);
// Dwork-Rothblum Thm. 3.4: composition adds mu and adds tau^2.
MeanConcentrated ComposeMcdp(std::span<const MeanConcentrated> mechanisms);
// The subgaussian tail bound: P[L > mu + tau sqrt(2 ln(1/delta))] <= delta, so
// (mu, tau)-mCDP implies (mu + tau sqrt(2 ln(1/delta)), delta)-DP.
// Requires 0 < delta < 1.
StatusOr<double> McdpToEpsilon(MeanConcentrated mcdp, double delta);

// Zero-concentrated DP (Bun and Steinke 2016): Prop. 1.4, an eps-DP mechanism
// is eps^2/2-zCDP.
double PureDpToZcdp(double epsilon);
// Bun-Steinke Prop. 1.6: the Gaussian mechanism with noise multiplier z is
// 1/(2 z^2)-zCDP.
double GaussianZcdp(double noise_multiplier);
// Bun-Steinke Prop. 1.3, the conversion the papers use:
// rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP.
// Requires rho >= 0, 0 < delta < 1.
StatusOr<double> ZcdpToEpsilon(double rho, double delta);
// The tight conversion: rho-zCDP is (alpha, alpha rho)-RDP for every
// alpha > 1; apply Canonne-Kamath-Steinke Prop. 12 and minimise over real
// alpha (not a grid). Never larger than ZcdpToEpsilon.
// Requires rho >= 0, 0 < delta < 1.
StatusOr<double> ZcdpToEpsilonTight(double rho, double delta);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_COMPOSITION_H_
