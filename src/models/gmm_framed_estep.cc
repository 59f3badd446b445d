// The private E-step pass in component frames (gmm_frames.h): responsibilities
// as in the plain pass, a clip factor per record and component, and the
// statistics of the clipped records, accumulated block by block on the
// engine's threads in global coordinates and mapped into each frame at the
// end.
//
// Per row x and component k, with g the responsibility and c the clip factor
// of frame k (c = 1 in the global frame), the pass accumulates
//   N_k = sum g,  (n1, s1) = sum g c (1, x),  (n2, s2, q2) = sum g c^2 (1, x, T(x)),
// as matrix products of the weights with one feature matrix per block,
// phi(x) = (T(x) packed, x, 1): the packed lower triangle of x x^T (full),
// x (.) x (diagonal) or ||x||^2 (spherical). The framed statistics follow by
// exact algebra: with u = c S^{-1}(x - m),
//   sum g u      = S^{-1} (s1 - n1 m),
//   sum g u u^T  = S^{-1} (q2 - s2 m^T - m s2^T + n2 m m^T) S^{-T}
// (its diagonal or trace for the other types, S being diagonal there).
//
// The clip factor comes from the squared Mahalanobis distance D = ||L^{-1}(x -
// m)||^2 the responsibilities need anyway (full: a linear function of the
// quadratic features, one product per block). Its computed value is inflated
// by an absolute bound on the product's rounding, 2 (F + 2) u sum_j |w_j|
// (features of unit-ball rows are at most 1 in magnitude; u = 2^-53), and by
// the frame's relative margin (gmm_frames.cc), so that the inflated value is
// at least the exact one and c = min(1, rho / sqrt(inflated)) keeps ||u|| <= 1.
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/gmm_frames.h"
#include "models/gmm_kernels.h"

namespace dpem::internal {
namespace {

constexpr double kLog2Pi = 1.8378770664093454835606594728112;  // log(2 pi)
constexpr double kUnitRoundoff = 0x1p-53;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Width of the second-moment part of phi: d(d+1)/2, d or 1.
Eigen::Index SecondWidth(CovarianceType type, Eigen::Index d) {
  switch (type) {
    case CovarianceType::kFull: return d * (d + 1) / 2;
    case CovarianceType::kDiagonal: return d;
    case CovarianceType::kSpherical: return 1;
  }
  return 0;
}

// What the pass needs of the parameters and frames.
struct FramedKernel {
  CovarianceType type = CovarianceType::kFull;
  Eigen::Index d = 0;
  Eigen::VectorXd offsets;         // K: log pi_k - (d log 2 pi + log|Sigma_k|) / 2.
  Eigen::MatrixXd maha_weights;    // kFull: F x K, D as a linear function of phi.
  Eigen::MatrixXd means;           // kDiagonal, kSpherical: K x d.
  Eigen::MatrixXd inverse_stddev;  // kDiagonal, kSpherical: K x d.
  Eigen::VectorXd clip_limit;      // K: rho^2 for local frames, +inf for global.
  Eigen::VectorXd inflate_add;     // K: absolute rounding bound of D.
  Eigen::VectorXd inflate_mul;     // K: relative factor (1 / (1 - margin), ...).

  Eigen::Index components() const { return offsets.size(); }
};

// The full type's weights: D = x^T P x - 2 (P m)^T x + m^T P m, P = Sigma^{-1}.
void FullMahalanobisWeights(const Eigen::MatrixXd& precision, const Eigen::VectorXd& m,
                            Eigen::Ref<Eigen::VectorXd> w) {
  const Eigen::Index d = m.size();
  Eigen::Index f = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = j; i < d; ++i) {
      w(f++) = i == j ? precision(i, i) : precision(i, j) + precision(j, i);
    }
  }
  const Eigen::VectorXd p_m = precision * m;
  w.segment(f, d) = -2.0 * p_m;
  w(f + d) = m.dot(p_m);
}

