// Component frames: choosing them, and mapping framed statistics and
// covariance floors back to global coordinates. See gmm_frames.h.
#include "models/gmm/gmm_frames.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <cmath>
#include <limits>
#include <string>

#include "internal/linear_algebra.h"

namespace dpem::internal {
namespace {

ComponentFrame GlobalFrame(Eigen::Index d) {
  ComponentFrame f;
  f.origin = Eigen::VectorXd::Zero(d);
  f.scale = Eigen::MatrixXd::Identity(d, d);
  return f;
}

}  // namespace

double DefaultFrameRadius(Eigen::Index dimension) {
  return std::sqrt(static_cast<double>(dimension)) + 2.0;
}

StatusOr<std::vector<ComponentFrame>> ChooseFrames(const GmmParameters& params, double radius) {
  const Eigen::Index d = params.dimension();
  std::vector<ComponentFrame> frames(static_cast<size_t>(params.components()), GlobalFrame(d));
  if (!(radius > 0.0)) return InvalidArgumentError("frame radius must be > 0");
  if (!std::isfinite(radius)) return frames;
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    const Eigen::MatrixXd& cov = params.covariances[k];
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(cov, Eigen::EigenvaluesOnly);
    if (eig.info() != Eigen::Success) continue;  // Global frame (see the header).
    const double lo = eig.eigenvalues().minCoeff();
    const double hi = eig.eigenvalues().maxCoeff();
    if (!(lo > 0.0) || !(radius * radius * hi < 1.0)) continue;  // Global frame.
    Eigen::LLT<Eigen::MatrixXd> llt(cov);
    if (llt.info() != Eigen::Success) continue;
    const Eigen::MatrixXd scale = radius * Eigen::MatrixXd(llt.matrixL());
    const Eigen::MatrixXd inverse =
        scale.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(d, d));
    if (!(scale.diagonal().array() > 0.0).all() || !inverse.allFinite()) continue;
    ComponentFrame& f = frames[static_cast<size_t>(k)];
    f.local = true;
    f.origin = params.means.row(k).transpose();
    f.scale = scale;
    f.radius = radius;
  }
  return frames;
}

GmmStatistics FramedToGlobal(const GmmStatistics& framed,
                             const std::vector<ComponentFrame>& frames) {
  GmmStatistics g = framed;
  for (Eigen::Index k = 0; k < framed.counts.size(); ++k) {
    const ComponentFrame& f = frames[static_cast<size_t>(k)];
    if (!f.local) continue;
    const double n = framed.counts(k);
    const Eigen::VectorXd& m = f.origin;
    const Eigen::VectorXd sa = f.scale * framed.sums.row(k).transpose();  // S A.
    g.sums.row(k) = (n * m + sa).transpose();
    switch (framed.type) {
      case CovarianceType::kFull: {
        const Eigen::MatrixXd cross = m * sa.transpose();
        Eigen::MatrixXd s = n * m * m.transpose() + cross + cross.transpose() +
                            f.scale * framed.second_full[k] * f.scale.transpose();
        g.second_full[k] = 0.5 * (s + s.transpose());
        break;
      }
      case CovarianceType::kDiagonal: {
        const Eigen::ArrayXd s = f.scale.diagonal().array();
        g.second_diag.row(k) = (n * m.array().square() + 2.0 * m.array() * sa.array() +
                                s.square() * framed.second_diag.row(k).transpose().array())
                                   .matrix()
                                   .transpose();
        break;
      }
      case CovarianceType::kSpherical: {
        const double s = f.scale(0, 0);
        g.second_trace(k) = n * m.squaredNorm() + 2.0 * m.dot(sa) + s * s * framed.second_trace(k);
        break;
      }
    }
  }
  return g;
}

Status FloorInFrames(GmmParameters& params, const std::vector<ComponentFrame>& frames,
                     const Eigen::VectorXd& floors) {
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    const ComponentFrame& f = frames[static_cast<size_t>(k)];
    if (!f.local) continue;
    Eigen::MatrixXd& cov = params.covariances[k];
    if (params.type != CovarianceType::kFull) {
      cov.diagonal() = cov.diagonal().cwiseMax(floors(k) * f.scale.diagonal().cwiseAbs2());
      continue;
    }
    const auto lower = f.scale.triangularView<Eigen::Lower>();
    // S^{-1} Sigma S^{-T}, by two triangular solves.
    const Eigen::MatrixXd half = lower.solve(cov);
    const Eigen::MatrixXd in_frame = lower.solve(half.transpose());
    if (!in_frame.allFinite()) continue;
    DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd floored,
                          ClampEigenvalues(0.5 * (in_frame + in_frame.transpose()), floors(k),
                                           std::numeric_limits<double>::infinity()));
    const Eigen::MatrixXd back = f.scale * floored * f.scale.transpose();
    if (back.allFinite()) cov = 0.5 * (back + back.transpose());
  }
  return OkStatus();
}

}  // namespace dpem::internal
