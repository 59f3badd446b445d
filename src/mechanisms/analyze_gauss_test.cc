#include "dpem/mechanisms/analyze_gauss.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace dpem {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A continuous-noise spec (the discrete default is tested below).
NoiseSpec GaussianSpec(double sensitivity, double multiplier) {
  NoiseSpec spec{MechanismKind::kGaussian, sensitivity, multiplier,
                 "iteration 2 / covariance[0]"};
  spec.sampling = NoiseSampling::kContinuous;
  return spec;
}

// A random symmetric d x d matrix with N(0, 1) entries (indefinite in
// general), from dpem's sampler: the matrices are inputs, not outputs.
Eigen::MatrixXd RandomSymmetric(Generator& gen, Eigen::Index d) {
  return *SampleSymmetricGaussianMatrix(gen, d, 1.0);
}

// Eigenvalues by the general (non-symmetric) Hessenberg-QR solver, a different
// algorithm from the SelfAdjointEigenSolver under test.
Eigen::VectorXd IndependentEigenvalues(const Eigen::MatrixXd& m) {
  const Eigen::EigenSolver<Eigen::MatrixXd> solver(m, false);
  EXPECT_EQ(solver.info(), Eigen::Success);
  EXPECT_LT(solver.eigenvalues().imag().cwiseAbs().maxCoeff(), 1e-9);
  return solver.eigenvalues().real();
}

bool ExactlySymmetric(const Eigen::MatrixXd& m) {
  return (m.array() == m.transpose().array()).all();
}

TEST(ReleaseSymmetricTest, RecordsOneGaussianReleaseAndIsExactlySymmetric) {
  Generator gen = Generator::FromSeed(11);
  PrivacyLedger ledger;
  const Eigen::MatrixXd original = RandomSymmetric(gen, 4);
  Eigen::MatrixXd value = original;
  const NoiseSpec spec = GaussianSpec(0.02, 5.0);
  ASSERT_TRUE(ReleaseSymmetric(value, spec, gen, ledger).ok());
  ASSERT_EQ(ledger.size(), 1u);
  const Release& r = ledger.releases()[0];
  EXPECT_EQ(r.mechanism, MechanismKind::kGaussian);
  EXPECT_EQ(r.sensitivity, 0.02);
  EXPECT_EQ(r.noise_scale, 0.02 * 5.0);
  EXPECT_EQ(r.label, spec.label);
  EXPECT_TRUE(ExactlySymmetric(value));
  EXPECT_TRUE(((value - original).array() != 0.0).all());
}

// Discrete default: d = 4 releases the 10 upper-triangle coordinates on the
// grid g = 2^floor(log2(0.1)) / 2^20 = 2^-24, charged 0.02 (1 + 2^-19) +
// (2^-52 + 1.25 g) sqrt(10) (additive_noise.h, "What is computed").
TEST(ReleaseSymmetricTest, DiscreteDefaultIsSymmetricOnTheGridAndCharged) {
  Generator gen = Generator::FromSeed(13);
  PrivacyLedger ledger;
  Eigen::MatrixXd value = RandomSymmetric(gen, 4);
  const NoiseSpec spec{MechanismKind::kGaussian, 0.02, 5.0, "discrete"};
  ASSERT_TRUE(ReleaseSymmetric(value, spec, gen, ledger).ok());
  EXPECT_TRUE(ExactlySymmetric(value));
  const double g = std::exp2(-24.0);
  EXPECT_TRUE(((value.array() / g).round() == value.array() / g).all());
  const Release& r = ledger.releases()[0];
  const double charged =
      0.02 * (1 + std::exp2(-19.0)) + (std::exp2(-52.0) + 1.25 * g) * std::sqrt(10.0);
  EXPECT_NEAR(r.sensitivity, charged, 1e-16);
  EXPECT_GE(r.sensitivity, charged);
  EXPECT_GE(r.NoiseMultiplier(), 5.0);
}

TEST(ReleaseSymmetricTest, SymmetrisesAnInputWithinTolerance) {
  Generator gen = Generator::FromSeed(12);
  PrivacyLedger ledger;
  Eigen::MatrixXd value = RandomSymmetric(gen, 3);
  value(0, 2) += 1e-14 * value.cwiseAbs().maxCoeff();
  ASSERT_FALSE(ExactlySymmetric(value));
  ASSERT_TRUE(ReleaseSymmetric(value, GaussianSpec(1, 1), gen, ledger).ok());
  EXPECT_TRUE(ExactlySymmetric(value));
}

TEST(ReleaseSymmetricTest, InvalidInputsRecordNothingAndLeaveValue) {
  Eigen::MatrixXd asymmetric = Eigen::MatrixXd::Identity(3, 3);
  asymmetric(0, 1) = 1e-6;
  Eigen::MatrixXd with_nan = Eigen::MatrixXd::Identity(2, 2);
  with_nan(1, 1) = kNaN;
  struct Case {
    Eigen::MatrixXd value;
    NoiseSpec spec;
  };
  NoiseSpec laplace = GaussianSpec(1, 1);
  laplace.mechanism = MechanismKind::kLaplace;
  const std::vector<Case> cases = {
      {Eigen::MatrixXd::Identity(2, 2), laplace},
      {Eigen::MatrixXd::Identity(2, 2), GaussianSpec(0.0, 1)},
      {Eigen::MatrixXd::Identity(2, 2), GaussianSpec(1, kNaN)},
      {Eigen::MatrixXd::Zero(2, 3), GaussianSpec(1, 1)},
      {Eigen::MatrixXd(0, 0), GaussianSpec(1, 1)},
      {asymmetric, GaussianSpec(1, 1)},
      {with_nan, GaussianSpec(1, 1)},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Generator gen = Generator::FromSeed(13);
    PrivacyLedger ledger;
    Eigen::MatrixXd value = cases[i].value;
    EXPECT_EQ(ReleaseSymmetric(value, cases[i].spec, gen, ledger).code(),
              StatusCode::kInvalidArgument)
        << i;
    EXPECT_TRUE(ledger.empty()) << i;
    EXPECT_TRUE((value.array() == cases[i].value.array() ||
                 (value.array().isNaN() && cases[i].value.array().isNaN()))
                    .all())
        << i;
  }
}

