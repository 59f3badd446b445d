// The starting point of a Gaussian-mixture fit (GmmFitOptions::init,
// docs/gmm.md "Starting points"): one entry point, one function per kind of
// start, so that a new start (the private one) plugs in here. Private to the
// library.
//
// Thread safety: pure functions of their arguments (advancing the Generator).
#ifndef DPEM_MODELS_GMM_INIT_H_
#define DPEM_MODELS_GMM_INIT_H_

#include <Eigen/Core>

#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/gmm.h"
#include "dpem/models/private_gmm.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::internal {

// The unit-ball parameters a fit starts from, by options.ResolvedInit():
// RandomGmmStart or KmeansGmmStart. `unit` holds the records in the unit
// ball (UnitBallRowSource). Requires options.Validate() OK and
// K <= unit.rows(). A private fit gets a start that never reads `unit`.
StatusOr<GmmParameters> InitialGmmParameters(const RowSource& unit,
                                             const GmmFitOptions& options,
                                             const Engine& engine, Generator& gen);

// Means uniform in the unit ball (direction a normalised Gaussian, radius
// U^(1/d)), equal weights, covariances I / (d + 2). Never looks at data.
StatusOr<GmmParameters> RandomGmmStart(int k, Eigen::Index d, CovarianceType type,
                                       Generator& gen);

// scikit-learn's init_params="kmeans": k-means++ and Lloyd
// (models/kmeans_plusplus.h) on `unit`, then one MLE M-step from the hard
// assignment to the final centres (weights, means and covariances of the
// clusters, the covariance floor added). A cluster left empty keeps its
// centre, covariance I / (d + 2) and weight 0. Reads the data without noise.
StatusOr<GmmParameters> KmeansGmmStart(const RowSource& unit, int k, CovarianceType type,
                                       double covariance_floor, int max_iterations,
                                       const Engine& engine, Generator& gen);

// The sufficient statistics of `type` of the hard assignment of every record
// to its nearest centre (responsibilities 0 or 1); log_likelihood is 0.
StatusOr<GmmStatistics> HardAssignmentStatistics(const RowSource& x,
                                                 const Eigen::MatrixXd& centres,
                                                 CovarianceType type, const Engine& engine);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_INIT_H_
