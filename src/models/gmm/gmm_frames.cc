// Component frames: choosing them, and mapping framed statistics and
// covariance floors back to global coordinates. See gmm_frames.h.
#include "models/gmm/gmm_frames.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <boost/math/special_functions/gamma.hpp>

#include "internal/linear_algebra.h"

namespace dpem::internal {
namespace {

ComponentFrame GlobalFrame(Eigen::Index d) {
  ComponentFrame f;
  f.origin = Eigen::VectorXd::Zero(d);
  f.scale = Eigen::MatrixXd::Identity(d, d);
  return f;
}

// Special functions that report errors by value (NaN), never by exception:
// a fit must not fail on released values.
using QuietPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>>;

// P(X <= x) for X chi-square with k degrees of freedom.
double ChiSquareCdf(double k, double x) {
  if (!(x > 0.0)) return 0.0;
  if (!std::isfinite(x)) return 1.0;
  return boost::math::gamma_p(0.5 * k, 0.5 * x, QuietPolicy());
}

// E[min(c X, rho^2)] for X chi-square with d degrees of freedom, using
// E[X; X < t] = d P(X_{d+2} < t): c d P(X_{d+2} < t) + rho^2 P(X_d >= t),
// t = rho^2 / c. Increasing in c, from 0 to rho^2.
double ClippedSquaredNorm(double c, double rho, double d) {
  const double t = rho * rho / c;
  return c * d * ChiSquareCdf(d + 2.0, t) + rho * rho * (1.0 - ChiSquareCdf(d, t));
}

// E[min(||z||^2, rho ||z||)] for z ~ N(0, c I_d): c d P(X_{d+2} < t) +
// rho sqrt(c) E[sqrt X; X >= t], with E[sqrt X; X >= t] = sqrt 2
// Gamma((d+1)/2) / Gamma(d/2) P(X_{d+1} >= t).
double ClippedNormMoment(double c, double rho, double d) {
  const double t = rho * rho / c;
  const double half_moment = std::exp(std::lgamma(0.5 * (d + 1.0)) - std::lgamma(0.5 * d));
  return c * d * ChiSquareCdf(d + 2.0, t) +
         rho * std::sqrt(2.0 * c) * half_moment * (1.0 - ChiSquareCdf(d + 1.0, t));
}

// The scale c with ClippedSquaredNorm(c) = observed (0 < observed < rho^2),
// by bisection on log c; +infinity if observed is beyond the bracket, 0 if
// it is below it (c < 1e-8 rho^2 / d: the clip at t = rho^2 / c > 1e8 d
// removes nothing a double can hold, so there is nothing to correct).
double ScaleOfClippedNorm(double observed, double rho, double d) {
  const double nominal = rho * rho / d;
  double lo = std::log(1e-8 * nominal), hi = std::log(1e8 * nominal);
  if (!(ClippedSquaredNorm(std::exp(hi), rho, d) > observed)) {
    return std::numeric_limits<double>::infinity();
  }
  if (!(ClippedSquaredNorm(std::exp(lo), rho, d) < observed)) return 0.0;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ClippedSquaredNorm(std::exp(mid), rho, d) < observed ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

// The trace of component k's second moment (its sum of squared norms).
double SecondMomentTrace(const GmmStatistics& s, Eigen::Index k) {
  switch (s.type) {
    case CovarianceType::kFull: return s.second_full[static_cast<size_t>(k)].trace();
    case CovarianceType::kDiagonal: return s.second_diag.row(k).sum();
    case CovarianceType::kSpherical: return s.second_trace(k);
  }
  return 0.0;
}

void ScaleSecondMoment(GmmStatistics& s, Eigen::Index k, double factor) {
  switch (s.type) {
    case CovarianceType::kFull: s.second_full[static_cast<size_t>(k)] *= factor; break;
    case CovarianceType::kDiagonal: s.second_diag.row(k) *= factor; break;
    case CovarianceType::kSpherical: s.second_trace(k) *= factor; break;
  }
}

}  // namespace

ClipCorrection FrameClipCorrection(double observed, double rho, double d) {
  ClipCorrection out;
  if (!(observed > 0.0) || !std::isfinite(observed) || !(rho > 0.0) || !(d >= 1.0)) return out;
  const double c = ScaleOfClippedNorm(observed, rho, d);
  if (std::isinf(c)) return {kMaxClipCorrection, kMaxClipCorrection};  // All on the sphere.
  if (c == 0.0) return out;  // Far inside the frame: nothing clipped.
  const double second = c * d / observed;
  const double mean = c * d / ClippedNormMoment(c, rho, d);
  // Both are >= 1 in exact arithmetic; NaN (a failed special function) or
  // anything outside [1, kMaxClipCorrection] is clamped into it.
  out.second = std::isnan(second) ? 1.0 : std::clamp(second, 1.0, kMaxClipCorrection);
  out.mean = std::isnan(mean) ? 1.0 : std::clamp(mean, 1.0, kMaxClipCorrection);
  return out;
}

void CorrectFrameClipping(GmmStatistics& framed, const std::vector<ComponentFrame>& frames) {
  const double d = static_cast<double>(framed.sums.cols());
  for (Eigen::Index k = 0; k < framed.counts.size(); ++k) {
    const ComponentFrame& f = frames[static_cast<size_t>(k)];
    const double n = framed.counts(k);
    if (!f.local || !(n > 0.0)) continue;
    const double observed = f.radius * f.radius * SecondMomentTrace(framed, k) / n;
    const ClipCorrection cc = FrameClipCorrection(observed, f.radius, d);
    framed.sums.row(k) *= cc.mean;
    ScaleSecondMoment(framed, k, cc.second);
  }
}

double NarrowFrameRadius(Eigen::Index dimension) {
  const double d = static_cast<double>(dimension);
  return std::sqrt(d) + 2.0 / d;
}

Eigen::VectorXd AdaptiveFrameRadii(const Eigen::VectorXd& weights, double records,
                                   double second_noise, Eigen::Index dimension) {
  const double lo = NarrowFrameRadius(dimension);
  const double hi = DefaultFrameRadius(dimension);
  Eigen::VectorXd radii = Eigen::VectorXd::Constant(weights.size(), hi);
  if (!(second_noise > 0.0) || !std::isfinite(second_noise)) return radii;
  for (Eigen::Index k = 0; k < weights.size(); ++k) {
    const double count = std::max(1.0, weights(k) * records);  // NaN -> 1.
    const double squared = kFrameNoiseRatio * std::sqrt(count) / second_noise;
    radii(k) = std::sqrt(std::clamp(squared, lo * lo, hi * hi));
  }
  return radii;
}

double DefaultFrameRadius(Eigen::Index dimension) {
  return std::sqrt(static_cast<double>(dimension)) + 2.0;
}

StatusOr<std::vector<ComponentFrame>> ChooseFrames(const GmmParameters& params, double radius) {
  return ChooseFrames(params, Eigen::VectorXd::Constant(params.components(), radius));
}

StatusOr<std::vector<ComponentFrame>> ChooseFrames(const GmmParameters& params,
                                                   const Eigen::VectorXd& radii) {
  const Eigen::Index d = params.dimension();
  std::vector<ComponentFrame> frames(static_cast<size_t>(params.components()), GlobalFrame(d));
  if (radii.size() != params.components()) {
    return InvalidArgumentError("one frame radius per component expected");
  }
  if (!(radii.array() > 0.0).all()) return InvalidArgumentError("frame radius must be > 0");
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    const double radius = radii(k);
    if (!std::isfinite(radius)) continue;  // Global frame.
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
