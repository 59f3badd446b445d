// Test support for the Gaussian-mixture tests (gmm_test, gmm_estep_test,
// gmm_mstep_test): a fixed 3-D mixture of each covariance structure, data
// drawn from it, and the E- and M-step quantities computed naively (explicit
// inverses and determinants, row by row), independently of the library's
// Cholesky paths. Not part of the library. The tests live in this namespace
// (dpem::gmm_testing), so they use these names as they are.
#ifndef DPEM_TESTING_GMM_REFERENCE_H_
#define DPEM_TESTING_GMM_REFERENCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include <Eigen/Core>
#include <Eigen/LU>

#include "dpem/models/gmm/gmm.h"
#include "testing/seeded_draws.h"

namespace dpem::gmm_testing {

inline constexpr CovarianceType kAllCovarianceTypes[] = {
    CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical};

// max |a - b| / max(max |b|, 1e-300).
inline double RelativeDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() /
         std::max(b.cwiseAbs().maxCoeff(), 1e-300);
}

// A 3-component mixture in 3-D of the given structure.
inline GmmParameters ThreeComponents(CovarianceType type) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::Vector3d(0.5, 0.3, 0.2);
  p.means.resize(3, 3);
  p.means << -0.4, 0.1, 0.0,  //
      0.3, 0.3, -0.2,         //
      0.0, -0.4, 0.3;
  Eigen::Matrix3d full;
  full << 0.020, 0.006, -0.003,  //
      0.006, 0.015, 0.002,       //
      -0.003, 0.002, 0.010;
  for (int k = 0; k < 3; ++k) {
    const Eigen::Matrix3d base = full * (1.0 + 0.5 * k);
    if (type == CovarianceType::kFull) {
      p.covariances.push_back(base);
    } else if (type == CovarianceType::kDiagonal) {
      p.covariances.push_back(Eigen::Matrix3d(base.diagonal().asDiagonal()));
    } else {
      p.covariances.push_back(Eigen::Matrix3d::Identity() * base.trace() / 3);
    }
  }
  return p;
}

// A perturbed copy, as a starting point different from the truth.
inline GmmParameters Perturbed(const GmmParameters& truth) {
  GmmParameters p = truth;
  p.weights = Eigen::Vector3d::Constant(1.0 / 3);
  p.means.array() += 0.1;
  for (auto& c : p.covariances) c *= 2.0;
  return p;
}

// `n` records of the mixture `p` from a generator seeded with `seed`.
inline DataMatrix Draw(const GmmParameters& p, Eigen::Index n, std::uint64_t seed) {
  const auto sample = [](const GmmParameters& q, Eigen::Index m, Generator& gen) {
    return Sample(q, m, gen);
  };
  return test_support::SeededDraw(sample, p, n, seed);
}

// Naive log N(x | mu, Sigma) with an explicit inverse and determinant (an
// independent check of the Cholesky path).
inline double NaiveLogNormal(const Eigen::VectorXd& x, const Eigen::VectorXd& mu,
                             const Eigen::MatrixXd& cov) {
  const Eigen::VectorXd diff = x - mu;
  const double quad = diff.dot(cov.inverse() * diff);
  const double d = static_cast<double>(x.size());
  return -0.5 * (d * std::log(2 * std::numbers::pi) +
                 std::log(cov.determinant()) + quad);
}

// Naive responsibilities (N x K) and per-row log densities.
inline void NaiveEStep(const GmmParameters& p, const DataMatrix& x,
                       Eigen::MatrixXd* gamma, Eigen::VectorXd* log_density) {
  gamma->resize(x.rows(), p.components());
  log_density->resize(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double total = 0;
    for (Eigen::Index k = 0; k < p.components(); ++k) {
      (*gamma)(i, k) = p.weights(k) * std::exp(NaiveLogNormal(
                           x.row(i).transpose(), p.means.row(k).transpose(),
                           p.covariances[k]));
      total += (*gamma)(i, k);
    }
    gamma->row(i) /= total;
    (*log_density)(i) = std::log(total);
  }
}

// Weighted mean and centred weighted covariance, computed row by row.
inline void WeightedMoments(const DataMatrix& x, const Eigen::VectorXd& g,
                            double* count, Eigen::VectorXd* mean,
                            Eigen::MatrixXd* cov) {
  *count = g.sum();
  *mean = Eigen::VectorXd::Zero(x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) *mean += g(i) * x.row(i).transpose();
  *mean /= *count;
  *cov = Eigen::MatrixXd::Zero(x.cols(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::VectorXd diff = x.row(i).transpose() - *mean;
    *cov += g(i) * diff * diff.transpose();
  }
  *cov /= *count;
}

// The part of a full covariance that `type` keeps.
inline Eigen::MatrixXd Structured(const Eigen::MatrixXd& m, CovarianceType type) {
  if (type == CovarianceType::kFull) return m;
  if (type == CovarianceType::kDiagonal) return m.diagonal().asDiagonal();
  return Eigen::MatrixXd::Identity(m.rows(), m.cols()) * m.trace() / m.rows();
}

}  // namespace dpem::gmm_testing

#endif  // DPEM_TESTING_GMM_REFERENCE_H_
