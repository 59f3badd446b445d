// The settled-record shortcut of the plain full-covariance E-step; the
// argument and the bounds are in gmm_settled_rows.h.
#include "models/gmm/gmm_settled_rows.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "dpem/engine/engine.h"

namespace dpem::internal {
namespace {

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)
constexpr double kUnitRoundoff = 0x1p-53;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// 0.5 / lambda rounded down, lambda enlarged by kEigenvalueSlack; 0 (no
// bound) unless both lambda and the result are positive finite numbers (a
// lambda below 0.5 / DBL_MAX would make it infinite, and a distance of one
// subnormal ulp would then bound the density by -infinity).
double HalfInverse(double lambda) {
  const double enlarged = lambda * (1.0 + kEigenvalueSlack);
  if (!(enlarged > 0.0) || !std::isfinite(enlarged)) return 0.0;
  const double half_inverse = 0.5 / enlarged * (1.0 - 2.0 * kUnitRoundoff);
  return std::isfinite(half_inverse) ? half_inverse : 0.0;
}

// The number of leading eigenvectors in a component's bound (the file
// comment of gmm_settled_rows.h): those of eigenvalues above
// kDirectionRatio times the median, at most d / 2 and
// kMaxBoundDirections; none where the condition number times d exceeds
// kMaxConditionTimesDimension (`ascending`: the eigenvalues, ascending).
Eigen::Index BoundDirections(const Eigen::VectorXd& ascending) {
  const Eigen::Index d = ascending.size();
  const double smallest = ascending(0), largest = ascending(d - 1);
  if (!(smallest > 0.0) ||
      !(largest / smallest * static_cast<double>(d) <= kMaxConditionTimesDimension)) {
    return 0;
  }
  const double median = ascending(d / 2);
  Eigen::Index m = 0;
  while (m < d && ascending(d - 1 - m) > kDirectionRatio * median) ++m;
  return std::min({m, d / 2, kMaxBoundDirections});
}

// Adds the lower triangle of `second` (column by column: (0,0), (1,0), ...,
// the features' order, gmm_density.cc) to the first d(d+1)/2 entries of
// `column`.
void AddPackedLower(const Eigen::MatrixXd& second, Eigen::Ref<Eigen::VectorXd> column) {
  const Eigen::Index d = second.rows();
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    column.segment(f, d - j) += second.col(j).tail(d - j);
    f += d - j;
  }
}

}  // namespace

StatusOr<SettledRows> SettledRows::Create(const GmmParameters& params) {
  if (params.type != CovarianceType::kFull) {
    return InvalidArgumentError("the settled-record shortcut is for full covariances");
  }
  const Eigen::Index k_count = params.components();
  const Eigen::Index d = params.dimension();
  SettledRows s;
  s.means_ = params.means;
  s.mean_norms_ = params.means.rowwise().norm();
  s.log_constant_.resize(k_count);
  s.tail_half_inverse_.resize(k_count);
  s.direction_offset_.assign(static_cast<size_t>(k_count) + 1, 0);
  std::vector<Eigen::VectorXd> eigenvalues;  // Ascending.
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const Eigen::LLT<Eigen::MatrixXd> llt(params.covariances[k]);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(params.covariances[k],
                                                               Eigen::EigenvaluesOnly);
    if (llt.info() != Eigen::Success || eigen.info() != Eigen::Success) {
      return NumericalError("Cholesky factorisation or eigenvalues of covariance " +
                            std::to_string(k) + " failed");
    }
    s.lower_.push_back(llt.matrixL());
    const double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
    s.log_constant_(k) = std::log(params.weights(k)) -
                         0.5 * (static_cast<double>(d) * kLog2Pi + log_det);
    eigenvalues.push_back(eigen.eigenvalues());
    s.tail_half_inverse_(k) = HalfInverse(eigen.eigenvalues()(d - 1));
  }
  // No bound can be tighter than the distance over lambda_min: if even that
  // leaves the components too close, the eigenvectors are not worth finding.
  if (s.ApartWeight(params.weights, &eigenvalues) < kWorthwhileWeight) return s;
  DPEM_RETURN_IF_ERROR(s.AddDirections(params, eigenvalues));
  s.worthwhile_ = s.ApartWeight(params.weights) >= kWorthwhileWeight;
  return s;
}

