// The private E-step pass in component frames (gmm_frames.h): for every
// record and component, the record's frame coordinates computed explicitly,
// the responsibilities read from them, and the statistics accumulated from
// the clipped coordinates as they are: sum g, sum g u, sum g T(u), each
// block's partial from zero, the partials summed exactly
// (engine/exact_sum.h).
//
// Why explicitly. The framed statistics could be had from global sums by an
// affine map (S^{-1}(sum g x - N m), ...), but that map multiplies the sums'
// rounding error by up to 1 / (rho^2 lambda_min), which grows with N and
// without bound as a component shrinks; the error would be data-dependent and
// could exceed the sensitivity. Accumulating the u's themselves makes the
// released sums ordinary floating-point sums of vectors in the unit ball, as
// in the global frame.
//
// One product per block. Every component k gets a map y_k = M_k x - M_k m_k
// (FramedMaps below), all K stacked so that a block's B x (K d) coordinates
// are one matrix product:
//   - a local frame (S_k = rho L_k, L_k L_k^T = Sigma_k, origin mu_k):
//     M_k = S_k^{-1}, so y_k is the record's frame coordinates and its
//     Mahalanobis distance to the component is rho ||y_k||;
//   - a global frame: M_k = L_k^{-1} (whitening), the distance is ||y_k||,
//     and u_k = x (the unit-ball record itself).
// The log joint densities, log pi_k - (d log 2 pi + log|Sigma_k|) / 2 -
// dist^2 / 2, and so the responsibilities, come from the squared norms the
// clip needs anyway: the pass does no second density evaluation.
//
// The unit ball, as computed. In a local frame, with n_y the computed
// squared norm of y, internal::ShrinkIntoUnitBall (internal/unit_ball.h)
// makes u from it:
//   u = y                         if n_y <= kInsideSquared,
//   u = y * kShrunkRadius / sqrt(n_y)   otherwise,
//   u = 0                         if n_y is not finite (overflow; any vector
//                                 of norm <= 1 keeps the sensitivity),
// so every accumulated u has norm at most 1. The second moment of a block,
// sum_i g_i u_i u_i^T, is a symmetric rank update with the rows sqrt(g_i) u_i
// (lower triangle; mirrored once after the exact sum): each record's term is
// g_i u_i u_i^T up to a relative rounding of a few units in the last place,
// which the margin of kShrunkRadius (1e-12) covers, as it covers the norm's.
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cmath>
#include <string>
#include <vector>

#include "engine/exact_sum.h"
#include "engine/rank_combine.h"
#include "internal/dimension_dispatch.h"
#include "internal/unit_ball.h"
#include "models/gmm/gmm_framed_kernels.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_kernels.h"

namespace dpem::internal {
namespace {

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)

// The maps of one pass, built once from the parameters and their frames:
// component k sees a record through y_k = M_k x - M_k m_k (the file comment).
struct FramedMaps {
  CovarianceType type = CovarianceType::kFull;
  std::vector<Eigen::MatrixXd> map;   // kFull: K maps M_k (d x d, lower).
  Eigen::MatrixXd maps;                // kFull, d above the kernels': (K d) x d,
                                       // rows k d.. hold M_k.
  Eigen::MatrixXd diagonal;            // Otherwise: K x d, the diagonal of M_k.
  Eigen::RowVectorXd offsets;          // K d: M_k m_k.
  Eigen::VectorXd distance_scale;      // K: rho^2 (local frame) or 1 (global).
  Eigen::VectorXd log_joint_constant;  // K: log pi_k - (d log 2 pi + log|Sigma_k|) / 2.
  std::vector<bool> local;             // K.
};

// Component k's frame scale and origin for its map: the local frame's own
// (checked to be the one ChooseFrames makes from these parameters, so that
// the distance can be read from it), or the whitening factor L_k and mu_k.
Status ComponentMap(const GmmParameters& params, const ComponentFrame& frame, Eigen::Index k,
                    const Eigen::MatrixXd& lower, FramedMaps& m) {
  const Eigen::Index d = params.dimension();
  const Eigen::VectorXd mean = params.means.row(k).transpose();
  // Shapes first: Eigen's != compares over the left operand's size (and
  // reads the right one out of range in a release build), so an empty or
  // smaller origin or scale would otherwise pass.
  if (frame.local &&
      (frame.origin.size() != d || frame.scale.rows() != d || frame.scale.cols() != d ||
       !(frame.radius > 0.0) || frame.origin != mean || frame.scale != frame.radius * lower)) {
    return InvalidArgumentError("frame " + std::to_string(k) +
                                " was not chosen for these parameters (ChooseFrames)");
  }
  const Eigen::MatrixXd& scale = frame.local ? frame.scale : lower;
  const Eigen::MatrixXd inverse =
      scale.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(d, d));
  if (m.type == CovarianceType::kFull) {
    m.map[static_cast<size_t>(k)] = inverse;
    if (m.maps.size()) m.maps.middleRows(k * d, d) = inverse;
  } else {
    m.diagonal.row(k) = inverse.diagonal().transpose();
  }
  m.offsets.segment(k * d, d) = (inverse * mean).transpose();
  m.distance_scale(k) = frame.local ? frame.radius * frame.radius : 1.0;
  m.local[static_cast<size_t>(k)] = frame.local;
  return OkStatus();
}

