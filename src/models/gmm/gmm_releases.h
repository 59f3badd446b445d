// The releases of one iteration of a private Gaussian-mixture fit
// (dpem/models/gmm/private_gmm.h), made by its plan
// (models/gmm/gmm_release_plan.h): the statistics replaced by their noisy
// releases, each recorded in the fit's ledger under "iteration j / ...", and
// park2016's unsafe covariance mechanisms. Private to the library.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_GMM_GMM_RELEASES_H_
#define DPEM_MODELS_GMM_GMM_RELEASES_H_

#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_release_plan.h"

namespace dpem::internal {

// Replaces the statistics `s` of iteration `it` by their noisy releases by
// `plan`, recording each release in `ledger`: the joint release, or the
// counts, then per component its sums and (unless `unsafe`: park2016's
// mechanisms release the covariances instead) its second moment. The exact
// log-likelihood is dropped: nothing downstream may see it. No
// post-processing (FinishRelease). Requires the shapes of `s` to match the
// plan's (K components, d dimensions, its type).
Status AddReleaseNoise(GmmStatistics& s, const GmmReleasePlan& plan, bool unsafe, int it,
                       Generator& gen, PrivacyLedger& ledger);

// AddReleaseNoise, then the released counts projected to n times a point of
// the simplex.
Status PrivatizeGmmStatistics(GmmStatistics& s, const GmmReleasePlan& plan, bool unsafe, int it,
                              double n, Generator& gen, PrivacyLedger& ledger);

// The post-processing of released statistics `s` (AddReleaseNoise's output,
// or a pool of such releases: models/gmm/gmm_adaptive.h) of an E-step in
// `frames`: the counts projected to n times a point of the simplex, then, if
// `correct` and there are frames, the clip correction (CorrectFrameClipping).
Status FinishRelease(GmmStatistics& s, const std::vector<ComponentFrame>& frames, bool correct,
                     double n);

// The releases of iteration `it` of a fit whose E-step ran in `frames` (none:
// the plain pass), then, if `correct` and there are frames, the clip
// correction (CorrectFrameClipping) of the RELEASED statistics. This is the
// one place the two are put in order, and the order is the guarantee: the
// correction multiplies a component's sums and second moments by up to
// kMaxClipCorrection, so applied before the noise it would scale each
// record's contribution past its frame's ball and the release's sensitivity
// (docs/privacy.md, Theorem 1) would no longer bound it. After the release it
// is post-processing. gmm_frame_clip_statistical_test.cc fails if the order is
// swapped (the noise would then not be scaled with the statistics). If
// `released` is set, it receives the release before its post-processing
// (FinishRelease), for a pool.
Status ReleaseIterationStatistics(GmmStatistics& s, const GmmReleasePlan& plan,
                                  const std::vector<ComponentFrame>& frames, bool correct,
                                  bool unsafe, int it, double n, Generator& gen,
                                  PrivacyLedger& ledger, GmmStatistics* released = nullptr);

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
