// Tests of the settled-record shortcut (gmm_settled_rows.h): every record it
// claims has all its responsibility in one component by naive densities
// (explicit inverses, testing/gmm_reference.h), its sums are those records'
// moments, and a pass with it gives the dense pass's statistics.
#include "models/gmm/gmm_settled_rows.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "models/gmm/gmm_kernels.h"
#include "testing/gmm_reference.h"

namespace dpem::gmm_testing {
namespace {

using internal::FeatureCount;
using internal::kLogSmallestNormal;
using internal::SettledRows;
using internal::SettledScratch;


// The covariances of Separated().
enum class Shape { kCorrelated, kIsotropic, kElongated };

// A random rotation of eigenvalues spread evenly in log scale from 0.1 to 10.
Eigen::MatrixXd ElongatedCovariance(Eigen::Index d, Generator& gen) {
  Eigen::MatrixXd a(d, d);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = SampleStandardNormal(gen);
  const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(a).householderQ();
  Eigen::VectorXd lambda(d);
  for (Eigen::Index i = 0; i < d; ++i) {
    lambda(i) = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1));
  }
  return q * lambda.asDiagonal() * q.transpose();
}

// K components in d dimensions with means `spread` apart in scale, unequal
// weights and covariances of `shape`: correlated (A A^T / d + I / 2),
// isotropic (I) or elongated (ElongatedCovariance).
GmmParameters Separated(Eigen::Index k, Eigen::Index d, double spread, std::uint64_t seed,
                        Shape shape = Shape::kCorrelated) {
  Generator gen = Generator::FromSeed(seed);
  GmmParameters p;
  p.type = CovarianceType::kFull;
  p.weights.resize(k);
  for (Eigen::Index c = 0; c < k; ++c) p.weights(c) = 1.0 + static_cast<double>(c);
  p.weights /= p.weights.sum();
  p.means.resize(k, d);
  for (Eigen::Index i = 0; i < p.means.size(); ++i) {
    p.means.data()[i] = spread * SampleStandardNormal(gen);
  }
  for (Eigen::Index c = 0; c < k; ++c) {
    Eigen::MatrixXd a(d, d);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = SampleStandardNormal(gen);
    switch (shape) {
      case Shape::kCorrelated:
        p.covariances.push_back(a * a.transpose() / static_cast<double>(d) +
                                0.5 * Eigen::MatrixXd::Identity(d, d));
        break;
      case Shape::kIsotropic:
        p.covariances.push_back(Eigen::MatrixXd::Identity(d, d));
        break;
      case Shape::kElongated:
        p.covariances.push_back(ElongatedCovariance(d, gen));
        break;
    }
  }
  return p;
}

// Naive log pi_k + log N(x | mu_k, Sigma_k) of each row (rows x K).
Eigen::MatrixXd NaiveLogJoint(const GmmParameters& p, const DataMatrix& x) {
  Eigen::MatrixXd l(x.rows(), p.components());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index k = 0; k < p.components(); ++k) {
      l(i, k) = std::log(p.weights(k)) + NaiveLogNormal(x.row(i).transpose(),
                                                        p.means.row(k).transpose(),
                                                        p.covariances[k]);
    }
  }
  return l;
}

// Records of the mixture, then `line` records evenly along the segment from
// the first mean to the second (both ends included: every gap between the
// two components' densities, 0 at its middle).
DataMatrix WithLine(const GmmParameters& p, Eigen::Index n, Eigen::Index line) {
  DataMatrix x(n + line, p.dimension());
  x.topRows(n) = Draw(p, n, 5);
  for (Eigen::Index i = 0; i < line; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(line - 1);
    x.row(n + i) = (1.0 - t) * p.means.row(0) + t * p.means.row(1);
  }
  return x;
}

