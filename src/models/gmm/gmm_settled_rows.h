// The settled-record shortcut of the plain full-covariance E-step
// (gmm_estep.cc). Private to the library.
//
// A record is settled under a mixture when one component b takes all of its
// responsibility in double precision: every other component's log joint
// density l_k(x) = log pi_k + log N(x | mu_k, Sigma_k) lies more than
// kSettledGap nats below l_b(x). exp(l_k - l_b) is then below the smallest
// normal double, which the pass's log-sum-exp (NormalizeLogJoint) flushes to
// exactly 0: the record's responsibilities are e_b, its log p(x) is l_b(x),
// and it adds (1, x, x x^T) to component b's statistics alone. On
// well-separated data in many dimensions almost every record is settled once
// the fit has found the clusters, and the dense pass spends half its flops
// (the statistics product Gamma^T Features) multiplying by zeros and the
// other half on log densities that are only ever flushed.
//
// Finding them without the dense product. Along the m leading eigenvectors
// v_i of Sigma_k (eigenvalues lambda_1 >= ... >= lambda_m) and in the rest
// of the space (eigenvalues at most lambda_{m+1}), with r = x - mu_k,
//   r^T Sigma_k^{-1} r >= sum_i (v_i.r)^2 / lambda_i
//                         + (||r||^2 - sum_i (v_i.r)^2) / lambda_{m+1},
// so with c_k = log pi_k - (d log 2 pi + log|Sigma_k|) / 2,
//   u_k(x) = c_k - (that lower bound) / 2
// bounds l_k(x) from above, at (3 + 2 m) d flops per component instead of
// the dense product's 2 F ~ d^2. m = 0 (the bound ||r||^2 / lambda_max) is
// tight for round components; an elongated one takes the directions of its
// eigenvalues above kDirectionRatio times the median (at most
// kMaxBoundDirections and d / 2). The candidate b is the component of the
// largest bound; l_b(x) is computed exactly (Cholesky factor, triangular
// solve), and the record is settled iff every other u_k(x) < l_b(x) -
// kSettledGap. Each candidate's records are whitened in one triangular
// solve and summed in one rank update (BLAS-3, about 2 d^2 flops per record,
// against the dense pass's 4 K F ~ 2 K d^2).
//
// The bounds are rounded toward acceptance's safe side: the distance and
// the projections (one product each for a block) are taken at the side of
// their rounding bounds that lowers the Mahalanobis bound, each eigenvalue
// is enlarged by kEigenvalueSlack (the symmetric eigensolver is backward
// stable), the bound with directions is lowered by kProjectionSlack (the
// computed eigenvectors are orthonormal eigenvectors to within d u times
// the condition number, which kMaxConditionTimesDimension caps; beyond it
// a component uses m = 0, which needs only lambda_max), and l_b is lowered
// by kSolveSlack of its terms' size before the comparison. The gap's margin
// over -log(DBL_MIN) = 708.4 (41 nats) absorbs the rest.
//
// Which records are settled depends on the record and the parameters
// alone, up to the last bits of its bounds, which the block products may
// round differently at different rows; a record so close to the threshold
// has responsibilities that the dense pass flushes to e_b as well, so its
// terms are the same either way, up to rounding. The block grid is fixed,
// so the pass's statistics (each record's term, summed exactly) do not
// depend on the thread count.
//
// Plain fits only. Each settled record's terms are those the dense pass
// would compute for it, up to rounding, but the pass gathers a block's other
// records into a matrix whose row count and order depend on which records
// are settled, and a product rounds a row differently with its row count
// and place. So a record's computed terms depend, in their last bits, on
// the other records of its block, and where covariances are tiny the
// responsibilities of a record near a tie between two components are
// decided by those bits. An adversarial review (2026-11-25) of a version
// that also ran in the private passes moved the released statistics of
// neighbouring data sets by up to 1.27 times the sensitivity that way
// (frames off; 3.5 times in the framed pass), at covariance eigenvalues of
// 1e-16 to 1e-20 (below the private fits' floor, where it measured 0.78 of
// the margin kComputedSumMargin).
// The passes of private fits (ComputeStatistics on a RowSource, the framed
// pass) therefore do the dense work for every record, in sub-blocks fixed
// by public values, so that each record's computation depends on that
// record alone (gmm_settled_private_test.cc).
#ifndef DPEM_MODELS_GMM_GMM_SETTLED_ROWS_H_
#define DPEM_MODELS_GMM_GMM_SETTLED_ROWS_H_

