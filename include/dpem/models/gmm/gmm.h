// The Gaussian mixture model (GMM) core of dpem: parameters, the E-step as a
// pass producing sufficient statistics, and the M-step from (possibly noisy)
// sufficient statistics, for the MLE and the MAP estimate of Park et al.
// (AISTATS 2017, Sec. 4.1 and supplement Sec. 1).
//
// The private fit runs E-step -> statistics -> noise -> M-step; non-private EM
// is the same code without the noise:
//
//   GmmParameters params = ...;                       // an initialisation
//   for (int j = 0; j < iterations; ++j) {
//     auto stats = ComputeStatistics(params, x);      // E-step
//     auto next = MStep(*stats, params, stats->n, options);
//     params = *next;
//   }
//
// Thread safety: every function here is a pure function of its arguments
// (Sample advances the Generator passed in); distinct calls may run
// concurrently on distinct Generators.
#ifndef DPEM_MODELS_GMM_GMM_H_
#define DPEM_MODELS_GMM_GMM_H_

#include <Eigen/Core>
#include <string_view>
#include <vector>

#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// The structure imposed on every component covariance.
enum class CovarianceType { kFull, kDiagonal, kSpherical };

// "full", "diag" or "spherical" (scikit-learn's names).
std::string_view CovarianceTypeName(CovarianceType type);

// The inverse of CovarianceTypeName; InvalidArgument (listing the accepted
// names) for anything else.
StatusOr<CovarianceType> ParseCovarianceType(std::string_view name);

// Maximum likelihood or maximum a posteriori M-step.
enum class Estimator { kMle, kMap };

// "mle" or "map".
std::string_view EstimatorName(Estimator estimator);

// The inverse of EstimatorName; InvalidArgument (listing the accepted names)
// for anything else.
StatusOr<Estimator> ParseEstimator(std::string_view name);

// A mixture of K Gaussians in R^d.
struct GmmParameters {
  CovarianceType type = CovarianceType::kFull;
  Eigen::VectorXd weights;                   // K, non-negative, sum 1.
  Eigen::MatrixXd means;                     // K x d, row k = mean of k.
  std::vector<Eigen::MatrixXd> covariances;  // K symmetric positive definite
                                             // d x d matrices; diagonal for
                                             // kDiagonal, sigma^2 I for
                                             // kSpherical.
  // K, the number of components.
  Eigen::Index components() const { return weights.size(); }
  // d, the dimension of the data.
  Eigen::Index dimension() const { return means.cols(); }
};

// Tolerance of ValidateParameters on |sum of weights - 1|.
inline constexpr double kWeightSumTolerance = 1e-9;
// Relative tolerance of ValidateParameters on covariance symmetry
// (|S - S^T| <= tol * max|S|) and on the equal diagonal of kSpherical.
inline constexpr double kCovarianceStructureTolerance = 1e-12;

// OK iff K >= 1, d >= 1, all shapes agree, every entry is finite, the weights
// are on the simplex (kWeightSumTolerance), each covariance is symmetric,
// positive definite (Cholesky succeeds) and has the structure of `type`
// (exactly zero off-diagonal entries for kDiagonal and kSpherical, equal
// diagonal entries for kSpherical). InvalidArgument naming the first defect.
Status ValidateParameters(const GmmParameters& params);

// Sufficient statistics of one E-step pass over some records. They add across
// disjoint shards of the data (GmmStatistics::Add), and noise may be added to
// them before the M-step. Only the second moment of `type` is filled; the
// other two are empty.
struct GmmStatistics {
  CovarianceType type = CovarianceType::kFull;
  Eigen::VectorXd counts;                    // K: N_k = sum_i gamma_ik.
  Eigen::MatrixXd sums;                      // K x d: sum_i gamma_ik x_i.
  std::vector<Eigen::MatrixXd> second_full;  // kFull: K matrices
                                             // sum_i gamma_ik x_i x_i^T.
  Eigen::MatrixXd second_diag;               // kDiagonal: K x d,
                                             // sum_i gamma_ik x_i (.) x_i.
  Eigen::VectorXd second_trace;              // kSpherical: K,
                                             // sum_i gamma_ik ||x_i||^2.
  double log_likelihood = 0;                 // sum_i log p(x_i | params).
  Eigen::Index n = 0;                        // Records accumulated.