Status SettledRows::AddDirections(const GmmParameters& params,
                                  const std::vector<Eigen::VectorXd>& eigenvalues) {
  const Eigen::Index d = params.dimension();
  std::vector<Eigen::VectorXd> directions;
  std::vector<double> half_inverse;
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    const Eigen::VectorXd& lambda = eigenvalues[static_cast<size_t>(k)];
    const Eigen::Index m = BoundDirections(lambda);
    direction_offset_[static_cast<size_t>(k) + 1] = direction_offset_[k] + m;
    if (m == 0) continue;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(params.covariances[k]);
    if (eigen.info() != Eigen::Success) {
      return NumericalError("eigenvectors of covariance " + std::to_string(k) + " failed");
    }
    for (Eigen::Index i = 0; i < m; ++i) {
      directions.push_back(eigen.eigenvectors().col(d - 1 - i));
      half_inverse.push_back(HalfInverse(eigen.eigenvalues()(d - 1 - i)));
    }
    tail_half_inverse_(k) = HalfInverse(eigen.eigenvalues()(d - 1 - m));
  }
  const Eigen::Index total = direction_offset_.back();
  directions_.resize(d, total);
  direction_half_inverse_.resize(total);
  direction_means_.resize(total);
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    for (Eigen::Index i = direction_offset_[k]; i < direction_offset_[k + 1]; ++i) {
      directions_.col(i) = directions[static_cast<size_t>(i)];
      direction_half_inverse_(i) = half_inverse[static_cast<size_t>(i)];
      direction_means_(i) = means_.row(k).dot(directions_.col(i));
    }
  }
  return OkStatus();
}

double SettledRows::ApartWeight(const Eigen::VectorXd& weights,
                                const std::vector<Eigen::VectorXd>* eigenvalues) const {
  const Eigen::Index k_count = means_.rows();
  SettledScratch scratch;
  if (eigenvalues == nullptr) {
    const DataMatrix means = means_;
    Candidates(RowBlock(means.data(), k_count, means.cols()), scratch);
  } else {
    // The optimistic bound c_k - ||mu_j - mu_k||^2 / (2 lambda_min): a lower
    // bound of l_k(mu_j), hence of every valid u_k(mu_j).
    scratch.bounds.resize(k_count, k_count);
    for (Eigen::Index k = 0; k < k_count; ++k) {
      const double smallest = (*eigenvalues)[static_cast<size_t>(k)](0);
      scratch.bounds.col(k) =
          log_constant_(k) -
          0.5 / smallest * (means_.rowwise() - means_.row(k)).rowwise().squaredNorm().array();
    }
  }
  const double typical = 0.5 * static_cast<double>(means_.cols());
  double apart = 0.0;
  for (Eigen::Index j = 0; j < k_count; ++j) {
    double others = -kInfinity;
    for (Eigen::Index k = 0; k < k_count; ++k) {
      if (k != j) others = std::max(others, scratch.bounds(j, k));
    }
    if (others < log_constant_(j) - typical - kSettledGap) apart += weights(j);
  }
  return apart;
}

void SettledRows::Candidates(const RowBlock& block, SettledScratch& s) const {
  const Eigen::Index rows = block.rows();
  const Eigen::Index k_count = means_.rows();
  const Eigen::Index d = means_.cols();
  // ||x - mu||^2 = ||x||^2 + ||mu||^2 - 2 x.mu and the projections
  // v.x - v.mu by one product each for the block: each term's rounding is
  // within gamma (|x| + |mu|)^2, or gamma (|x| + |mu|) for a projection,
  // gamma = 2 (d + 3) u; the bound takes the distance and the projections
  // on the side that keeps it an upper bound.
  const double gamma = 2.0 * static_cast<double>(d + 3) * kUnitRoundoff;
  s.row_norms = block.rowwise().squaredNorm();
  s.bounds.noalias() = block * means_.transpose();
  if (directions_.cols() > 0) s.projections.noalias() = block * directions_;
  const Eigen::ArrayXd row_lengths = s.row_norms.array().sqrt();
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const double mu_norm = mean_norms_(k);
    const Eigen::ArrayXd distance =
        (s.row_norms.array() + mu_norm * mu_norm - 2.0 * s.bounds.col(k).array() -
         gamma * (row_lengths + mu_norm).square())
            .max(0.0);
    // Along the leading directions v_i (eigenvalues lambda_i) and in the
    // rest (at most lambda_{m+1}): half the Mahalanobis distance is at least
    // sum_i (v_i.r)^2 / (2 lambda_i) + (|r|^2 - sum_i (v_i.r)^2) / (2 lambda_{m+1}).
    const Eigen::ArrayXd error = gamma * (row_lengths + mu_norm);
    Eigen::ArrayXd head = Eigen::ArrayXd::Zero(rows), used = Eigen::ArrayXd::Zero(rows);
    for (Eigen::Index i = direction_offset_[k]; i < direction_offset_[k + 1]; ++i) {
      const Eigen::ArrayXd p = (s.projections.col(i).array() - direction_means_(i)).abs();
      head += (p - error).max(0.0).square() * direction_half_inverse_(i);
      used += (p + error).square();
    }
    const Eigen::ArrayXd half_distance =
        (head + (distance - used).max(0.0) * tail_half_inverse_(k)) * (1.0 - kProjectionSlack);
    s.bounds.col(k) = (log_constant_(k) - half_distance).matrix();
  }
  // A NaN bound (0 * infinity) bounds nothing: +infinity does.
  s.bounds = s.bounds.array().isNaN().select(kInfinity, s.bounds);
  s.members.resize(static_cast<size_t>(k_count));
  for (auto& m : s.members) m.clear();
  s.runner_up.resize(rows);
  s.others.clear();
  for (Eigen::Index i = 0; i < rows; ++i) {
    Eigen::Index best = 0;
    double top = s.bounds(i, 0), next = -kInfinity;
    for (Eigen::Index k = 1; k < k_count; ++k) {
      const double u = s.bounds(i, k);
      if (u > top) {
        next = top;
        top = u;
        best = k;
      } else {
        next = std::max(next, u);
      }
    }
    s.runner_up(i) = next;
    // l_b <= u_b: a runner-up within the gap of u_b rules the record out
    // before its solve.
    if (next < top - kSettledGap) {
      s.members[static_cast<size_t>(best)].push_back(i);
    } else {
      s.others.push_back(i);
    }
  }
}

