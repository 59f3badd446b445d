// A fit's guarantee: see dpem/accounting/guarantee.h.
#include "dpem/accounting/guarantee.h"

namespace dpem {

void StartGuarantee(bool is_private, double epsilon, double delta, AccountantKind accountant,
                    PrivacyGuarantee& g) {
  g.is_private = is_private;
  g.target_epsilon = epsilon;
  g.target_delta = delta;
  g.delta = delta;
  g.accountant = accountant;
}

}  // namespace dpem