// Records on the line from mu_0 to mu_1 at which the naive log joint
// densities of components 0 and 1 differ by 600, 601, ..., 800 nats (found
// by bisection), across the threshold of a
// flushed responsibility.
DataMatrix AcrossTheThreshold(const GmmParameters& p) {
  const Eigen::VectorXd mu0 = p.means.row(0).transpose(), mu1 = p.means.row(1).transpose();
  const auto gap = [&](double t) {
    const Eigen::VectorXd x = mu0 + t * (mu1 - mu0);
    return std::log(p.weights(0) / p.weights(1)) + NaiveLogNormal(x, mu0, p.covariances[0]) -
           NaiveLogNormal(x, mu1, p.covariances[1]);
  };
  DataMatrix x(201, p.dimension());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const double target = 600.0 + static_cast<double>(i);
    double lo = 0.0, hi = 1.0;  // gap(lo) > target > gap(hi).
    EXPECT_GT(gap(lo), target);
    EXPECT_LT(gap(hi), target);
    for (int step = 0; step < 60; ++step) {
      const double mid = 0.5 * (lo + hi);
      (gap(mid) > target ? lo : hi) = mid;
    }
    x.row(i) = (mu0 + lo * (mu1 - mu0)).transpose();
  }
  return x;
}

// Claims the records of `x` at `p` and checks each claim by naive densities.
void ExpectClaimsHold(const GmmParameters& p, const DataMatrix& x) {
  const SettledRows settled = *SettledRows::Create(p);
  EXPECT_TRUE(settled.worthwhile());
  const Eigen::Index d = p.dimension();
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(FeatureCount(d), p.components());
  double log_likelihood = 0.0;
  SettledScratch scratch;
  const Eigen::Index claimed = settled.Claim(RowBlock(x.data(), x.rows(), d), sums,
                                             &log_likelihood, scratch);
  std::vector<Eigen::Index> others = scratch.others;
  std::sort(others.begin(), others.end());
  ASSERT_EQ(claimed + static_cast<Eigen::Index>(others.size()), x.rows());
  EXPECT_GT(claimed, 590);  // Drawn records are far from the other means.
  const Eigen::Index middle = 600 + 200;  // The line's middle.
  EXPECT_TRUE(std::binary_search(others.begin(), others.end(), middle));
  // Independent expectations from the naive densities.
  const Eigen::MatrixXd l = NaiveLogJoint(p, x);
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(FeatureCount(d), p.components());
  double expected_log = 0.0;
  const Eigen::Index pairs = d * (d + 1) / 2;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if (std::binary_search(others.begin(), others.end(), i)) continue;
    Eigen::Index b = 0;
    const double top = l.row(i).maxCoeff(&b);
    for (Eigen::Index k = 0; k < p.components(); ++k) {
      if (k != b) EXPECT_LT(l(i, k) - top, kLogSmallestNormal) << "row " << i;
    }
    Eigen::Index f = 0;
    for (Eigen::Index c = 0; c < d; ++c) {
      for (Eigen::Index r = c; r < d; ++r) expected(f++, b) += x(i, r) * x(i, c);
    }
    expected.col(b).segment(pairs, d) += x.row(i).transpose();
    expected(pairs + d, b) += 1.0;
    expected_log += top;
  }
  EXPECT_LT(RelativeDiff(sums, expected), 1e-12);
  EXPECT_NEAR(log_likelihood, expected_log, 1e-10 * std::fabs(expected_log));
  // The others are gathered for the dense pass.
  ASSERT_EQ(scratch.unsettled.rows(), static_cast<Eigen::Index>(scratch.others.size()));
  for (size_t j = 0; j < scratch.others.size(); ++j) {
    EXPECT_EQ(scratch.unsettled.row(static_cast<Eigen::Index>(j)), x.row(scratch.others[j]));
  }
}