StatusOr<FramedKernel> MakeKernel(const GmmParameters& p,
                                  const std::vector<ComponentFrame>& frames) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(p));
  const Eigen::Index k_count = p.components();
  const Eigen::Index d = p.dimension();
  if (frames.size() != static_cast<size_t>(k_count)) {
    return InvalidArgumentError("one frame per component is needed");
  }
  FramedKernel kn;
  kn.type = p.type;
  kn.d = d;
  kn.offsets.resize(k_count);
  kn.clip_limit.resize(k_count);
  kn.inflate_add = Eigen::VectorXd::Zero(k_count);
  kn.inflate_mul.resize(k_count);
  const Eigen::Index f_count = FeatureCount(d);
  if (p.type == CovarianceType::kFull) {
    kn.maha_weights.resize(f_count, k_count);
  } else {
    kn.means = p.means;
    kn.inverse_stddev.resize(k_count, d);
  }
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const ComponentFrame& fr = frames[static_cast<size_t>(k)];
    double log_det = 0.0;
    if (p.type == CovarianceType::kFull) {
      Eigen::LLT<Eigen::MatrixXd> llt(p.covariances[k]);
      if (llt.info() != Eigen::Success) {
        return NumericalError("Cholesky factorisation of covariance " + std::to_string(k) +
                              " failed");
      }
      log_det = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
      const Eigen::MatrixXd precision = llt.solve(Eigen::MatrixXd::Identity(d, d));
      FullMahalanobisWeights(precision, p.means.row(k).transpose(), kn.maha_weights.col(k));
      kn.inflate_add(k) = 2.0 * static_cast<double>(f_count + 2) * kUnitRoundoff *
                          kn.maha_weights.col(k).cwiseAbs().sum();
      kn.inflate_mul(k) = 1.0 / (1.0 - fr.margin);
    } else {
      const Eigen::ArrayXd variances = p.covariances[k].diagonal().array();
      kn.inverse_stddev.row(k) = variances.rsqrt().transpose();
      log_det = variances.log().sum();
      // A sum of d non-negative squares of terms with relative error <= 3u.
      kn.inflate_mul(k) =
          (1.0 + 2.0 * static_cast<double>(d + 6) * kUnitRoundoff) / (1.0 - fr.margin);
    }
    kn.offsets(k) = std::log(p.weights(k)) -
                    0.5 * (static_cast<double>(d) * kLog2Pi + log_det);
    kn.clip_limit(k) = fr.local ? fr.radius * fr.radius : kInfinity;
  }
  return kn;
}

// phi(x) of each row (see the file comment), B x (width + d + 1).
void Features(const FramedKernel& kn, const RowBlock& x, Eigen::MatrixXd& phi) {
  if (kn.type == CovarianceType::kFull) {
    QuadraticFeatures(x, &phi);
    return;
  }
  const Eigen::Index w = SecondWidth(kn.type, kn.d);
  phi.resize(x.rows(), w + kn.d + 1);
  phi.middleCols(w, kn.d) = x;
  phi.col(w + kn.d).setOnes();
  if (kn.type == CovarianceType::kDiagonal) {
    phi.leftCols(w) = phi.middleCols(w, kn.d).array().square().matrix();
  } else {
    phi.col(0) = phi.middleCols(w, kn.d).rowwise().squaredNorm();
  }
}

// Squared Mahalanobis distances (B x K) of the block's rows.
void Mahalanobis(const FramedKernel& kn, const RowBlock& x, const Eigen::MatrixXd& phi,
                 Eigen::MatrixXd& out) {
  if (kn.type == CovarianceType::kFull) {
    out.noalias() = phi * kn.maha_weights;
    return;
  }
  // phi's middle columns are x in column-major order: contiguous reads.
  const Eigen::Index w = SecondWidth(kn.type, kn.d);
  out.setZero(x.rows(), kn.components());
  for (Eigen::Index k = 0; k < kn.components(); ++k) {
    for (Eigen::Index j = 0; j < kn.d; ++j) {
      out.col(k).array() +=
          ((phi.col(w + j).array() - kn.means(k, j)) * kn.inverse_stddev(k, j)).square();
    }
  }
}

struct FramedWorker {
  Eigen::VectorXd counts;  // K.
  Eigen::MatrixXd t2;      // (width + d + 1) x K: sum g c^2 phi (transposed
                           // while accumulating, see gmm_estep.cc).
  Eigen::MatrixXd t1;      // (d + 1) x K: sum g c (x, 1).
  double log_likelihood = 0.0;
  Eigen::MatrixXd phi, gamma, clip, weights;
};

void ProcessBlock(const FramedKernel& kn, const RowBlock& x, FramedWorker& w) {
  Features(kn, x, w.phi);
  Mahalanobis(kn, x, w.phi, w.gamma);
  w.clip.setOnes(x.rows(), kn.components());
  for (Eigen::Index k = 0; k < kn.components(); ++k) {
    const double limit = kn.clip_limit(k);
    if (limit == kInfinity) continue;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const double bound = (w.gamma(i, k) + kn.inflate_add(k)) * kn.inflate_mul(k);
      if (bound > limit) w.clip(i, k) = std::sqrt(limit / bound);
    }
  }
  for (Eigen::Index k = 0; k < kn.components(); ++k) {
    w.gamma.col(k) = (kn.offsets(k) - 0.5 * w.gamma.col(k).array()).matrix();
  }
  w.log_likelihood += NormalizeLogJoint(w.gamma).sum();
  w.counts.noalias() += w.gamma.colwise().sum().transpose();
  const Eigen::Index tail = kn.d + 1;
  w.weights = w.gamma.cwiseProduct(w.clip);
  w.t1.noalias() += w.phi.rightCols(tail).transpose() * w.weights;
  w.weights.array() *= w.clip.array();
  w.t2.noalias() += w.phi.transpose() * w.weights;
}

