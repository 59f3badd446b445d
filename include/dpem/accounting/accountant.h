// Accountants: from a ledger of releases to an (epsilon, delta) guarantee.
//
// Each accountant is one composition method; all are sound (they never report
// an epsilon below the truth) but differ in tightness. The papers' methods are
// here for reproduction; the default is the tightest:
//
//   linear      basic composition (Dwork-Roth Thm. 3.16)
//   advanced    advanced composition (Dwork-Rothblum-Vadhan), as the papers
//   kov         optimal composition of (eps, delta)-DP mechanisms
//               (Kairouz-Oh-Viswanath 2015)
//   mcdp        mean-concentrated DP as park2016 uses it (Dwork-Rothblum 2016)
//   zcdp        zCDP with the papers' conversion rho + 2 sqrt(rho ln 1/delta)
//   zcdp-tight  zCDP with the conversion of Canonne-Kamath-Steinke Prop. 12
//   ma          the moments accountant of park2017, lambda = 1..100
//   rdp         Renyi DP over DefaultRdpOrders() with the CKS conversion
//               (the default: kDefaultAccountant)
//
// How the (eps, delta)-DP composition accountants (linear, advanced, kov)
// treat a Gaussian release: it has no single (eps, delta); it satisfies
// (eps_r(delta_r), delta_r)-DP for every delta_r, with eps_r from the exact
// analytic-Gaussian profile (analytic_gaussian.h). The accountant gives every
// Gaussian release the same delta_r and chooses how to split the target delta
// between the releases and the composition's own slack by the named rule
// DeltaSplitRule::kOptimised: minimise epsilon over the slack's share (every
// candidate split gives a valid bound, so the minimum is one too). A Laplace
// release is (1/z, 0)-DP.
//
// Thread safety: pure functions of their arguments.
#ifndef DPEM_ACCOUNTING_ACCOUNTANT_H_
#define DPEM_ACCOUNTING_ACCOUNTANT_H_

#include <string_view>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/status.h"

namespace dpem {

enum class AccountantKind {
  kLinear,
  kAdvanced,
  kKov,
  kMcdp,
  kZcdp,
  kZcdpTight,
  kMoments,
  kRdp,
};

// The tightest accountant, used where the user names none.
inline constexpr AccountantKind kDefaultAccountant = AccountantKind::kRdp;

// The CLI name: "linear", "advanced", "kov", "mcdp", "zcdp", "zcdp-tight",
// "ma", "rdp".
std::string_view AccountantName(AccountantKind kind);
// Parses an accountant's CLI name; InvalidArgument listing the accepted names
// otherwise.
StatusOr<AccountantKind> ParseAccountantKind(std::string_view name);
// Every accountant, in the order above.
const std::vector<AccountantKind>& AllAccountants();
// "linear, advanced, kov, ..." for help and error messages.
std::string AccountantNameList();

// How the (eps, delta)-composition accountants divide the target delta
// between per-release deltas (of Gaussian releases) and the composition's
// slack. Only one rule exists now; the enum names it in outputs.
enum class DeltaSplitRule {
  // Minimise epsilon over the share f in (0, 1) of delta given to the
  // Gaussian releases (each gets f delta / n_gaussian), by a grid search in
  // f refined by golden-section search.
  kOptimised,
};

// The epsilon at `delta` of ONE Gaussian release with noise multiplier z:
// the exact analytic-Gaussian value (Balle and Wang 2018) for continuous
// noise; for discrete noise the Renyi conversion GaussianRdpEpsilonForDelta
// (rdp.h), since the exact curve is the continuous Gaussian's and is not
// proven for the multivariate discrete Gaussian. Requires z > 0,
// 0 < delta < 1.
StatusOr<double> SingleGaussianEpsilon(double noise_multiplier, double delta,
                                       NoiseSampling sampling);

// The smallest noise multiplier (rounded up) of one Gaussian release that
// SingleGaussianEpsilon certifies within (epsilon, delta) for `sampling`.
// Requires epsilon > 0, 0 < delta < 1.
StatusOr<double> CalibrateSingleGaussian(double epsilon, double delta, NoiseSampling sampling);

// The smallest epsilon that `kind` certifies for all releases in `ledger`
// together, at total `delta`. Requires 0 < delta < 1. An empty ledger costs
// epsilon 0. The result is never below the exact
// epsilon of the composition the formula bounds (conservative rounding).
StatusOr<double> ComputeEpsilon(const PrivacyLedger& ledger, double delta,
                                AccountantKind kind);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_ACCOUNTANT_H_