StatusOr<FramedMaps> BuildMaps(const GmmParameters& params,
                               const std::vector<ComponentFrame>& frames) {
  const Eigen::Index k_count = params.components();
  const Eigen::Index d = params.dimension();
  FramedMaps m;
  m.type = params.type;
  if (m.type == CovarianceType::kFull) {
    m.map.resize(static_cast<size_t>(k_count));
    if (d > kMaxFramedKernelDimension) m.maps.resize(k_count * d, d);
  } else {
    m.diagonal.resize(k_count, d);
  }
  m.offsets.resize(k_count * d);
  m.distance_scale.resize(k_count);
  m.log_joint_constant.resize(k_count);
  m.local.assign(static_cast<size_t>(k_count), false);
  for (Eigen::Index k = 0; k < k_count; ++k) {
    Eigen::LLT<Eigen::MatrixXd> llt(params.covariances[k]);
    if (llt.info() != Eigen::Success) {
      return NumericalError("Cholesky factorisation of covariance " + std::to_string(k) +
                            " failed");
    }
    const Eigen::MatrixXd lower = llt.matrixL();
    DPEM_RETURN_IF_ERROR(ComponentMap(params, frames[static_cast<size_t>(k)], k, lower, m));
    const double log_det = 2.0 * lower.diagonal().array().log().sum();
    m.log_joint_constant(k) = std::log(params.weights(k)) -
                              0.5 * (static_cast<double>(d) * kLog2Pi + log_det);
  }
  return m;
}

// One thread's share of the pass: the current block's partial statistics
// (from zero; full second moments in their lower triangle), the exact sum of
// its finished blocks' partials, and its buffers.
struct FramedWorker {
  GmmStatistics stats;
  std::vector<StatisticArray> arrays;  // FramedArrays(stats), for the fold.
  ExactSum exact;
  Eigen::MatrixXd y;         // B x (K d): y_k, then u_k in local frames.
  Eigen::MatrixXd x;         // B x d: the block, column-major.
  Eigen::MatrixXd norms;     // B x K: ||y_k||^2 as computed.
  Eigen::MatrixXd gamma;     // B x K: log joint densities, then responsibilities.
  Eigen::MatrixXd weighted;  // B x d: sqrt(g) u (no compiled kernel).
  Eigen::VectorXd sums;      // d: one component's sums (compiled kernel).
  Eigen::VectorXd scales;    // B: one component's clip scales c_i.
};

// The compiled kernels of dimension D (gmm_framed_kernels.h), by d.
struct SmallKernels {
  void (*map_and_norms)(const double*, Eigen::Index, Eigen::Index, const double*, const double*,
                        double*, double*) = nullptr;
  void (*moments)(const double*, Eigen::Index, Eigen::Index, const double*, const double*,
                  double&, double*, double*) = nullptr;
};

// The kernels for d (full covariances), or none above kMaxFramedKernelDimension.
SmallKernels SmallKernelsFor(Eigen::Index d) {
  return ForCompiledDimension<kMaxFramedKernelDimension>(d, [](auto dimension) {
    constexpr int kD = decltype(dimension)::value;
    return SmallKernels{&FrameMapAndNorms<kD>, &WeightedMoments<kD>};
  });
}