// Component k's framed statistics from the merged sums.
void Frame(const FramedKernel& kn, const ComponentFrame& fr, const FramedWorker& sums,
           Eigen::Index k, GmmStatistics& s) {
  const Eigen::Index d = kn.d;
  const Eigen::Index w = SecondWidth(kn.type, d);
  const Eigen::VectorXd s1 = sums.t1.row(k).head(d).transpose();
  const Eigen::VectorXd s2 = sums.t2.row(k).segment(w, d).transpose();
  const double n1 = sums.t1(k, d);
  const double n2 = sums.t2(k, w + d);
  const Eigen::VectorXd& m = fr.origin;
  const auto lower = fr.scale.triangularView<Eigen::Lower>();
  s.counts(k) = sums.counts(k);
  s.sums.row(k) = lower.solve(s1 - n1 * m).transpose();
  switch (kn.type) {
    case CovarianceType::kFull: {
      Eigen::MatrixXd q(d, d);
      UnpackSymmetric(sums.t2, k, q);
      const Eigen::MatrixXd cross = s2 * m.transpose();
      q += n2 * m * m.transpose() - cross - cross.transpose();
      const Eigen::MatrixXd half = lower.solve(q);
      const Eigen::MatrixXd framed = lower.solve(half.transpose());
      s.second_full[k] = 0.5 * (framed + framed.transpose());
      break;
    }
    case CovarianceType::kDiagonal: {
      const Eigen::ArrayXd q = sums.t2.row(k).head(d).transpose().array();
      s.second_diag.row(k) = ((q - 2.0 * m.array() * s2.array() + n2 * m.array().square()) /
                              fr.scale.diagonal().array().square())
                                 .matrix()
                                 .transpose();
      break;
    }
    case CovarianceType::kSpherical: {
      const double scale = fr.scale(0, 0);
      s.second_trace(k) =
          (sums.t2(k, 0) - 2.0 * m.dot(s2) + n2 * m.squaredNorm()) / (scale * scale);
      break;
    }
  }
}

}  // namespace

StatusOr<GmmStatistics> ComputeFramedStatistics(const GmmParameters& params,
                                                const std::vector<ComponentFrame>& frames,
                                                const RowSource& unit, const Engine& engine) {
  DPEM_ASSIGN_OR_RETURN(const FramedKernel kn, MakeKernel(params, frames));
  const Eigen::Index k = params.components();
  const Eigen::Index d = params.dimension();
  if (unit.cols() != d) {
    return InvalidArgumentError("data have " + std::to_string(unit.cols()) +
                                " columns, the model " + std::to_string(d) + " dimensions");
  }
  const Eigen::Index width = SecondWidth(params.type, d) + d + 1;
  std::vector<FramedWorker> workers(static_cast<size_t>(engine.threads()));
  for (FramedWorker& w : workers) {
    w.counts.setZero(k);
    w.t2.setZero(width, k);
    w.t1.setZero(d + 1, k);
  }
  DPEM_RETURN_IF_ERROR(engine.ForEachBlock(
      unit, width + 3 * k, [&](int thread, const RowBlock& block, Eigen::Index) {
        ProcessBlock(kn, block, workers[static_cast<size_t>(thread)]);
        return OkStatus();
      }));
  FramedWorker& total = workers[0];
  for (size_t t = 1; t < workers.size(); ++t) {
    total.counts += workers[t].counts;
    total.t2 += workers[t].t2;
    total.t1 += workers[t].t1;
    total.log_likelihood += workers[t].log_likelihood;
  }
  total.t2.transposeInPlace();  // K x (width + d + 1), as Frame reads them.
  total.t1.transposeInPlace();
  GmmStatistics s = ZeroStatistics(params);
  for (Eigen::Index c = 0; c < k; ++c) Frame(kn, frames[static_cast<size_t>(c)], total, c, s);
  s.log_likelihood = total.log_likelihood;
  s.n = unit.rows();
  return s;
}

}  // namespace dpem::internal