  // Adds `other` (statistics of a disjoint shard) into this. The type and all
  // shapes must match (InvalidArgument otherwise, leaving this unchanged),
  // except that an empty accumulator (default-constructed: no counts, n = 0)
  // becomes a copy of `other`.
  Status Add(const GmmStatistics& other);
};

// Rows per block of the sequential passes (MeanLogLikelihood, Predict,
// PredictProba); the E-step's blocks are sized by the Engine. Memory beyond
// the data is O(rows per block * K d + K d^2) per thread, never N x K.
inline constexpr Eigen::Index kEStepChunkRows = 4096;

// Precomputed per-component factors (log weights, Cholesky factors, log
// determinants) for evaluating a mixture's log densities on blocks of rows.
// Built once per E-step; used by ComputeStatistics, MeanLogLikelihood,
// Predict and PredictProba.
class GmmDensityEvaluator {
 public:
  // Validates `params` and factorises each covariance (Cholesky, no inverse).
  static StatusOr<GmmDensityEvaluator> Create(const GmmParameters& params);

  // For a block of rows (rows x d, d = dimension), writes the responsibilities
  // gamma_ik = p(z_i = k | x_i) to `responsibilities` (rows x K, resized) and
  // returns log p(x_i) per row, both by log-sum-exp over components. Rows are
  // assumed finite (callers check). `scratch` (optional) is a buffer reused
  // across calls to avoid allocation.
  Eigen::VectorXd Responsibilities(const Eigen::Ref<const DataMatrix>& block,
                                   Eigen::MatrixXd* responsibilities,
                                   Eigen::MatrixXd* scratch = nullptr) const;

  // log pi_k + log N(x_i | mu_k, Sigma_k) for a block of rows, into `out`
  // (rows x K, resized). A zero weight gives -infinity. `scratch` as above.
  void LogJoint(const Eigen::Ref<const DataMatrix>& block, Eigen::MatrixXd* out,
                Eigen::MatrixXd* scratch = nullptr) const;

  Eigen::Index components() const { return log_weights_.size(); }
  Eigen::Index dimension() const { return means_.cols(); }

 private:
  GmmDensityEvaluator() = default;

  CovarianceType type_ = CovarianceType::kFull;
  Eigen::VectorXd log_weights_;              // K.
  Eigen::MatrixXd means_;                    // K x d.
  Eigen::MatrixXd quadratic_weights_;        // kFull: F x K, log pi_k + log
                                             // N(x | mu_k, Sigma_k) as a linear
                                             // function of QuadraticFeatures(x).
  Eigen::MatrixXd inverse_stddev_;           // kDiagonal/kSpherical: K x d,
                                             // 1 / sqrt(Sigma_k,jj).
  Eigen::VectorXd log_normalizer_;           // K: -(d log 2 pi + log|S|)/2.
};

// OK iff x has params.dimension() columns and only finite entries
// (InvalidArgument otherwise). Does not validate params.
Status ValidateData(const GmmParameters& params, const DataMatrix& x);

// One E-step pass over `x` (N x d): responsibilities under `params` and the
// sufficient statistics of `params.type`, fused block by block on the
// engine's threads (see gmm_estep.cc for the kernels). The counts, sums and
// second moments are exact sums of per-block partials (engine/exact_sum.h,
// docs/privacy.md section 8), the same for any thread count; they are meant
// for records of the unit ball, the fits' scale: entries are rounded to
// 2^-52 and a block's partial is clamped at 2^52. Each record is computed
// in a sub-block fixed by N and the options alone, so its terms depend on
// that record and public values only (what a release's sensitivity
// argument needs, docs/privacy.md sections 7 and 8). The log-likelihood is
// summed in thread order. InvalidArgument for invalid parameters or a
// dimension mismatch. N = 0 gives zero statistics.
StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params,
                                          const RowSource& x, const Engine& engine);

// The same on a matrix in memory at any scale, with the default Engine (all
// hardware threads) and plain floating-point sums merged in thread order (so
// the result depends on the thread count through rounding); also
// InvalidArgument for a non-finite entry of x. Full covariances take the
// plain fits' settled-record shortcut (src/models/gmm/gmm_settled_rows.h),
// so a record's rounding can depend on the others: not for releases.
StatusOr<GmmStatistics> ComputeStatistics(const GmmParameters& params,
                                          const DataMatrix& x);

