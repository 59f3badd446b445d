// Adversarial tests of the settled-record shortcut (gmm_settled_rows.h),
// from its review: claims and bounds at extreme scales and condition numbers
// checked against densities in long double, and a covariance whose inverse
// overflows.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <cmath>
#include <numbers>
#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "models/gmm/gmm_kernels.h"
#include "models/gmm/gmm_settled_rows.h"

namespace dpem::gmm_testing {
namespace {

using internal::FeatureCount;
using internal::SettledRows;


// log pi_k + log N(x | mu_k, Sigma_k) in long double (Cholesky in long
// double): the reference for claims and bounds at extreme scales, where the
// double naive densities (explicit inverse) overflow.
long double LongLogJoint(const GmmParameters& p, Eigen::Index k, const Eigen::VectorXd& x) {
  using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  using VecL = Eigen::Matrix<long double, Eigen::Dynamic, 1>;
  const Eigen::Index d = p.dimension();
  const Eigen::LLT<MatL> llt(p.covariances[k].cast<long double>());
  const VecL r = x.cast<long double>() - p.means.row(k).transpose().cast<long double>();
  const VecL w = llt.matrixL().solve(r);
  long double log_det = 0;
  for (Eigen::Index i = 0; i < d; ++i) log_det += 2 * std::log(llt.matrixL()(i, i));
  return std::log(static_cast<long double>(p.weights(k))) -
         0.5L * (static_cast<long double>(d) * std::log(2 * std::numbers::pi_v<long double>) +
                 log_det + w.squaredNorm());
}

// Claims the records of `x` at `p`; returns the number claimed and checks
// each claim (all other components more than -log(DBL_MIN) below the best
// one) and each finite bound (u_k >= l_k up to 1e-6 relative plus 1 nat,
// well inside the gap's 41-nat margin: the double log-determinant of a
// covariance of condition number 1e12, which the dense pass shares, is
// 1e-4 from the long double one) by LongLogJoint.
Eigen::Index ExpectClaimsHoldInLongDouble(const GmmParameters& p, const DataMatrix& x) {
  const Eigen::Index d = p.dimension(), k_count = p.components();
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(FeatureCount(d), k_count);
  double log_likelihood = 0.0;
  internal::SettledScratch scratch;
  const Eigen::Index claimed =
      SettledRows::Create(p)->Claim(RowBlock(x.data(), x.rows(), d), sums, &log_likelihood,
                                    scratch);
  std::vector<Eigen::Index> others = scratch.others;
  std::sort(others.begin(), others.end());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    std::vector<long double> l(static_cast<size_t>(k_count));
    for (Eigen::Index k = 0; k < k_count; ++k) {
      l[static_cast<size_t>(k)] = LongLogJoint(p, k, x.row(i).transpose());
      const double lk = static_cast<double>(l[static_cast<size_t>(k)]);
      if (std::isfinite(lk)) {
        EXPECT_GE(scratch.bounds(i, k), lk - 1e-6 * std::fabs(lk) - 1.0)
            << "row " << i << " component " << k;
      }
    }
    if (std::binary_search(others.begin(), others.end(), i)) continue;
    const auto b = std::max_element(l.begin(), l.end()) - l.begin();
    for (Eigen::Index k = 0; k < k_count; ++k) {
      if (k != b) {
        EXPECT_LT(static_cast<double>(l[static_cast<size_t>(k)] - l[static_cast<size_t>(b)]),
                  internal::kLogSmallestNormal)
            << "claimed row " << i << ": component " << k << " against " << b;
      }
    }
  }
  return claimed;
}

// FAILS at 47547e1. A covariance whose largest eigenvalue is below
// 0.5 / DBL_MAX = 2.8e-309 (subnormal entries; ValidateParameters accepts
// it: finite, symmetric, Cholesky succeeds) makes HalfInverse overflow to
// +infinity. A record on that component's mean then has a computed
// ||x - mu||^2 of 0 or of a few subnormal ulps (||x||^2 + ||mu||^2 - 2 x.mu
// in subnormal arithmetic, where the relative rounding bound gamma (|x| +
// |mu|)^2 underflows to 0): 0 * inf gives NaN (bound +inf, safe), but one
// positive ulp gives u_1 = -infinity although l_1(x) = +357.6. Component 0
// (l_0 = -1.6) then claims the record with responsibility e_0, where the
// exact responsibility is e_1 (component 0 lies 359 nats below). The dense
// pass is degenerate here too (precision 1 / 1e-312 = inf: NaN log joint,
// repaired, log p(x) NaN), so no fit reaches this; but the bound is not the
// rigorous upper bound the header claims, and the shortcut turns the dense
// pass's NaN log-likelihood into a finite, wrong one.
TEST(SettledRowsReviewTest, SubnormalCovarianceGivesNoInfiniteNegativeBound) {
  GmmParameters p;
  p.type = CovarianceType::kFull;
  p.weights = Eigen::Vector2d(0.5, 0.5);
  p.means.resize(2, 1);
  p.means << 0.0, 3e-157;
  p.covariances = {Eigen::MatrixXd::Constant(1, 1, 1.0), Eigen::MatrixXd::Constant(1, 1, 1e-312)};
  ASSERT_TRUE(ValidateParameters(p).ok());
  DataMatrix x(41, 1);
  for (Eigen::Index i = 0; i < x.rows(); ++i) x(i, 0) = 3e-157 * (1.0 + 1e-9 * double(i - 20));
  ExpectClaimsHoldInLongDouble(p, x);
}

// Passes at 47547e1. Claims at extreme scales (1e-140, 1e120: data, means
// and square roots of covariances scaled together) and with ill-conditioned
// covariances: log-spaced spectra, a few leading eigenvalues (the bound's
// directions, condition number times d just below
// kMaxConditionTimesDimension) and a few trailing ones; records drawn, far
// out along eigenvectors, between means and far away. Every claim holds by
// long double densities.
TEST(SettledRowsReviewTest, ClaimsHoldAtExtremeScalesAndConditionNumbers) {
  Generator gen = Generator::FromSeed(77);
  Eigen::Index claimed = 0;
  for (const Eigen::Index d : {1, 3, 12}) {
    for (const double kappa : {1.0, 1e4, 0.9e8 / static_cast<double>(d), 1e12}) {
      for (int profile = 0; profile < 3; ++profile) {
        const Eigen::Index k_count = 3;
        GmmParameters p;
        p.type = CovarianceType::kFull;
        p.weights.resize(k_count);
        for (Eigen::Index c = 0; c < k_count; ++c) {
          p.weights(c) = std::exp(3 * SampleStandardNormal(gen));
        }
        p.weights /= p.weights.sum();
        p.means.resize(k_count, d);
        for (Eigen::Index i = 0; i < p.means.size(); ++i) {
          p.means.data()[i] = 100.0 * SampleStandardNormal(gen);
        }
        for (Eigen::Index c = 0; c < k_count; ++c) {
          Eigen::VectorXd lambda(d);
          const Eigen::Index few = std::max<Eigen::Index>(1, d / 5);
          for (Eigen::Index i = 0; i < d; ++i) {
            const double t = d == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(d - 1);
            lambda(i) = profile == 0   ? std::pow(kappa, t)
                        : profile == 1 ? (i >= d - few ? kappa * (1 + 0.1 * t) : 1.0 + 0.01 * t)
                                       : (i < few ? 1.0 / kappa : 1.0 + t);
          }
          Eigen::MatrixXd a(d, d);
          for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = SampleStandardNormal(gen);
          const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(a).householderQ();
          const Eigen::MatrixXd cov = q * lambda.asDiagonal() * q.transpose();
          p.covariances.push_back(0.5 * (cov + cov.transpose()));
        }
        DataMatrix x(100, d);
        for (Eigen::Index i = 0; i < x.rows(); ++i) {
          const Eigen::Index j = i % k_count;
          const Eigen::VectorXd mu = p.means.row(j).transpose();
          const Eigen::VectorXd other = p.means.row((j + 1) % k_count).transpose();
          const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> e(p.covariances[j]);
          Eigen::VectorXd v(d);
          for (Eigen::Index t = 0; t < d; ++t) v(t) = SampleStandardNormal(gen);
          const double u = std::fabs(SampleStandardNormal(gen));
          const Eigen::Index c = (i / k_count) % d;
          switch (i % 4) {
            case 0:
              x.row(i) = (mu + e.eigenvectors() * e.eigenvalues().cwiseSqrt().asDiagonal() * v)
                             .transpose();
              break;
            case 1:
              x.row(i) = (mu + std::pow(10.0, 2 * u) * std::sqrt(e.eigenvalues()(c)) *
                                   e.eigenvectors().col(c))
                             .transpose();
              break;
            case 2:
              x.row(i) = (mu + std::min(1.0, u / 2) * (other - mu)).transpose();
              break;
            default:
              x.row(i) = (mu + std::pow(10.0, 3 * u) * std::sqrt(e.eigenvalues()(d - 1)) * v)
                             .transpose();
          }
        }
        for (const double s : {1.0, 1e-140, 1e120}) {
          SCOPED_TRACE(testing::Message() << "d " << d << " kappa " << kappa << " profile "
                                          << profile << " scale " << s);
          GmmParameters scaled = p;
          scaled.means *= s;
          for (Eigen::MatrixXd& cov : scaled.covariances) cov *= s * s;
          claimed += ExpectClaimsHoldInLongDouble(scaled, x * s);
        }
      }
    }
  }
  EXPECT_GT(claimed, 1000);  // Not vacuous.
}
}  // namespace
}  // namespace dpem::gmm_testing
