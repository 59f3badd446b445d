// The release plan of a private k-means fit (dpem/models/kmeans/kmeans.h,
// docs/kmeans.md): the noise of each iteration's release of counts and sums
// by the fit's method (calibrated once, or DPLloyd's eps/J split), the
// private start's release, the check of those releases on public values
// before any record is read, and the releases themselves. Private to the
// library.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_KMEANS_KMEANS_RELEASE_PLAN_H_
#define DPEM_MODELS_KMEANS_KMEANS_RELEASE_PLAN_H_

#include <Eigen/Core>

#include <cmath>
#include <optional>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"
#include "models/start/private_start.h"

namespace dpem::internal {

// How one iteration releases its statistics.
struct KmeansReleasePlan {
  KmeansMethod method = KmeansMethod::kCdpGauss;
  // Noise multiplier of each release kind, in pattern order (one kind for
  // the joint releases, counts then sums for kCdpLaplace).
  std::vector<double> multipliers;
  int releases_per_iteration = 1;
  double sensitivity_joint = 0.0;  // Joint releases: L2 (Gaussian) or L1.
  // The private start's release (models/start/private_start.h), if it starts so.
  std::optional<PrivateStartPlan> start;

  // Standard deviation of the noise on one coordinate of a sum.
  double SumsNoiseStddev(Eigen::Index d) const {
    if (method == KmeansMethod::kCdpGauss) return multipliers[0] * sensitivity_joint;
    const double b = method == KmeansMethod::kCdpLaplace
                         ? multipliers[1] * KmeansSumsL1Sensitivity(d)
                         : multipliers[0] * sensitivity_joint;
    return std::sqrt(2.0) * b;  // Laplace(b) has variance 2 b^2.
  }
};

// The plan of a private fit with options `o` (Validate() OK, iterations
// resolved, epsilon finite) of n records in d dimensions: DPLloyd's eps/J
// split, or the noise calibrated by the method's accountant for the J
// iterations and, if the fit starts privately, the start's release.
StatusOr<KmeansReleasePlan> MakeKmeansReleasePlan(const KmeansFitOptions& o, Eigen::Index n,
                                                  Eigen::Index d);

// The default J of a private fit from the private start of n records in d
// dimensions (docs/kmeans.md, "Choosing J"): 1 if the noise on a centre of
// a typical cluster, were the iterations' whole budget spent on one
// release, is large against the unit ball,
//   r = sigma_1 sqrt(d) / (n / K) >= kNoisyCentreRatio
// (sigma_1: the standard deviation of the noise on one coordinate of a sum
// in that release; n / K: a cluster's count if they were equal); otherwise
// kDefaultPrivateStartIterations (models/fit_defaults.h). Every later
// iteration would then move a centre by noise alone more than the start's
// error it could correct. Public values only (n is public under
// replace-one neighbours); nothing is drawn.
StatusOr<int> DefaultPrivateStartIterations(const KmeansFitOptions& o, Eigen::Index n,
                                            Eigen::Index d);

// Checks one iteration's releases for K centres in d dimensions on public
// values alone, drawing nothing, before the data is read: a release that
// cannot be made fails there, not after a pass (review finding). Checks the
// start's release too, if `plan` has one.
Status CheckKmeansReleases(const KmeansReleasePlan& plan, Eigen::Index k, Eigen::Index d);

// Replaces the exact statistics `s` of iteration `it` by their release by
// `plan` (cdp-laplace's counts and sums, or one joint release of both),
// recorded in `ledger`; drops the exact sse.
Status PrivatizeKmeansStatistics(KmeansStatistics& s, const KmeansReleasePlan& plan, int it,
                                 Generator& gen, PrivacyLedger& ledger);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_KMEANS_KMEANS_RELEASE_PLAN_H_
