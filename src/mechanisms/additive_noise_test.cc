#include "dpem/mechanisms/additive_noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"

namespace dpem {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Bitwise equality, so that NaN entries compare equal to themselves.
template <typename A, typename B>
bool SameBits(const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      const double x = a(i, j);
      const double y = b(i, j);
      if (std::memcmp(&x, &y, sizeof x) != 0) return false;
    }
  }
  return true;
}

// A continuous-noise spec: the ledger then records exactly the spec's
// sensitivity and NoiseScale() (the discrete default is tested below).
NoiseSpec Spec(MechanismKind kind, double sensitivity, double multiplier) {
  NoiseSpec spec{kind, sensitivity, multiplier, "test / stat"};
  spec.sampling = NoiseSampling::kContinuous;
  return spec;
}

NoiseSpec DiscreteSpec(MechanismKind kind, double sensitivity, double multiplier) {
  return NoiseSpec{kind, sensitivity, multiplier, "test / discrete"};
}

// The granularity rule of additive_noise.h, computed independently:
// 2^floor(log2(scale)) / 2^20.
double Granularity(double scale) { return std::exp2(std::floor(std::log2(scale)) - 20.0); }

void ExpectRecorded(const Release& r, const NoiseSpec& spec) {
  EXPECT_EQ(r.mechanism, spec.mechanism);
  EXPECT_EQ(r.sensitivity, spec.sensitivity);
  EXPECT_EQ(r.noise_scale, spec.sensitivity * spec.noise_multiplier);
  EXPECT_DOUBLE_EQ(r.NoiseMultiplier(), spec.noise_multiplier);
  EXPECT_EQ(r.label, spec.label);
}

class ReleaseVectorTest : public ::testing::TestWithParam<MechanismKind> {};

TEST_P(ReleaseVectorTest, RecordsExactlyOneReleaseAndPerturbsEveryEntry) {
  Generator gen = Generator::FromSeed(1);
  PrivacyLedger ledger;
  const NoiseSpec spec = Spec(GetParam(), 0.25, 3.0);
  const Eigen::VectorXd original = Eigen::VectorXd::LinSpaced(6, -1.0, 1.0);
  Eigen::VectorXd value = original;
  ASSERT_TRUE(ReleaseVector(value, spec, gen, ledger).ok());
  ASSERT_EQ(ledger.size(), 1u);
  ExpectRecorded(ledger.releases()[0], spec);
  for (Eigen::Index i = 0; i < value.size(); ++i) {
    EXPECT_NE(value[i], original[i]) << i;
    EXPECT_TRUE(std::isfinite(value[i]));
  }
}

TEST_P(ReleaseVectorTest, NoiseComesFromTheInjectedGenerator) {
  const NoiseSpec spec = Spec(GetParam(), 1.0, 1.0);
  auto release = [&spec](std::uint64_t seed) {
    Generator gen = Generator::FromSeed(seed);
    PrivacyLedger ledger;
    Eigen::VectorXd v = Eigen::VectorXd::Zero(4);
    EXPECT_TRUE(ReleaseVector(v, spec, gen, ledger).ok());
    return v;
  };
  EXPECT_TRUE(SameBits(release(7), release(7)));
  EXPECT_FALSE(SameBits(release(7), release(8)));
}