// Every record's y_k into w.y (B x (K d)) and their squared norms into
// w.norms, with the compiled kernel `map_and_norms` if set.
void Coordinates(const RowBlock& block, const FramedMaps& m, const SmallKernels& kernels,
                 FramedWorker& w) {
  const Eigen::Index b = block.rows();
  const Eigen::Index d = block.cols();
  const Eigen::Index k_count = m.distance_scale.size();
  w.x = block;
  w.norms.resize(b, k_count);
  if (kernels.map_and_norms != nullptr) {
    w.y.resize(b, k_count * d);
    for (Eigen::Index k = 0; k < k_count; ++k) {
      kernels.map_and_norms(w.x.data(), b, b, m.map[static_cast<size_t>(k)].data(),
                            m.offsets.data() + k * d, w.y.col(k * d).data(),
                            w.norms.col(k).data());
    }
    return;
  }
  if (m.type == CovarianceType::kFull) {
    w.y.noalias() = w.x * m.maps.transpose();
    w.y.rowwise() -= m.offsets;
  } else {
    w.y.resize(b, k_count * d);
    for (Eigen::Index k = 0; k < k_count; ++k) {
      for (Eigen::Index j = 0; j < d; ++j) {
        w.y.col(k * d + j) = w.x.col(j) * m.diagonal(k, j);
        w.y.col(k * d + j).array() -= m.offsets(k * d + j);
      }
    }
  }
  for (Eigen::Index k = 0; k < k_count; ++k) {
    w.norms.col(k) = w.y.col(k * d).cwiseAbs2();
    for (Eigen::Index j = 1; j < d; ++j) w.norms.col(k) += w.y.col(k * d + j).cwiseAbs2();
  }
}

// The responsibilities from the norms into w.gamma; the block's
// log-likelihood added to w.stats.
void Responsibilities(const FramedMaps& m, FramedWorker& w) {
  w.gamma.resize(w.norms.rows(), w.norms.cols());
  for (Eigen::Index k = 0; k < w.norms.cols(); ++k) {
    w.gamma.col(k) = m.log_joint_constant(k) - (0.5 * m.distance_scale(k)) * w.norms.col(k).array();
  }
  w.stats.log_likelihood += NormalizeLogJoint(w.gamma).sum();
}

// The clip of every row of `y` into the unit ball (ShrinkIntoUnitBall, row
// by row, as a scale): c_i = 1 if its computed squared norm n_i <=
// kInsideSquared, kShrunkRadius / sqrt(n_i) if n_i is finite, and 0 with
// the row set to zero if it is not (an overflow).
void ClipScales(Eigen::Ref<Eigen::MatrixXd> y, const Eigen::Ref<const Eigen::VectorXd>& norms,
                Eigen::Ref<Eigen::VectorXd> c) {
  const auto n = norms.array();
  // Array by array (a scalar over an array is not vectorised). Eigen's
  // vectorised sqrt may be a few units in the last place from the correctly
  // rounded one (an approximate reciprocal square root refined by Newton
  // steps under EIGEN_FAST_MATH), and differs between lanes and the scalar
  // remainder; the margin of kShrunkRadius (1e-12, about 9000 units) covers
  // it, and a non-finite n_i takes the branch below.
  c.array() = n.sqrt();
  c.array() = (n <= kInsideSquared)
                  .select(1.0, Eigen::ArrayXd::Constant(n.size(), kShrunkRadius) / c.array());
  if (n.isFinite().all()) return;
  for (Eigen::Index i = 0; i < y.rows(); ++i) {
    if (std::isfinite(n(i))) continue;
    c(i) = 0.0;
    y.row(i).setZero();
  }
}

// Adds sum_i g_i (1, u_i, T(u_i)) of component k into w.stats (full second
// moments: the lower triangle), u_i = c_i y_i (u = y if `c` is null; the
// compiled kernel scales as it reads, the general path scales y in place).
void Accumulate(Eigen::Ref<Eigen::MatrixXd> y, const double* c, Eigen::Index k,
                const SmallKernels& kernels, FramedWorker& w) {
  const auto g = w.gamma.col(k);
  GmmStatistics& s = w.stats;
  if (kernels.moments != nullptr) {
    w.sums.setZero(y.cols());
    kernels.moments(y.data(), y.rows(), y.outerStride(), g.data(), c, s.counts(k),
                    w.sums.data(), s.second_full[k].data());
    s.sums.row(k) += w.sums.transpose();
    return;
  }
  if (c != nullptr) y.array().colwise() *= Eigen::Map<const Eigen::ArrayXd>(c, y.rows());
  const auto& u = y;
  s.counts(k) += g.sum();
  s.sums.row(k).noalias() += g.transpose() * u;
  switch (s.type) {
    case CovarianceType::kFull:
      w.weighted = u.array().colwise() * g.array().sqrt();
      s.second_full[k].selfadjointView<Eigen::Lower>().rankUpdate(w.weighted.transpose());
      break;
    case CovarianceType::kDiagonal:
      s.second_diag.row(k).noalias() += g.transpose() * u.cwiseAbs2();
      break;
    case CovarianceType::kSpherical:
      s.second_trace(k) += u.rowwise().squaredNorm().dot(g);
      break;
  }
}

