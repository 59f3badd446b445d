// Test support for the component-frame tests (gmm_frames_test,
// gmm_framed_estep_test): a 2-D mixture with two small components (local
// frames at rho = 3) and a broad one, records near it, far away and on the
// unit sphere, and its framed statistics computed record by record,
// independently of the library. Not part of the library. The tests live in
// this namespace (dpem::internal::frames_testing), so they use these names
// as they are.
#ifndef DPEM_TESTING_GMM_FRAMES_REFERENCE_H_
#define DPEM_TESTING_GMM_FRAMES_REFERENCE_H_

#include <limits>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <gtest/gtest.h>

#include "dpem/models/gmm/gmm.h"
#include "models/gmm/gmm_frames.h"

namespace dpem::internal::frames_testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Two small components (local frames at rho = 3) and one broad one (global).
inline GmmParameters TwoSmallOneBroad(CovarianceType type) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector3d(0.3, 0.3, 0.4);
  p.means = Eigen::MatrixXd(3, 2);
  p.means << -0.5, 0.2, 0.4, -0.3, 0.0, 0.0;
  Eigen::Matrix2d a, b;
  a << 0.004, 0.0015, 0.0015, 0.002;
  b << 0.003, 0.0, 0.0, 0.006;
  if (type == CovarianceType::kDiagonal) a = Eigen::Vector2d(0.004, 0.002).asDiagonal();
  if (type == CovarianceType::kSpherical) {
    a = 0.003 * Eigen::Matrix2d::Identity();
    b = 0.005 * Eigen::Matrix2d::Identity();
  }
  p.covariances = {a, b, 0.25 * Eigen::Matrix2d::Identity()};
  return p;
}

// Records near the components, far away, and on the unit sphere.
inline DataMatrix Records(const GmmParameters& p, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  DataMatrix x(n, 2);
  for (int i = 0; i < n; ++i) {
    const int k = i % 4;
    Eigen::Vector2d r(z(rng), z(rng));
    if (k < 2) r = p.means.row(k).transpose() + 2.5 * 0.07 * r;
    if (k >= 2) r = r.normalized() * (k == 2 ? 1.0 : 0.6);
    x.row(i) = r.transpose();
  }
  return x;
}

// The framed statistics of x computed record by record, independently of the
// library: responsibilities from PredictProba, u = clip(L^{-1}(x - m) / rho).
inline GmmStatistics ExplicitFramed(const GmmParameters& p, const DataMatrix& x, double rho,
                             const std::vector<ComponentFrame>& frames, int* clipped = nullptr) {
  const StatusOr<DataMatrix> g = PredictProba(p, x);
  EXPECT_TRUE(g.ok());
  GmmStatistics s;
  s.type = p.type;
  s.counts = Eigen::VectorXd::Zero(3);
  s.sums = Eigen::MatrixXd::Zero(3, 2);
  s.second_full.assign(3, Eigen::Matrix2d::Zero());
  s.second_diag = Eigen::MatrixXd::Zero(3, 2);
  s.second_trace = Eigen::VectorXd::Zero(3);
  for (int k = 0; k < 3; ++k) {
    const bool local = frames[static_cast<size_t>(k)].local;
    const Eigen::Matrix2d l = Eigen::LLT<Eigen::Matrix2d>(p.covariances[k]).matrixL();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      Eigen::Vector2d u = x.row(i).transpose();
      if (local) {
        u = l.triangularView<Eigen::Lower>().solve(u - p.means.row(k).transpose()) / rho;
        if (u.norm() > 1.0) {
          u /= u.norm();
          if (clipped != nullptr) ++*clipped;
        }
      }
      const double gik = (*g)(i, k);
      s.counts(k) += gik;
      s.sums.row(k) += gik * u.transpose();
      s.second_full[k] += gik * u * u.transpose();
      s.second_diag.row(k) += gik * u.cwiseAbs2().transpose();
      s.second_trace(k) += gik * u.squaredNorm();
    }
  }
  if (p.type != CovarianceType::kFull) s.second_full.clear();
  if (p.type != CovarianceType::kDiagonal) s.second_diag.resize(0, 0);
  if (p.type != CovarianceType::kSpherical) s.second_trace.resize(0);
  return s;
}

}  // namespace dpem::internal::frames_testing

#endif  // DPEM_TESTING_GMM_FRAMES_REFERENCE_H_