// Hyper-parameters of the MAP estimate: pi ~ Dirichlet(alpha) and
// (mu_k, Sigma_k) ~ NIW(0, kappa0, nu0, s0) for every k.
struct GmmPrior {
  Eigen::VectorXd alpha;  // K Dirichlet concentrations, > 0.
  double kappa0 = 1;      // Prior pseudo-count of the mean, > 0.
  double nu0 = 0;         // Degrees of freedom, > d - 1 (must be set).
  Eigen::MatrixXd s0;     // d x d scale matrix, symmetric positive definite.
};

// The supplement's conventional values: alpha = (2, ..., 2), kappa0 = 1,
// nu0 = d + 2, s0 = 0.1 I.
GmmPrior DefaultPrior(Eigen::Index components, Eigen::Index dimension);

// Default MStepOptions::min_count (see there).
inline constexpr double kDefaultMinCount = 1e-8;

// Options of MStep.
struct MStepOptions {
  Estimator estimator = Estimator::kMle;
  // Used for kMap only; must then match K and d of the statistics.
  GmmPrior prior;
  // Added to the diagonal of every covariance, as scikit-learn's reg_covar.
  // It is also the eigenvalue floor: after the formulas, any covariance with
  // an eigenvalue below it (noisy statistics need not be PSD) has those
  // eigenvalues raised to it. Must be > 0 and finite.
  double covariance_floor = 1e-6;
  // Mass-loss rule: a component whose count N_k is below min_count keeps its
  // previous mean and covariance (its weight is still computed from N_k,
  // floored at 0). The default suits exact statistics, where any N_k > 0
  // gives a finite mean; a private fit should raise it to a multiple of the
  // noise scale of the counts. Must be > 0 and finite.
  double min_count = kDefaultMinCount;

  // OK iff the fields are in range and, for kMap, the prior is internally
  // consistent (alpha non-empty, positive and finite; kappa0 > 0;
  // nu0 > rows(s0) - 1; s0 square, symmetric and positive definite).
  Status Validate() const;
};

// The M-step from (possibly noisy) statistics. `previous` supplies the type
// and the fallback of the mass-loss rule. `n_total` is the record count N of
// the paper's weight formulas (stats.n for exact statistics, or a noisy
// count); it must be finite and > 0. The weights are clamped at 0 and
// renormalised onto the simplex (noisy counts need not sum to N), so N
// cancels from the returned weights; if every clamped weight is 0, the
// previous weights are kept. Formulas: see gmm_mstep.cc. A component whose
// update is not finite (e.g. overflowing noisy statistics) or, for full
// covariances, not numerically positive definite keeps its previous mean and
// covariance, as under the mass-loss rule: MStep never fails on the values
// of valid, finite statistics. InvalidArgument for invalid inputs.
StatusOr<GmmParameters> MStep(const GmmStatistics& stats,
                              const GmmParameters& previous, double n_total,
                              const MStepOptions& options);

// The average log density (1/N) sum_i log p(x_i | params); N >= 1.
StatusOr<double> MeanLogLikelihood(const GmmParameters& params,
                                   const DataMatrix& x);

// log p(x_i | params) of each row of x (N entries; N may be 0), the numbers
// MeanLogLikelihood averages. Same errors as MeanLogLikelihood (none for
// N = 0).
StatusOr<Eigen::VectorXd> LogDensities(const GmmParameters& params, const DataMatrix& x);

// The most responsible component of each row of x (argmax_k gamma_ik).
StatusOr<Eigen::VectorXi> Predict(const GmmParameters& params,
                                  const DataMatrix& x);

// The responsibilities gamma_ik (N x K).
StatusOr<DataMatrix> PredictProba(const GmmParameters& params,
                                  const DataMatrix& x);

// n i.i.d. draws (n x d) from the mixture: a component by its weight (one
// gen.UniformOpen01 per draw), then mean + L z with L the Cholesky factor of
// its covariance and z standard normal (SampleStandardNormal). n >= 0.
// `components`, if not null, receives the component of each draw (n).
StatusOr<DataMatrix> Sample(const GmmParameters& params, Eigen::Index n,
                            Generator& gen, Eigen::VectorXi* components = nullptr);

// The parameters of the law of r X when X follows `params`: means * r,
// covariances * r^2, weights unchanged. r > 0 and finite. Maps models fitted
// on unit-ball data back to original units.
StatusOr<GmmParameters> ScaleParameters(const GmmParameters& params, double r);

}  // namespace dpem

#endif  // DPEM_MODELS_GMM_GMM_H_