TEST(SettledRowsTest, ClaimedRecordsHaveAllTheirResponsibilityInOneComponent) {
  // Along the line, the gap between the first two components runs through
  // the threshold; round components' bounds are tight there, and elongated
  // ones use their leading directions (d = 24: up to 12).
  for (Shape shape : {Shape::kCorrelated, Shape::kIsotropic, Shape::kElongated}) {
    SCOPED_TRACE(static_cast<int>(shape));
    const GmmParameters p = Separated(5, 24, 60.0, 1, shape);
    DataMatrix x = WithLine(p, 600, 401);
    const DataMatrix near = AcrossTheThreshold(p);
    x.conservativeResize(x.rows() + near.rows(), Eigen::NoChange);
    x.bottomRows(near.rows()) = near;
    ExpectClaimsHold(p, x);
  }
}

TEST(SettledRowsTest, BoundsLieAboveTheLogDensities) {
  // u_k(x) >= l_k(x) for every record and component: records of the
  // mixture and records along each leading direction of component 0.
  for (Shape shape : {Shape::kCorrelated, Shape::kIsotropic, Shape::kElongated}) {
    SCOPED_TRACE(static_cast<int>(shape));
    const GmmParameters p = Separated(4, 24, 3.0, 2, shape);
    DataMatrix x(400 + 24 * 4, 24);
    x.topRows(400) = Draw(p, 400, 8);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(p.covariances[0]);
    for (Eigen::Index i = 0; i < 24; ++i) {
      for (int s = 0; s < 4; ++s) {
        x.row(400 + 4 * i + s) = p.means.row(0) + (s + 1.0) * 3.0 *
                                     std::sqrt(eigen.eigenvalues()(i)) *
                                     eigen.eigenvectors().col(i).transpose();
      }
    }
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(FeatureCount(24), 4);
    double log_likelihood = 0.0;
    SettledScratch scratch;
    SettledRows::Create(p)->Claim(RowBlock(x.data(), x.rows(), 24), sums, &log_likelihood,
                                  scratch);
    const Eigen::MatrixXd l = NaiveLogJoint(p, x);
    ASSERT_EQ(scratch.bounds.rows(), x.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      for (Eigen::Index k = 0; k < 4; ++k) {
        EXPECT_GE(scratch.bounds(i, k), l(i, k) - 1e-9 * std::fabs(l(i, k))) << i << " " << k;
      }
    }
    // Not vacuous: the bound is within a factor of the distance.
    EXPECT_LT((scratch.bounds - l).maxCoeff(), 100 * (l.cwiseAbs().maxCoeff() + 1.0));
  }
}

TEST(SettledRowsTest, WorthwhileOnlyWhereComponentsLieApart) {
  EXPECT_FALSE(SettledRows::Create(ThreeComponents(CovarianceType::kFull))->worthwhile());
  EXPECT_FALSE(SettledRows::Create(Separated(5, 12, 1.0, 1))->worthwhile());
  EXPECT_TRUE(SettledRows::Create(Separated(5, 12, 60.0, 1))->worthwhile());
  EXPECT_EQ(SettledRows::Create(ThreeComponents(CovarianceType::kDiagonal)).status().code(),
            StatusCode::kInvalidArgument);
}

// The statistics of the plain fits' pass with the shortcut
// (ComputePlainFitStatistics) and of the dense pass (ComputeStatistics) on
// `x` agree to rounding, and the former's do not depend on the thread count.
void ExpectPassesAgree(const GmmParameters& p, const DataMatrix& x) {
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  const Engine two = *Engine::Create({2, 0});
  const GmmStatistics fast = *internal::ComputePlainFitStatistics(p, source, two);
  const GmmStatistics dense = *ComputeStatistics(p, source, two);
  EXPECT_LT(RelativeDiff(fast.counts, dense.counts), 1e-12);
  EXPECT_LT(RelativeDiff(fast.sums, dense.sums), 1e-12);
  for (size_t k = 0; k < dense.second_full.size(); ++k) {
    EXPECT_LT(RelativeDiff(fast.second_full[k], dense.second_full[k]), 1e-10) << k;
  }
  EXPECT_NEAR(fast.log_likelihood, dense.log_likelihood, 1e-10 * std::fabs(dense.log_likelihood));
  // The exact sums do not depend on the thread count.
  for (int threads : {1, 3}) {
    const GmmStatistics other =
        *internal::ComputePlainFitStatistics(p, source, *Engine::Create({threads, 0}));
    EXPECT_EQ(other.counts, fast.counts);
    EXPECT_EQ(other.sums, fast.sums);
    for (size_t k = 0; k < fast.second_full.size(); ++k) {
      EXPECT_EQ(other.second_full[k], fast.second_full[k]);
    }
  }
}