Eigen::Index SettledRows::ClaimCandidate(const RowBlock& block, Eigen::Index k,
                                         Eigen::MatrixXd& feature_sums, double* log_likelihood,
                                         SettledScratch& s) const {
  const std::vector<Eigen::Index>& rows = s.members[static_cast<size_t>(k)];
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  if (n == 0) return 0;
  const Eigen::Index d = means_.cols();
  s.raw.resize(d, n);
  for (Eigen::Index j = 0; j < n; ++j) s.raw.col(j) = block.row(rows[j]).transpose();
  s.white = s.raw.colwise() - means_.row(k).transpose();
  lower_[k].triangularView<Eigen::Lower>().solveInPlace(s.white);
  // Settled records move to the front of s.raw, in order.
  Eigen::Index settled = 0;
  double sum_log = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double half_distance = 0.5 * s.white.col(j).squaredNorm();
    if (Settles(k, half_distance, s.runner_up(rows[j]))) {
      if (settled != j) s.raw.col(settled) = s.raw.col(j);
      ++settled;
      sum_log += LogJoint(k, half_distance);
    } else {
      s.others.push_back(rows[j]);
    }
  }
  if (settled == 0) return 0;
  const auto claimed = s.raw.leftCols(settled);
  s.second.setZero(d, d);
  s.second.selfadjointView<Eigen::Lower>().rankUpdate(claimed);
  const Eigen::Index pairs = d * (d + 1) / 2;
  AddPackedLower(s.second, feature_sums.col(k).head(pairs));
  feature_sums.col(k).segment(pairs, d) += claimed.rowwise().sum();
  feature_sums(pairs + d, k) += static_cast<double>(settled);
  *log_likelihood += sum_log;
  return settled;
}

bool SettledRows::Settles(Eigen::Index k, double half_distance, double runner_up) const {
  const double log_joint = LogJoint(k, half_distance);
  const double lowered = log_joint - kSolveSlack * (std::fabs(log_constant_(k)) + half_distance);
  return std::isfinite(log_joint) && runner_up < lowered - kSettledGap;
}

void SettledRows::GatherOthers(const RowBlock& block, SettledScratch& s) {
  s.unsettled.resize(static_cast<Eigen::Index>(s.others.size()), block.cols());
  for (size_t j = 0; j < s.others.size(); ++j) {
    s.unsettled.row(static_cast<Eigen::Index>(j)) = block.row(s.others[j]);
  }
}

Eigen::Index SettledRows::Claim(const RowBlock& block, Eigen::MatrixXd& feature_sums,
                                double* log_likelihood, SettledScratch& s) const {
  Candidates(block, s);
  Eigen::Index settled = 0;
  for (Eigen::Index k = 0; k < means_.rows(); ++k) {
    settled += ClaimCandidate(block, k, feature_sums, log_likelihood, s);
  }
  if (settled > 0) GatherOthers(block, s);
  return settled;
}

std::optional<SettledRows> WorthwhileShortcut(const GmmParameters& params) {
  if (params.type != CovarianceType::kFull) return std::nullopt;
  StatusOr<SettledRows> settled = SettledRows::Create(params);
  if (!settled.ok() || !settled->worthwhile()) return std::nullopt;
  return std::move(*settled);
}

Eigen::Index SubBlocksPerBlock(Eigen::Index row_doubles, bool shortcut) {
  if (!shortcut) return kFoldSubBlocks;
  const Eigen::Index most = kMaxBlockRowsOption / ChooseBlockRows(row_doubles);
  return std::clamp<Eigen::Index>(most, kFoldSubBlocks, 4 * kFoldSubBlocks);
}

}  // namespace dpem::internal
