#include "dpem/mechanisms/simplex.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace dpem {
namespace {

constexpr double kTol = 1e-12;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Eigen::VectorXd Vec(std::initializer_list<double> xs) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(xs.size()));
  Eigen::Index i = 0;
  for (double x : xs) v[i++] = x;
  return v;
}

void ExpectProjection(const Eigen::VectorXd& v, double floor,
                      const Eigen::VectorXd& expected) {
  const StatusOr<Eigen::VectorXd> w = ProjectToSimplex(v, floor);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_LT((*w - expected).cwiseAbs().maxCoeff(), kTol)
      << "got " << w->transpose() << ", expected " << expected.transpose();
}

// Hand-derived cases (w_k = max(v_k - tau, floor), sum 1).
TEST(ProjectToSimplexTest, KnownCases) {
  ExpectProjection(Vec({0.5, 0.5}), 0.0, Vec({0.5, 0.5}));
  ExpectProjection(Vec({1.0, 1.0}), 0.0, Vec({0.5, 0.5}));  // tau 0.5
  ExpectProjection(Vec({2.0, 0.0}), 0.0, Vec({1.0, 0.0}));  // tau 1
  ExpectProjection(Vec({0.0, 0.0, 0.0}), 0.0, Vec({1, 1, 1}) / 3.0);
  ExpectProjection(Vec({0.3, -1.0, 2.0}), 0.0, Vec({0.0, 0.0, 1.0}));
  ExpectProjection(Vec({0.6, 0.5, -0.3}), 0.0, Vec({0.55, 0.45, 0.0}));
  ExpectProjection(Vec({1.0, 0.0, 0.0}), 0.1, Vec({0.8, 0.1, 0.1}));  // tau .2
  ExpectProjection(Vec({-5.0}), 0.0, Vec({1.0}));
  ExpectProjection(Vec({0.2, 0.3, 0.5}), 0.25, Vec({0.25, 0.275, 0.475}));
}

// KKT: y on the floored simplex, and a single tau with y_k = max(v_k - tau,
// floor) for all k (tau read off the free coordinates).
void ExpectKkt(const Eigen::VectorXd& v, double floor,
               const Eigen::VectorXd& y) {
  EXPECT_NEAR(y.sum(), 1.0, kTol);
  EXPECT_GE(y.minCoeff(), floor);
  Eigen::Index free_k = 0;
  y.maxCoeff(&free_k);  // The largest coordinate is free since K floor < 1.
  ASSERT_GT(y[free_k], floor);
  const double tau = v[free_k] - y[free_k];
  for (Eigen::Index k = 0; k < v.size(); ++k) {
    EXPECT_NEAR(y[k], std::max(v[k] - tau, floor), kTol) << k;
  }
}

// Variational inequality of the projection: (v - y) . (w - y) <= 0 for every
// w in the set; checked on random feasible w.
void ExpectVariationalInequality(const Eigen::VectorXd& v, double floor,
                                 const Eigen::VectorXd& y, Generator& gen) {
  const Eigen::Index k = v.size();
  for (int t = 0; t < 200; ++t) {
    Eigen::VectorXd e(k);
    for (Eigen::Index i = 0; i < k; ++i) e[i] = *SampleGamma(gen, 1.0, 1.0);
    const Eigen::VectorXd w =
        Eigen::VectorXd::Constant(k, floor) + (1.0 - k * floor) * e / e.sum();
    EXPECT_LE((v - y).dot(w - y), 1e-10);
  }
}

TEST(ProjectToSimplexTest, RandomInputsSatisfyKktAndVariationalInequality) {
  Generator gen = Generator::FromSeed(21);
  for (int trial = 0; trial < 300; ++trial) {
    const Eigen::Index k = 1 + trial % 8;
    const double floor = (trial % 3 == 0) ? 0.0 : 0.5 / (k + 1.0);
    const Eigen::VectorXd v = *SampleGaussianVector(gen, k, 1.0 + trial % 4);
    const StatusOr<Eigen::VectorXd> y = ProjectToSimplex(v, floor);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ExpectKkt(v, floor, *y);
    ExpectVariationalInequality(v, floor, *y, gen);
  }
}

TEST(ProjectToSimplexTest, BruteForceOnAGridInThreeDimensions) {
  Generator gen = Generator::FromSeed(22);
  constexpr int kSteps = 400;
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::VectorXd v = *SampleGaussianVector(gen, 3, 1.0);
    const StatusOr<Eigen::VectorXd> y = ProjectToSimplex(v, 0.05);
    ASSERT_TRUE(y.ok());
    double best = std::numeric_limits<double>::infinity();
    for (int a = 0; a <= kSteps; ++a) {
      for (int b = 0; a + b <= kSteps; ++b) {
        const double s = 1.0 - 3 * 0.05;
        Eigen::Vector3d w(a * s / kSteps, b * s / kSteps,
                          (kSteps - a - b) * s / kSteps);
        best = std::min(best, (w.array() + 0.05 - v.array()).matrix().norm());
      }
    }
    // The projection is at least as close as every grid point.
    EXPECT_LE((*y - v).norm(), best + 1e-12);
    EXPECT_GE((*y - v).norm(), best - 0.01);  // Grid spacing 0.85/400.
  }
}

TEST(ProjectToSimplexTest, PointsOnTheSimplexAreFixed) {
  const Eigen::VectorXd w = Vec({0.1, 0.2, 0.3, 0.4});
  ExpectProjection(w, 0.0, w);
  ExpectProjection(w, 0.1, w);
}

TEST(ProjectToSimplexTest, RejectsInvalidInputs) {
  const Eigen::VectorXd v = Vec({0.2, 0.8});
  EXPECT_EQ(ProjectToSimplex(Eigen::VectorXd(0)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ProjectToSimplex(Vec({kNaN, 1.0})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ProjectToSimplex(Vec({std::numeric_limits<double>::infinity()}))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  for (double floor : {-0.1, 0.5, 0.6, kNaN}) {
    EXPECT_EQ(ProjectToSimplex(v, floor).status().code(),
              StatusCode::kInvalidArgument)
        << floor;
  }
}

}  // namespace
}  // namespace dpem