// The arrays of `s` that the pass sums exactly: StatisticArrays, but for
// full covariances only the lower triangles of the second moments (the pass
// accumulates nothing above them; they are mirrored after the exact sum).
std::vector<StatisticArray> FramedArrays(GmmStatistics& s) {
  if (s.type != CovarianceType::kFull) return StatisticArrays(s);
  std::vector<StatisticArray> a{{s.counts.data(), s.counts.size()}, {s.sums.data(), s.sums.size()}};
  for (Eigen::MatrixXd& m : s.second_full) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) a.push_back({&m(j, j), m.rows() - j});
  }
  return a;
}

// One sub-block: coordinates, responsibilities, clip, accumulate.
void FramedSubBlock(const RowBlock& block, const FramedMaps& m, const SmallKernels& kernels,
                    FramedWorker& w) {
  const Eigen::Index d = block.cols();
  Coordinates(block, m, kernels, w);
  Responsibilities(m, w);
  w.scales.resize(block.rows());
  for (Eigen::Index k = 0; k < w.gamma.cols(); ++k) {
    if (!m.local[static_cast<size_t>(k)]) {
      Accumulate(w.x, nullptr, k, kernels, w);  // Global frame: u = x.
      continue;
    }
    auto y = w.y.middleCols(k * d, d);
    ClipScales(y, w.norms.col(k), w.scales);
    Accumulate(y, w.scales.data(), k, kernels, w);
  }
}

}  // namespace

StatusOr<GmmStatistics> ComputeFramedStatistics(const GmmParameters& params,
                                                const std::vector<ComponentFrame>& frames,
                                                const RowSource& unit, const Engine& engine) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  const Eigen::Index k_count = params.components();
  const Eigen::Index d = params.dimension();
  if (frames.size() != static_cast<size_t>(k_count)) {
    return InvalidArgumentError("one frame per component is needed");
  }
  DPEM_RETURN_IF_ERROR(CheckDataColumns(params, unit.cols()));
  DPEM_ASSIGN_OR_RETURN(const FramedMaps maps, BuildMaps(params, frames));
  const SmallKernels kernels =
      params.type == CovarianceType::kFull ? SmallKernelsFor(d) : SmallKernels{};
  const auto init = [&](FramedWorker& w) {
    w.stats = ZeroStatistics(params);
    w.arrays = FramedArrays(w.stats);
    w.exact = ExactSum(TotalSize(w.arrays));
  };
  const Eigen::Index row_doubles = k_count * d + 2 * d + 2 * k_count + 1;
  DPEM_ASSIGN_OR_RETURN(
      std::vector<FramedWorker> workers,
      engine.ReduceInSubBlocks<FramedWorker>(
          unit, row_doubles, init,
          [&](FramedWorker& w, const RowBlock& sub) { FramedSubBlock(sub, maps, kernels, w); },
          [](FramedWorker& w) { w.exact.FoldAndZero(w.arrays); }));
  GmmStatistics total = std::move(workers[0].stats);
  DPEM_RETURN_IF_ERROR(WriteExactSumOverRanks(
      unit.collective(), MergeExactSums(workers, &FramedWorker::exact), FramedArrays(total)));
  for (Eigen::MatrixXd& m : total.second_full) m = Eigen::MatrixXd(m.selfadjointView<Eigen::Lower>());
  for (size_t t = 1; t < workers.size(); ++t) total.log_likelihood += workers[t].stats.log_likelihood;
  DPEM_RETURN_IF_ERROR(SumInRankOrder(unit.collective(), {&total.log_likelihood, 1}));
  total.n = unit.rows();
  return total;
}

}  // namespace dpem::internal