#include <Eigen/Core>
#include <optional>
#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/status.h"

namespace dpem::internal {

// A settled record's other components lie this many nats below its own
// (more than -log(DBL_MIN) = 708.4; the rest is the bounds' rounding).
inline constexpr double kSettledGap = 750.0;

// Relative enlargement of the computed lambda_max of each covariance.
inline constexpr double kEigenvalueSlack = 1e-8;

// The bound's leading directions: eigenvalues above this multiple of the
// median, at most this many (and d / 2), none where lambda_max / lambda_min
// times d exceeds kMaxConditionTimesDimension.
inline constexpr double kDirectionRatio = 2.0;
inline constexpr Eigen::Index kMaxBoundDirections = 32;
inline constexpr double kMaxConditionTimesDimension = 1e8;

// Relative lowering of a Mahalanobis bound that uses directions.
inline constexpr double kProjectionSlack = 1e-6;

// The shortcut runs where components of at least this total weight lie
// apart (SettledRows::worthwhile).
inline constexpr double kWorthwhileWeight = 0.5;

// l_b is lowered by this fraction of |c_b| + its Mahalanobis term before
// the comparison (the triangular solve's forward error, with room for
// condition numbers up to about 1e8 at d = 10^3).
inline constexpr double kSolveSlack = 1e-6;

// One worker's buffers for SettledRows::Claim (reused from block to block).
struct SettledScratch {
  Eigen::MatrixXd bounds;                          // B x K: u_k of each row.
  Eigen::VectorXd row_norms;                       // B: ||x||^2.
  Eigen::MatrixXd projections;                     // B x M: x.v_i.
  std::vector<std::vector<Eigen::Index>> members;  // Rows per candidate.
  Eigen::MatrixXd raw;                             // d x n: a candidate's rows.
  Eigen::MatrixXd white;                           // d x n: L^{-1} (x - mu).
  Eigen::MatrixXd second;                          // d x d: lower triangle.
  Eigen::VectorXd runner_up;                       // B: second-largest u_k.
  std::vector<Eigen::Index> others;                // Rows not settled.
  DataMatrix unsettled;                            // Those rows, gathered.
};

// The shortcut for one pass's parameters (full covariances). Immutable after
// Create; its methods may run on several threads at once, each with its own
// scratch.
class SettledRows {
 public:
  // Factorises each covariance and finds its eigenvalues and leading
  // eigenvectors.
  // NumericalError if a covariance has no Cholesky factorisation or its
  // eigenvalues do not converge; InvalidArgument unless params.type is
  // kFull.
  static StatusOr<SettledRows> Create(const GmmParameters& params);

  // Whether the shortcut can pay for its bounds at these parameters (from
  // the parameters alone): components of total weight at least
  // kWorthwhileWeight whose records lie, typically, kSettledGap below
  // their own density at every other component's bound,
  //   u_k(mu_j) < c_j - d/2 - kSettledGap for all k != j
  // (a record of j has l_j(x) about c_j - d/2). When false the pass runs
  // dense, as before.
  bool worthwhile() const { return worthwhile_; }

  // For the records of `block` (finite rows of the model's dimension):
  // adds each settled record's features (x_i x_j for i <= j, x, 1) to
  // column b of `feature_sums` (F x K, gmm_estep.cc's layout) and its
  // l_b(x) to `*log_likelihood`, and gathers the other records into
  // scratch.unsettled for the dense pass (unless none is settled: the
  // dense pass then takes the block as it is). Returns the number of
  // settled records.
  Eigen::Index Claim(const RowBlock& block, Eigen::MatrixXd& feature_sums,
                     double* log_likelihood, SettledScratch& scratch) const;