TEST(SettledRowsTest, PassWithTheShortcutGivesTheDenseStatistics) {
  // Unit-ball scale, as the fits' passes see it; blocks of settled and
  // unsettled records together.
  GmmParameters p = Separated(6, 30, 60.0, 2);
  const double scale = 1.0 / (40.0 * 60.0 * std::sqrt(30.0));
  DataMatrix x = WithLine(p, 20000, 3001) * scale;
  p.means *= scale;
  for (Eigen::MatrixXd& c : p.covariances) c *= scale * scale;
  ASSERT_LE(x.rowwise().norm().maxCoeff(), 1.0);
  ASSERT_TRUE(SettledRows::Create(p)->worthwhile());
  ExpectPassesAgree(p, x);
}

TEST(SettledRowsTest, ZeroWeightAndSingleComponents) {
  GmmParameters p = Separated(4, 8, 60.0, 3);
  p.weights << 0.5, 0.0, 0.25, 0.25;
  const DataMatrix x = Draw(Separated(4, 8, 60.0, 3), 2000, 9) / 1000.0;
  p.means /= 1000.0;
  for (Eigen::MatrixXd& c : p.covariances) c /= 1e6;
  ExpectPassesAgree(p, x);
  const GmmStatistics s = *ComputeStatistics(p, x);
  EXPECT_EQ(s.counts(1), 0.0);  // No responsibility for a zero weight.
  // One component claims every record: its statistics are the moments.
  GmmParameters one;
  one.type = CovarianceType::kFull;
  one.weights = Eigen::VectorXd::Ones(1);
  one.means = p.means.topRows(1);
  one.covariances = {p.covariances[0]};
  SettledScratch scratch;
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(FeatureCount(8), 1);
  double log_likelihood = 0.0;
  EXPECT_EQ(SettledRows::Create(one)->Claim(RowBlock(x.data(), x.rows(), 8), sums,
                                            &log_likelihood, scratch),
            x.rows());
  EXPECT_EQ(sums(FeatureCount(8) - 1, 0), static_cast<double>(x.rows()));
  EXPECT_LT(RelativeDiff(sums.col(0).segment(36, 8), x.colwise().sum().transpose()), 1e-13);
}

TEST(SettledRowsTest, OverflowingRecordsAreLeftToTheDensePass) {
  const GmmParameters p = Separated(3, 4, 60.0, 4);
  DataMatrix x = Draw(p, 50, 6);
  x.row(3).setConstant(1e200);
  x.row(7) << 1e300, -1e300, 0.0, 1.0;
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(FeatureCount(4), 3);
  double log_likelihood = 0.0;
  SettledScratch scratch;
  const Eigen::Index claimed =
      SettledRows::Create(p)->Claim(RowBlock(x.data(), x.rows(), 4), sums, &log_likelihood,
                                    scratch);
  EXPECT_EQ(claimed, 48);
  EXPECT_TRUE(sums.allFinite());
  EXPECT_TRUE(std::isfinite(log_likelihood));
  std::vector<Eigen::Index> others = scratch.others;
  std::sort(others.begin(), others.end());
  EXPECT_EQ(others, (std::vector<Eigen::Index>{3, 7}));
}

}  // namespace
}  // namespace dpem::gmm_testing
