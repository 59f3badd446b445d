// The privacy guarantee a fit reports: what every model's guarantee shares.
//
// A fit fills it from its calibration (the target), its own ledger (every
// release it made, re-accounted after the fit: the certified epsilon) and
// the reasons, if any, why the guarantee does not hold (a seeded generator,
// a bound taken from the data, a mechanism that is not private). Each model
// family extends it with what is its own (GmmGuarantee, KmeansGuarantee,
// FaGuarantee, GradientEmGuarantee), and every model file writes it through
// one piece of code (docs/architecture.md, "Model files").
//
// Thread safety: a value type.
#ifndef DPEM_ACCOUNTING_GUARANTEE_H_
#define DPEM_ACCOUNTING_GUARANTEE_H_

#include <string>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"

namespace dpem {

struct PrivacyGuarantee {
  // False for a plain fit (epsilon infinite): then nothing below is claimed.
  bool is_private = false;
  // What the caller asked for: total (epsilon, delta).
  double target_epsilon = 0.0;
  double target_delta = 0.0;
  // What `accountant` certifies for `ledger` at `delta` (<= target_epsilon).
  double epsilon = 0.0;
  double delta = 0.0;
  AccountantKind accountant = kDefaultAccountant;
  // Every release the fit made, in order (a released domain's first).
  PrivacyLedger ledger;
  // True if the guarantee does not hold; `void_reasons` says why.
  bool guarantee_void = false;
  std::vector<std::string> void_reasons;
};

// Sets the shared fields of `g` before any release: whether the fit is
// private, its target (epsilon, delta), the delta it certifies at, and its
// accountant. Leaves a model's own fields alone.
void StartGuarantee(bool is_private, double epsilon, double delta, AccountantKind accountant,
                    PrivacyGuarantee& g);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_GUARANTEE_H_