// KKT conditions of the Frobenius projection of A onto {R : R >= f I}:
// R - f I is PSD, R - A is PSD, and (R - f I)(R - A) = 0.
void ExpectIsFloorProjection(const Eigen::MatrixXd& a, const Eigen::MatrixXd& r,
                             double floor) {
  const Eigen::Index d = a.rows();
  const double tol = 1e-12 * std::max(1.0, a.norm());
  const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(d, d);
  EXPECT_GE(IndependentEigenvalues(r).minCoeff(), floor - tol);
  EXPECT_GE(IndependentEigenvalues(r - a).minCoeff(), -tol);
  EXPECT_LT(((r - floor * id) * (r - a)).norm(), tol * std::max(1.0, a.norm()));
  EXPECT_TRUE(ExactlySymmetric(r));
}

TEST(ProjectToEigenvalueFloorTest, ClampsIndefiniteMatricesOntoTheFloor) {
  Generator gen = Generator::FromSeed(14);
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::Index d = 1 + trial % 6;
    const Eigen::MatrixXd a = RandomSymmetric(gen, d);
    const double floor = (trial % 2 == 0) ? 1e-3 : 0.5;
    const StatusOr<Eigen::MatrixXd> r = ProjectToEigenvalueFloor(a, floor);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ExpectIsFloorProjection(a, *r, floor);
  }
}

TEST(ProjectToEigenvalueFloorTest, ClampsAMatrixWithKnownSpectrum) {
  // diag(-1, 0.5, 3) in a rotated basis: floor 1 gives spectrum (1, 1, 3).
  const double c = std::cos(0.7);
  const double s = std::sin(0.7);
  Eigen::Matrix3d q;
  q << c, -s, 0, s, c, 0, 0, 0, 1;
  const Eigen::Matrix3d a =
      q * Eigen::Vector3d(-1, 0.5, 3).asDiagonal() * q.transpose();
  const Eigen::Matrix3d expected =
      q * Eigen::Vector3d(1, 1, 3).asDiagonal() * q.transpose();
  const StatusOr<Eigen::MatrixXd> r =
      ProjectToEigenvalueFloor(0.5 * (a + a.transpose()), 1.0);
  ASSERT_TRUE(r.ok());
  EXPECT_LT((*r - expected).norm(), 1e-12);
}

TEST(ProjectToEigenvalueFloorTest, LeavesMatricesAboveTheFloorUnchanged) {
  Generator gen = Generator::FromSeed(15);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::Index d = 1 + trial % 5;
    const Eigen::MatrixXd b = RandomSymmetric(gen, d);
    // B B^T + 0.2 I has every eigenvalue >= 0.2.
    Eigen::MatrixXd a = b * b.transpose();
    a = 0.5 * (a + a.transpose()) + 0.2 * Eigen::MatrixXd::Identity(d, d);
    const StatusOr<Eigen::MatrixXd> r = ProjectToEigenvalueFloor(a, 0.1);
    ASSERT_TRUE(r.ok());
    EXPECT_LT((*r - a).cwiseAbs().maxCoeff(), 1e-12 * (1 + a.norm()));
  }
}

TEST(ProjectToEigenvalueFloorTest, IsIdempotent) {
  Generator gen = Generator::FromSeed(16);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::MatrixXd a = RandomSymmetric(gen, 2 + trial % 5);
    const StatusOr<Eigen::MatrixXd> once = ProjectToEigenvalueFloor(a, 0.05);
    ASSERT_TRUE(once.ok());
    const StatusOr<Eigen::MatrixXd> twice =
        ProjectToEigenvalueFloor(*once, 0.05);
    ASSERT_TRUE(twice.ok());
    EXPECT_LT((*twice - *once).cwiseAbs().maxCoeff(), 1e-12);
  }
}

TEST(ProjectToEigenvalueFloorTest, RejectsInvalidInputs) {
  const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(2, 2);
  for (double floor :
       {0.0, -1.0, kNaN, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(ProjectToEigenvalueFloor(id, floor).status().code(),
              StatusCode::kInvalidArgument)
        << floor;
  }
  Eigen::MatrixXd asymmetric = id;
  asymmetric(1, 0) = 0.5;
  Eigen::MatrixXd with_nan = id;
  with_nan(0, 0) = kNaN;
  for (const Eigen::MatrixXd& m :
       {asymmetric, with_nan, Eigen::MatrixXd(2, 3), Eigen::MatrixXd(0, 0)}) {
    EXPECT_EQ(ProjectToEigenvalueFloor(m, 0.1).status().code(),
              StatusCode::kInvalidArgument);
  }
}

TEST(ValidateSymmetricMatrixTest, ToleranceIsRelative) {
  Eigen::MatrixXd big = 1e6 * Eigen::MatrixXd::Identity(2, 2);
  big(0, 1) = 1e-7;  // 1e-13 relative to 1e6: accepted.
  EXPECT_TRUE(ValidateSymmetricMatrix(big, "m").ok());
  big(0, 1) = 1e-5;  // 1e-11 relative: refused.
  EXPECT_FALSE(ValidateSymmetricMatrix(big, "m").ok());
}

}  // namespace
}  // namespace dpem