 private:
  SettledRows() = default;

  // Claim's steps:
  //
  // 1. Each row's upper bounds u_k into scratch.bounds and the
  //    second-largest into scratch.runner_up; the row into scratch.members
  //    of its candidate (the largest bound, the lowest index on ties), or
  //    into scratch.others if the runner-up lies within kSettledGap of the
  //    candidate's bound (it cannot be settled).
  void Candidates(const RowBlock& block, SettledScratch& scratch) const;

  // 2. Whether a record whose candidate is k, with half its Mahalanobis
  //    distance to k computed as `half_distance` (so l_k(x) = c_k -
  //    half_distance) and the runner-up bound `runner_up`, is settled:
  //    l_k(x) lowered by kSolveSlack of its terms' size is finite and more
  //    than kSettledGap above the runner-up.
  bool Settles(Eigen::Index k, double half_distance, double runner_up) const;

  // l_k(x) = c_k - half_distance.
  double LogJoint(Eigen::Index k, double half_distance) const {
    return log_constant_(k) - half_distance;
  }

  // 3. The rows of scratch.others, gathered from `block` into
  //    scratch.unsettled.
  static void GatherOthers(const RowBlock& block, SettledScratch& scratch);

  // The total weight of the components j that worthwhile() counts, by the
  // bounds u_k; with `eigenvalues` (each covariance's, ascending), by the
  // optimistic c_k - ||mu_j - mu_k||^2 / (2 lambda_min) instead, which no
  // bound can beat (a necessary condition, before the eigenvectors).
  double ApartWeight(const Eigen::VectorXd& weights,
                     const std::vector<Eigen::VectorXd>* eigenvalues = nullptr) const;

  // The leading eigenvectors of each covariance (BoundDirections of its
  // `eigenvalues`) and the bounds' inverses that go with them.
  Status AddDirections(const GmmParameters& params,
                       const std::vector<Eigen::VectorXd>& eigenvalues);

  // Candidate k's rows (scratch.members[k]): the settled ones summed into
  // column k of feature_sums, the others appended to scratch.others.
  Eigen::Index ClaimCandidate(const RowBlock& block, Eigen::Index k,
                              Eigen::MatrixXd& feature_sums, double* log_likelihood,
                              SettledScratch& scratch) const;

  std::vector<Eigen::MatrixXd> lower_;  // Cholesky factors L_k.
  Eigen::MatrixXd means_;               // K x d.
  Eigen::VectorXd mean_norms_;          // K: ||mu_k||.
  Eigen::VectorXd log_constant_;        // c_k.
  // The leading eigenvectors of all components (d x M), component k's in
  // columns direction_offset_[k] .. direction_offset_[k + 1] - 1, with
  // 1 / (2 lambda_i) and v_i.mu_k for each; 1 / (2 lambda_{m+1}) per
  // component (1 / (2 lambda_max) where m = 0). Inverses rounded down.
  Eigen::MatrixXd directions_;
  Eigen::VectorXd direction_half_inverse_;
  Eigen::VectorXd direction_means_;
  std::vector<Eigen::Index> direction_offset_;
  Eigen::VectorXd tail_half_inverse_;
  bool worthwhile_ = false;
};

// The shortcut for `params` where it is worthwhile; none for diagonal or
// spherical covariances, where it is not (worthwhile() false), or where it
// cannot be built (the dense pass then reports any error of its own).
std::optional<SettledRows> WorthwhileShortcut(const GmmParameters& params);

// Sub-blocks per engine block of the plain pass: kFoldSubBlocks, or with
// the shortcut, whose records cost less so that the fold is a larger share,
// 4 kFoldSubBlocks as long as a block keeps at most kMaxBlockRowsOption rows
// (the engine's bound on a block).
Eigen::Index SubBlocksPerBlock(Eigen::Index row_doubles, bool shortcut);

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_SETTLED_ROWS_H_
