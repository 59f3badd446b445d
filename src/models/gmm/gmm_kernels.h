// What the Gaussian-mixture E-steps share (gmm_estep.cc, the plain pass;
// gmm_framed_estep.cc, the private pass in component frames). Private to the
// library.
#ifndef DPEM_MODELS_GMM_GMM_KERNELS_H_
#define DPEM_MODELS_GMM_GMM_KERNELS_H_

#include <Eigen/Core>

#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/status.h"
#include "engine/exact_sum.h"

namespace dpem::internal {

// log(DBL_MIN): exp of anything smaller is subnormal or 0, and
// NormalizeLogJoint flushes such a responsibility to exactly 0.
inline constexpr double kLogSmallestNormal = -708.3964185322641;

// F = d(d+1)/2 + d + 1, the number of quadratic features of R^d.
inline Eigen::Index FeatureCount(Eigen::Index d) { return d * (d + 1) / 2 + d + 1; }

// Zero statistics of the shapes of `params`.
GmmStatistics ZeroStatistics(const GmmParameters& params);

// The released arrays of `s`, in a fixed order, for its exact sum
// (engine/exact_sum.h): counts, sums, then each full second moment, the
// diagonal ones or the traces, as the type has them.
std::vector<StatisticArray> StatisticArrays(GmmStatistics& s);

// InvalidArgument "data have <columns> columns, the model <d> dimensions"
// unless `columns` is the dimension d of `params`.
Status CheckDataColumns(const GmmParameters& params, Eigen::Index columns);

// Turns log joint densities (rows x K) into responsibilities in place, by a
// log-sum-exp per row, and returns log p(x_i) per row. Results below the
// smallest normal double are flushed to exactly 0; a row that cannot be
// normalised (NaN, or no finite maximum) is repaired so that it is still a
// point of the simplex, and its log p(x_i) is NaN (gmm_density.cc).
Eigen::VectorXd NormalizeLogJoint(Eigen::MatrixXd& log_joint);

// ComputeStatistics (dpem/models/gmm/gmm.h) for a plain (non-private) fit:
// the records that one component claims in double precision take the
// settled-record shortcut (gmm_settled_rows.h). The same statistics up to
// rounding, but a record's rounding can depend on the other records of its
// block, so never for a release: private fits use ComputeStatistics.
StatusOr<GmmStatistics> ComputePlainFitStatistics(const GmmParameters& params,
                                                  const RowSource& x, const Engine& engine);

// The first step of a pass's work on a block: each record's responsibilities
// into `w.gamma` (buffer: `w.scratch`), and the block's log-likelihood added
// to `w.stats` (a worker of either pass).
template <typename Worker>
void BlockResponsibilities(const GmmDensityEvaluator& evaluator, const RowBlock& block,
                           Worker& w) {
  w.stats.log_likelihood += evaluator.Responsibilities(block, &w.gamma, &w.scratch).sum();
}

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_KERNELS_H_
