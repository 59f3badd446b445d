// The releases of one iteration of a private Gaussian-mixture fit
// (dpem/models/gmm/private_gmm.h), made by its plan
// (models/gmm/gmm_release_plan.h): the statistics replaced by their noisy
// releases, each recorded in the fit's ledger under "iteration j / ...", and
// park2016's unsafe covariance mechanisms. Private to the library.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_GMM_GMM_RELEASES_H_
#define DPEM_MODELS_GMM_GMM_RELEASES_H_

#include "dpem/accounting/ledger.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"
#include "models/gmm/gmm_release_plan.h"

namespace dpem::internal {

// Replaces the statistics `s` of iteration `it` by their noisy releases by
// `plan`, recording each release in `ledger`: the joint release, or the
// counts, then per component its sums and (unless `unsafe`: park2016's
// mechanisms release the covariances instead) its second moment. The
// released counts are projected to n times a point of the simplex. The exact
// log-likelihood is dropped: nothing downstream may see it. Requires the
// shapes of `s` to match the plan's (K components, d dimensions, its type).
Status PrivatizeGmmStatistics(GmmStatistics& s, const GmmReleasePlan& plan, bool unsafe, int it,
                              double n, Generator& gen, PrivacyLedger& ledger);

// park2016 Sec. 4: Gamma noise on spherical variances, Wishart noise on full
// covariances, each at the per-release budget epsilon_i, with the sensitivity
// the paper gives (1/(d N~_k) for a variance, 1/N~_k for a covariance). `p`
// holds the M-step's parameters of iteration `it` from the released
// statistics `noisy`; its covariances are replaced by their releases,
// recorded in `ledger` as unsafe (they void the guarantee). Not for diagonal
// covariances (GmmFitOptions::Validate refuses them).
Status ApplyUnsafeGmmMechanisms(GmmParameters& p, const GmmStatistics& noisy, double eps_i,
                                int it, Generator& gen, PrivacyLedger& ledger);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_RELEASES_H_