TEST_P(ReleaseVectorTest, ReleasesASegmentInPlaceOnly) {
  Generator gen = Generator::FromSeed(2);
  PrivacyLedger ledger;
  Eigen::VectorXd big = Eigen::VectorXd::Constant(8, 5.0);
  ASSERT_TRUE(
      ReleaseVector(big.segment(2, 3), Spec(GetParam(), 1, 1), gen, ledger)
          .ok());
  for (Eigen::Index i = 0; i < big.size(); ++i) {
    if (i >= 2 && i < 5) {
      EXPECT_NE(big[i], 5.0) << i;
    } else {
      EXPECT_EQ(big[i], 5.0) << i;
    }
  }
  EXPECT_EQ(ledger.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(BothMechanisms, ReleaseVectorTest,
                         ::testing::Values(MechanismKind::kLaplace,
                                           MechanismKind::kGaussian));

// Each invalid spec, on a valid value: InvalidArgument, nothing recorded, value
// and generator untouched.
TEST(ReleaseVectorValidationTest, InvalidSpecsRecordNothing) {
  const std::vector<NoiseSpec> bad = {
      Spec(MechanismKind::kGaussian, 0.0, 1.0),
      Spec(MechanismKind::kGaussian, -1.0, 1.0),
      Spec(MechanismKind::kLaplace, kNaN, 1.0),
      Spec(MechanismKind::kLaplace, kInf, 1.0),
      Spec(MechanismKind::kGaussian, 1.0, 0.0),
      Spec(MechanismKind::kGaussian, 1.0, -2.0),
      Spec(MechanismKind::kLaplace, 1.0, kNaN),
      Spec(MechanismKind::kLaplace, 1.0, kInf),
      Spec(MechanismKind::kGaussian, 1e-200, 1e-200),  // Scale underflows.
      Spec(MechanismKind::kGaussian, 1e200, 1e200),    // Scale overflows.
      Spec(static_cast<MechanismKind>(42), 1.0, 1.0),
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    Generator gen = Generator::FromSeed(3);
    Generator reference = Generator::FromSeed(3);
    PrivacyLedger ledger;
    const Eigen::VectorXd original = Eigen::VectorXd::LinSpaced(3, 0, 1);
    Eigen::VectorXd value = original;
    const Status s = ReleaseVector(value, bad[i], gen, ledger);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << i;
    EXPECT_TRUE(ledger.empty()) << i;
    EXPECT_TRUE(SameBits(value, original)) << i;
    EXPECT_EQ(gen(), reference()) << "generator advanced, case " << i;
  }
}

TEST(ReleaseVectorValidationTest, NonFiniteOrEmptyValuesRecordNothing) {
  const NoiseSpec spec = Spec(MechanismKind::kGaussian, 1.0, 1.0);
  std::vector<Eigen::VectorXd> bad = {
      Eigen::VectorXd(0), Eigen::Vector3d(1.0, kNaN, 2.0),
      Eigen::Vector3d(kInf, 0.0, 0.0), Eigen::Vector2d(0.0, -kInf)};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    Generator gen = Generator::FromSeed(4);
    PrivacyLedger ledger;
    const Eigen::VectorXd original = bad[i];
    EXPECT_EQ(ReleaseVector(bad[i], spec, gen, ledger).code(),
              StatusCode::kInvalidArgument)
        << i;
    EXPECT_TRUE(ledger.empty()) << i;
    EXPECT_TRUE(SameBits(bad[i], original)) << i;
  }
}

TEST(ReleaseVectorTest, AppendsToAnExistingLedger) {
  Generator gen = Generator::FromSeed(5);
  PrivacyLedger ledger;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(2);
  const NoiseSpec first = Spec(MechanismKind::kLaplace, 2.0, 0.5);
  NoiseSpec second = Spec(MechanismKind::kGaussian, 0.1, 7.0);
  second.label = "second";
  ASSERT_TRUE(ReleaseVector(v, first, gen, ledger).ok());
  ASSERT_TRUE(ReleaseVector(v, second, gen, ledger).ok());
  ASSERT_EQ(ledger.size(), 2u);
  ExpectRecorded(ledger.releases()[0], first);
  ExpectRecorded(ledger.releases()[1], second);
}

TEST(ReleaseMatrixTest, ABlockIsOneRelease) {
  Generator gen = Generator::FromSeed(6);
  PrivacyLedger ledger;
  NoiseSpec spec = Spec(MechanismKind::kGaussian, 0.5, 2.0);
  spec.label = "iteration 1 / sums";
  const Eigen::MatrixXd original = Eigen::MatrixXd::Constant(3, 4, 1.5);
  Eigen::MatrixXd value = original;
  ASSERT_TRUE(ReleaseMatrix(value, spec, gen, ledger).ok());
  ASSERT_EQ(ledger.size(), 1u);
  ExpectRecorded(ledger.releases()[0], spec);
  EXPECT_TRUE(((value - original).array() != 0.0).all());
  // Independent draws, not one draw repeated.
  EXPECT_NE(value(0, 0), value(2, 3));
}

TEST(ReleaseMatrixTest, ReleasesASubBlockInPlaceOnly) {
  Generator gen = Generator::FromSeed(7);
  PrivacyLedger ledger;
  Eigen::MatrixXd big = Eigen::MatrixXd::Zero(5, 5);
  ASSERT_TRUE(ReleaseMatrix(big.block(1, 1, 2, 3),
                            Spec(MechanismKind::kLaplace, 1, 1), gen, ledger)
                  .ok());
  for (Eigen::Index j = 0; j < 5; ++j) {
    for (Eigen::Index i = 0; i < 5; ++i) {
      const bool inside = i >= 1 && i < 3 && j >= 1 && j < 4;
      EXPECT_EQ(big(i, j) != 0.0, inside) << i << "," << j;
    }
  }
}

TEST(ReleaseMatrixTest, InvalidInputsRecordNothing) {
  Generator gen = Generator::FromSeed(8);
  PrivacyLedger ledger;
  Eigen::MatrixXd with_nan = Eigen::MatrixXd::Ones(2, 2);
  with_nan(1, 0) = kNaN;
  const Eigen::MatrixXd original = with_nan;
  EXPECT_EQ(
      ReleaseMatrix(with_nan, Spec(MechanismKind::kGaussian, 1, 1), gen, ledger)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(SameBits(with_nan, original));
  Eigen::MatrixXd ok = Eigen::MatrixXd::Ones(2, 2);
  EXPECT_EQ(ReleaseMatrix(ok, Spec(MechanismKind::kLaplace, -1, 1), gen, ledger)
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(SameBits(ok, Eigen::MatrixXd::Ones(2, 2)));
  Eigen::MatrixXd empty(0, 3);
  EXPECT_EQ(
      ReleaseMatrix(empty, Spec(MechanismKind::kLaplace, 1, 1), gen, ledger)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(ledger.empty());
}

TEST(NoiseSpecTest, NoiseScaleIsSensitivityTimesMultiplier) {
  const NoiseSpec spec = Spec(MechanismKind::kGaussian, 0.2, 4.0);
  EXPECT_DOUBLE_EQ(spec.NoiseScale(), 0.8);
  EXPECT_TRUE(ValidateNoiseSpec(spec).ok());
}


TEST(DiscreteNoiseTest, IsTheDefault) {
  EXPECT_EQ(NoiseSpec{}.sampling, NoiseSampling::kDiscrete);
}

// Sensitivity 0.25, multiplier 3: scale 0.75, g = 2^-21; m = 6 coordinates.
// Gaussian: Delta' = 0.25 (1 + 2^-19) + (2^-52 + 1.25 g) sqrt(6); Laplace:
// the same with 6 for sqrt(6) (the exact sums' quantum 2^-52, the
// floating-point margin 2^-19); the noise scale is ceil(3 Delta' / g) g.
TEST(DiscreteNoiseTest, RecordsTheChargedSensitivityAndTheActualScale) {
  for (MechanismKind kind : {MechanismKind::kGaussian, MechanismKind::kLaplace}) {
    Generator gen = Generator::FromSeed(21);
    PrivacyLedger ledger;
    Eigen::VectorXd value = Eigen::VectorXd::LinSpaced(6, -1.0, 1.0);
    ASSERT_TRUE(ReleaseVector(value, DiscreteSpec(kind, 0.25, 3.0), gen, ledger).ok());
    ASSERT_EQ(ledger.size(), 1u);
    const Release& r = ledger.releases()[0];
    const double g = std::exp2(-21.0);
    ASSERT_EQ(Granularity(0.75), g);
    const double charge = (std::exp2(-52.0) + 1.25 * g) *
                          (kind == MechanismKind::kGaussian ? std::sqrt(6.0) : 6.0);
    const double computed = 0.25 * (1 + std::exp2(-19.0));
    EXPECT_NEAR(r.sensitivity, computed + charge, 1e-15);
    EXPECT_GE(r.sensitivity, computed + charge);
    EXPECT_EQ(r.noise_scale, std::ceil(3.0 * r.sensitivity / g) * g);
    EXPECT_GE(r.NoiseMultiplier(), 3.0);            // The guarantee is unchanged...
    EXPECT_LT(r.NoiseMultiplier(), 3.0 * (1 + 1e-6));  // ...and so is the noise.
    EXPECT_EQ(r.mechanism, kind);
  }
}

// Every output is an integer multiple of g (the support does not depend on
// the input).
TEST(DiscreteNoiseTest, OutputsLieOnTheGrid) {
  Generator gen = Generator::FromSeed(22);
  PrivacyLedger ledger;
  Eigen::VectorXd value = Eigen::VectorXd::LinSpaced(50, -3.3, 7.1);
  const NoiseSpec spec = DiscreteSpec(MechanismKind::kGaussian, 1.0, 2.0);
  ASSERT_TRUE(ReleaseVector(value, spec, gen, ledger).ok());
  const double g = Granularity(2.0);
  for (Eigen::Index i = 0; i < value.size(); ++i) {
    EXPECT_EQ(value[i] / g, std::nearbyint(value[i] / g)) << i;
  }
}

// Mironov's attack reads the input from the low-order bits of input + noise.
// Discrete: two inputs that round to the same grid point give bitwise the
// same output for the same noise, so the bits carry nothing else.
// Continuous: the same noise on the two inputs gives different bits.
TEST(DiscreteNoiseTest, LowOrderBitsCarryNothingBeyondTheGridPoint) {
  const auto release = [](double x, NoiseSampling sampling) {
    NoiseSpec spec = DiscreteSpec(MechanismKind::kLaplace, 1.0, 1.0);
    spec.sampling = sampling;
    Generator gen = Generator::FromSeed(23);
    PrivacyLedger ledger;
    Eigen::VectorXd v = Eigen::VectorXd::Constant(1, x);
    EXPECT_TRUE(ReleaseVector(v, spec, gen, ledger).ok());
    return v;
  };
  const double g = Granularity(1.0), x = 0.1, y = 0.1 + 0.25 * g;
  ASSERT_EQ(std::nearbyint(x / g), std::nearbyint(y / g));
  EXPECT_TRUE(SameBits(release(x, NoiseSampling::kDiscrete), release(y, NoiseSampling::kDiscrete)));
  EXPECT_FALSE(
      SameBits(release(x, NoiseSampling::kContinuous), release(y, NoiseSampling::kContinuous)));
}

TEST(DiscreteNoiseTest, UnknownSamplingIsRefused) {
  NoiseSpec spec = DiscreteSpec(MechanismKind::kGaussian, 1.0, 1.0);
  spec.sampling = static_cast<NoiseSampling>(7);
  EXPECT_EQ(ValidateNoiseSpec(spec).code(), StatusCode::kInvalidArgument);
}

// The grid never depends on the values: huge values are clamped to
// 2^kDiscreteValueBits grid units (a contraction) on the same grid, and the
// recorded release is the same as for small values.
TEST(DiscreteNoiseTest, HugeValuesAreClampedNotAGridChange) {
  const NoiseSpec spec = DiscreteSpec(MechanismKind::kGaussian, 1e-6, 1.0);
  const double g = Granularity(1e-6);
  PrivacyLedger small_ledger, huge_ledger;
  Generator gen = Generator::FromSeed(24);
  Eigen::VectorXd small = Eigen::VectorXd::Constant(3, 0.5);
  ASSERT_TRUE(ReleaseVector(small, spec, gen, small_ledger).ok());
  Eigen::VectorXd huge = Eigen::VectorXd::Constant(3, 1e12);
  ASSERT_TRUE(ReleaseVector(huge, spec, gen, huge_ledger).ok());
  EXPECT_EQ(small_ledger.releases()[0].sensitivity, huge_ledger.releases()[0].sensitivity);
  EXPECT_EQ(small_ledger.releases()[0].noise_scale, huge_ledger.releases()[0].noise_scale);
  const double limit = std::ldexp(1.0, kDiscreteValueBits) * g;  // 2^48 * 2^-40 = 256.
  const double noise = huge_ledger.releases()[0].noise_scale;
  for (Eigen::Index i = 0; i < 3; ++i) {
    EXPECT_EQ(huge[i] / g, std::nearbyint(huge[i] / g));
    EXPECT_NEAR(huge[i], limit, 50 * noise);
  }
}


// A strided block (column-major sub-matrix) is released in place, on the
// grid, and nothing outside it changes.
TEST(DiscreteNoiseTest, ReleasesASubBlockInPlaceOnly) {
  Generator gen = Generator::FromSeed(25);
  PrivacyLedger ledger;
  Eigen::MatrixXd big = Eigen::MatrixXd::Constant(5, 5, 0.5);
  const NoiseSpec spec = DiscreteSpec(MechanismKind::kLaplace, 1.0, 1.0);
  ASSERT_TRUE(ReleaseMatrix(big.block(1, 1, 2, 3), spec, gen, ledger).ok());
  const double g = Granularity(1.0);
  for (Eigen::Index j = 0; j < 5; ++j) {
    for (Eigen::Index i = 0; i < 5; ++i) {
      const bool inside = i >= 1 && i < 3 && j >= 1 && j < 4;
      EXPECT_EQ(big(i, j) != 0.5, inside) << i << "," << j;
      if (inside) EXPECT_EQ(big(i, j) / g, std::nearbyint(big(i, j) / g));
    }
  }
}

}  // namespace
}  // namespace dpem

namespace dpem {
namespace {

// CheckRelease refuses, without drawing, what a release would refuse: a
// discrete L1 release of so many coordinates that its rounding charge leaves
// no grid (m = 2e7: a charge of 1.25 g m is about 24 noise scales), but
// not the same release with continuous noise, nor a small one.
TEST(CheckReleaseTest, RefusesWhatTheReleaseWouldRefuse) {
  NoiseSpec spec{MechanismKind::kLaplace, 1.0, 2.0, "big"};
  EXPECT_FALSE(CheckRelease(spec, 20000000).ok());
  EXPECT_TRUE(CheckRelease(spec, 6).ok());
  EXPECT_FALSE(CheckRelease(spec, 0).ok());
  spec.sampling = NoiseSampling::kContinuous;
  EXPECT_TRUE(CheckRelease(spec, 20000000).ok());
  spec.noise_multiplier = -1.0;
  EXPECT_FALSE(CheckRelease(spec, 6).ok());
}

}  // namespace
}  // namespace dpem
