// The starting point of a Gaussian-mixture fit (GmmFitOptions::init,
// docs/gmm.md "Starting points"): one entry point, one function per kind of
// start, so that a new start (the private one) plugs in here. Private to the
// library.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_GMM_GMM_INIT_H_
#define DPEM_MODELS_GMM_GMM_INIT_H_

#include <Eigen/Core>

#include "dpem/data/row_source.h"
#include "dpem/accounting/ledger.h"
#include "dpem/engine/engine.h"
#include "models/start/private_start.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::internal {

// The unit-ball parameters a fit starts from, by options.ResolvedInit():
// RandomGmmStart, KmeansGmmStart or PrivateGmmStart. `unit` holds the
// records in the unit ball (UnitBallRowSource). Requires options.Validate()
// OK and K <= unit.rows(). The private start releases by `start` (its
// plan, models/start/private_start.h) into `ledger`; both must be set for it and
// are unused otherwise. A private fit never gets a start that
// reads `unit` without noise.
StatusOr<GmmParameters> InitialGmmParameters(const RowSource& unit,
                                             const GmmFitOptions& options,
                                             const PrivateStartPlan* start,
                                             const Engine& engine,
                                             Generator& gen, PrivacyLedger* ledger);

// The private start (models/start/private_start.h) as mixture parameters: the K
// sketch clusters' centres as means, their weights (each at least
// kMinStartWeight / K, renormalised) as mixing weights, and isotropic
// covariances v I, v the larger of spread / d (the sketch's spread about the
// centre) and (h / frame_radius)^2, h half the distance to the nearest other
// centre, clamped to [covariance_floor, 1 / (d + 2)]: generous, so that a
// component frame (models/gmm/gmm_frames.h) built from the start reaches half
// way to the next component and the covariance can shrink to its cluster
// rather than grow from too small a frame. The plan's releases, recorded in
// `ledger`.
StatusOr<GmmParameters> PrivateGmmStart(const RowSource& unit, CovarianceType type,
                                        double covariance_floor, double frame_radius,
                                        const PrivateStartPlan& plan,
                                        const Engine& engine, Generator& gen,
                                        PrivacyLedger& ledger);

// The smallest mixing weight of the private start, times 1 / K: a cluster of
// the sketch with (almost) no weight still gets records in the first E-step.
inline constexpr double kMinStartWeight = 0.1;

// Means uniform in the unit ball (direction a normalised Gaussian, radius
// U^(1/d)), equal weights, covariances I / (d + 2). Never looks at data.
StatusOr<GmmParameters> RandomGmmStart(int k, Eigen::Index d, CovarianceType type,
                                       Generator& gen);

// scikit-learn's init_params="kmeans": k-means++ and Lloyd
// (models/start/kmeans_plusplus.h) on `unit`, then one MLE M-step from the hard
// assignment to the final centres (weights, means and covariances of the
// clusters, the covariance floor added). A cluster left empty keeps its
// centre, covariance I / (d + 2) and weight 0. Reads the data without noise.
StatusOr<GmmParameters> KmeansGmmStart(const RowSource& unit, int k, CovarianceType type,
                                       double covariance_floor, int max_iterations,
                                       const Engine& engine, Generator& gen);

// The start's parameters `start`, whose covariances are isotropic (the
// private and random starts), read as a fit of the lighter `type` for a
// lighter first iteration (GmmFitOptions::FirstIterationCovariance): each
// covariance replaced by its mean variance times I (kSpherical) or by its
// diagonal (kDiagonal), exact for an isotropic one. Post-processing.
GmmParameters StartReadAs(GmmParameters start, CovarianceType type);

// The sufficient statistics of `type` of the hard assignment of every record
// to its nearest centre (responsibilities 0 or 1); log_likelihood is 0.
StatusOr<GmmStatistics> HardAssignmentStatistics(const RowSource& x,
                                                 const Eigen::MatrixXd& centres,
                                                 CovarianceType type, const Engine& engine);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_INIT_H_
