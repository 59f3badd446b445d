// Test support for the component-frame tests (gmm_frames_test,
// gmm_framed_estep_test): a 2-D mixture with two small components (local
// frames at rho = 3) and a broad one, records near it, far away and on the
// unit sphere, its framed statistics computed record by record,
// independently of the library, and the block-normalised release vector. Not part of the library. The tests live in
// this namespace (dpem::internal::frames_testing), so they use these names
// as they are.
#ifndef DPEM_TESTING_GMM_FRAMES_REFERENCE_H_
#define DPEM_TESTING_GMM_FRAMES_REFERENCE_H_

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <gtest/gtest.h>

#include "dpem/mechanisms/joint_release.h"
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
// library: responsibilities from PredictProba, u = clip(L^{-1}(x - m) / rho)
// in local frames, u = x in global ones. Any K and d.
inline GmmStatistics ExplicitFramed(const GmmParameters& p, const DataMatrix& x, double rho,
                                    const std::vector<ComponentFrame>& frames,
                                    int* clipped = nullptr) {
  const StatusOr<DataMatrix> g = PredictProba(p, x);
  EXPECT_TRUE(g.ok());
  const Eigen::Index k_count = p.components(), d = p.dimension();
  GmmStatistics s;
  s.type = p.type;
  s.counts = Eigen::VectorXd::Zero(k_count);
  s.sums = Eigen::MatrixXd::Zero(k_count, d);
  s.second_full.assign(static_cast<size_t>(k_count), Eigen::MatrixXd::Zero(d, d));
  s.second_diag = Eigen::MatrixXd::Zero(k_count, d);
  s.second_trace = Eigen::VectorXd::Zero(k_count);
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const bool local = frames[static_cast<size_t>(k)].local;
    const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(p.covariances[k]).matrixL();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      Eigen::VectorXd u = x.row(i).transpose();
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
      s.second_full[static_cast<size_t>(k)] += gik * u * u.transpose();
      s.second_diag.row(k) += gik * u.cwiseAbs2().transpose();
      s.second_trace(k) += gik * u.squaredNorm();
    }
  }
  if (p.type != CovarianceType::kFull) s.second_full.clear();
  if (p.type != CovarianceType::kDiagonal) s.second_diag.resize(0, 0);
  if (p.type != CovarianceType::kSpherical) s.second_trace.resize(0);
  return s;
}

// A K-component mixture in d dimensions inside the unit ball: components
// 0 .. K - 2 small and correlated (local frames at rho = 3), the last broad
// (global frame), weights unequal.
inline GmmParameters SmallComponents(CovarianceType type, int k_count, int d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::VectorXd::LinSpaced(k_count, 1.0, 2.0);
  p.weights /= p.weights.sum();
  p.means = Eigen::MatrixXd::Zero(k_count, d);
  for (int k = 0; k < k_count; ++k) {
    Eigen::MatrixXd a(d, d);
    for (Eigen::Index i = 0; i < a.size(); ++i) a(i) = z(rng);
    Eigen::MatrixXd c = 0.002 * (a * a.transpose() / d + 0.5 * Eigen::MatrixXd::Identity(d, d));
    if (type != CovarianceType::kFull) c = Eigen::MatrixXd(c.diagonal().asDiagonal());
    if (type == CovarianceType::kSpherical) c = c.trace() / d * Eigen::MatrixXd::Identity(d, d);
    if (k + 1 == k_count) c = 0.25 * Eigen::MatrixXd::Identity(d, d);
    for (int j = 0; j < d && k + 1 < k_count; ++j) p.means(k, j) = 0.4 * z(rng) / std::sqrt(d);
    p.covariances.push_back(c);
  }
  return p;
}

// n records drawn from p's components in turn (clipped to the unit ball).
inline DataMatrix DrawRecords(const GmmParameters& p, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  const Eigen::Index d = p.dimension();
  DataMatrix x(n, d);
  for (int i = 0; i < n; ++i) {
    const Eigen::Index k = i % p.components();
    Eigen::VectorXd r(d);
    for (Eigen::Index j = 0; j < d; ++j) r(j) = z(rng);
    Eigen::VectorXd v = p.means.row(k).transpose() +
                        Eigen::MatrixXd(Eigen::LLT<Eigen::MatrixXd>(p.covariances[k]).matrixL()) * r;
    if (v.norm() > 1.0) v.normalize();
    x.row(i) = v.transpose();
  }
  return x;
}

// The block-normalised release vector of framed statistics (joint_release.h).
inline Eigen::VectorXd Normalised(const GmmStatistics& s, const JointNoiseScales& split) {
  std::vector<double> v;
  for (Eigen::Index k = 0; k < s.counts.size(); ++k) v.push_back(s.counts(k) / split.counts);
  for (Eigen::Index i = 0; i < s.sums.size(); ++i) v.push_back(s.sums.reshaped()(i) / split.sums);
  for (const Eigen::MatrixXd& m : s.second_full) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = i; j < m.cols(); ++j) {
        v.push_back(m(i, j) * (i == j ? 1.0 : std::sqrt(2.0)) / split.second);
      }
    }
  }
  for (Eigen::Index i = 0; i < s.second_diag.size(); ++i) {
    v.push_back(s.second_diag.reshaped()(i) / split.second);
  }
  for (Eigen::Index i = 0; i < s.second_trace.size(); ++i) {
    v.push_back(s.second_trace(i) / split.second);
  }
  return Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace dpem::internal::frames_testing

#endif  // DPEM_TESTING_GMM_FRAMES_REFERENCE_H_
