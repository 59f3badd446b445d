#include "dpem/mechanisms/analyze_gauss.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"

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
  // Continuous noise (3 x 3) and discrete noise (5 x 5, the in-place path).
  const NoiseSpec discrete{MechanismKind::kGaussian, 0.02, 5.0, "d"};
  for (const NoiseSpec& spec : {GaussianSpec(1, 1), discrete}) {
    const Eigen::Index d = spec.sampling == NoiseSampling::kContinuous ? 3 : 5;
    Generator gen = Generator::FromSeed(d == 3 ? 12 : 14);
    PrivacyLedger ledger;
    Eigen::MatrixXd value = RandomSymmetric(gen, d);
    value(d == 3 ? 0 : 1, d == 3 ? 2 : 3) += 1e-14 * value.cwiseAbs().maxCoeff();
    ASSERT_FALSE(ExactlySymmetric(value));
    ASSERT_TRUE(ReleaseSymmetric(value, spec, gen, ledger).ok());
    EXPECT_TRUE(ExactlySymmetric(value));
  }
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

// The tiled validation on several threads: a NaN, an infinity or an
// asymmetry in any strip (here the last of three, in the lower triangle) is
// refused before anything is drawn or recorded, and the value is unchanged.
TEST(ReleaseSymmetricTest, TiledValidationRefusesBadEntriesInAnyStripBeforeDrawing) {
  const Eigen::Index d = 70;  // Strips of 32 columns: 0-31, 32-63, 64-69.
  Eigen::MatrixXd base = Eigen::MatrixXd::Identity(d, d);
  std::vector<Eigen::MatrixXd> bad(3, base);
  bad[0](66, 40) = kNaN;
  bad[1](68, 69) = std::numeric_limits<double>::infinity();
  bad[2](67, 5) = 1e-6;
  for (int threads : {1, 2, 3}) {
    for (std::size_t i = 0; i < 2 * bad.size(); ++i) {
      NoiseSpec spec = GaussianSpec(1, 1);
      if (i >= bad.size()) spec.sampling = NoiseSampling::kDiscrete;
      const Eigen::MatrixXd& input = bad[i % bad.size()];
      Generator gen = Generator::FromSeed(18);
      Generator reference = Generator::FromSeed(18);
      PrivacyLedger ledger;
      Eigen::MatrixXd value = input;
      EXPECT_EQ(ReleaseSymmetric(value, spec, gen, ledger, threads).code(),
                StatusCode::kInvalidArgument)
          << i << " threads " << threads;
      EXPECT_TRUE(ledger.empty());
      EXPECT_EQ(gen(), reference()) << "drew randomness: " << i;
      EXPECT_TRUE((value.array() == input.array() ||
                   (value.array().isNaN() && input.array().isNaN()))
                      .all());
    }
  }
}

// The release of an input that is symmetric only within the tolerance is the
// release of its symmetrisation (A + A^T) / 2, bit for bit, for any thread
// count: the noise goes on sym(A)'s upper triangle, not on A's. (The test
// SymmetrisesAnInputWithinTolerance cannot tell: mirroring makes any output
// exactly symmetric.) The
// asymmetry, 0.4 here, is within 1e-12 of max |A| = 1e12 and many grid units.
TEST(ReleaseSymmetricTest, DiscreteReleasesTheSymmetrisationOfAnInexactInput) {
  Generator data = Generator::FromSeed(16);
  Eigen::MatrixXd symmetric = RandomSymmetric(data, 70);  // Three strips of 32 columns.
  symmetric(0, 0) = 1e12;
  Eigen::MatrixXd inexact = symmetric;
  inexact(1, 3) += 0.2;
  inexact(3, 1) -= 0.2;
  inexact(40, 66) -= 0.2;
  inexact(66, 40) += 0.2;
  ASSERT_FALSE(ExactlySymmetric(inexact));
  for (int threads : {1, 2}) {
    Generator gen_a = Generator::FromSeed(17);
    Generator gen_b = Generator::FromSeed(17);
    PrivacyLedger ledger_a, ledger_b;
    Eigen::MatrixXd released_inexact = inexact;
    Eigen::MatrixXd released_symmetric = symmetric;
    const NoiseSpec spec{MechanismKind::kGaussian, 0.02, 5.0, "d"};
    ASSERT_TRUE(ReleaseSymmetric(released_inexact, spec, gen_a, ledger_a, threads).ok());
    ASSERT_TRUE(ReleaseSymmetric(released_symmetric, spec, gen_b, ledger_b, threads).ok());
    EXPECT_TRUE((released_inexact.array() == released_symmetric.array()).all()) << threads;
  }
}

TEST(ReleaseSymmetricTest, RefusesZeroThreads) {
  Generator gen = Generator::FromSeed(15);
  PrivacyLedger ledger;
  Eigen::MatrixXd value = Eigen::MatrixXd::Identity(2, 2);
  EXPECT_EQ(ReleaseSymmetric(value, {MechanismKind::kGaussian, 1.0, 1.0, "t"}, gen, ledger, 0)
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(ledger.empty());
}

// The chunked noise (internal::ForEachNoiseChunk): every coordinate is
// visited once, and each chunk's stream is the same for 1, 2 or 3 threads.
TEST(ForEachNoiseChunkTest, CoversEveryCoordinateOnceWithStreamsIndependentOfThreads) {
  constexpr Eigen::Index kC = internal::kNoiseChunkCoordinates;
  const Eigen::Index n = 2 * kC + 7;  // Three chunks, the last of 7.
  std::vector<std::uint64_t> reference;
  for (int threads : {1, 2, 3}) {
    Generator gen = Generator::FromSeed(50);
    std::vector<int> hits(static_cast<size_t>(n), 0);
    std::vector<std::uint64_t> first_words(3, 0);
    internal::ForEachNoiseChunk(n, threads, gen,
                                [&](Generator& stream, Eigen::Index begin, Eigen::Index end) {
                                  for (Eigen::Index k = begin; k < end; ++k) ++hits[k];
                                  first_words[static_cast<size_t>(begin / kC)] = stream();
                                });
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << threads;
    if (reference.empty()) reference = first_words;
    EXPECT_EQ(first_words, reference) << threads;
  }
  EXPECT_NE(reference[0], reference[1]);
  EXPECT_NE(reference[1], reference[2]);
  EXPECT_NE(reference[0], reference[2]);
}

// d = 512: m = 131,328 upper-triangle coordinates, three noise chunks.
constexpr Eigen::Index kChunkedD = 512;

// The upper triangle of `m` in column order (vec_upper), read here.
std::vector<double> UpperInColumnOrder(const Eigen::MatrixXd& m) {
  std::vector<double> out;
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) out.push_back(m(i, j));
  }
  return out;
}

// A seeded release gives the same bits on 1, 2 or 3 threads, and advances the
// generator by the same four words (its fork) whatever the threads.
TEST(ReleaseSymmetricChunksTest, SameBitsForOneTwoAndThreeThreads) {
  ASSERT_GT(kChunkedD * (kChunkedD + 1) / 2, 2 * internal::kNoiseChunkCoordinates);
  Generator data = Generator::FromSeed(40);
  const Eigen::MatrixXd original = RandomSymmetric(data, kChunkedD);
  std::uint64_t after_fork = 0;  // Word 5 of the seed's stream: what follows the fork.
  {
    Generator reference = Generator::FromSeed(41);
    for (int i = 0; i < 4; ++i) reference();
    after_fork = reference();
  }
  Eigen::MatrixXd first;
  for (int threads : {1, 2, 3}) {
    Generator gen = Generator::FromSeed(41);
    PrivacyLedger ledger;
    Eigen::MatrixXd value = original;
    ASSERT_TRUE(
        ReleaseSymmetric(value, {MechanismKind::kGaussian, 1.0, 2.0, "s"}, gen, ledger, threads)
            .ok());
    EXPECT_TRUE(ExactlySymmetric(value));
    EXPECT_EQ(gen(), after_fork) << threads;
    if (threads == 1) first = value;
    EXPECT_TRUE((value.array() == first.array()).all()) << threads;
  }
}

// Two consecutive releases from one generator must not reuse a noise stream:
// no chunk of either release may carry the same noise as another chunk of
// either (the noise of the zero matrix is the released value itself). A
// release that split its chunk streams from the generator without advancing
// it would repeat the first release's noise exactly.
TEST(ReleaseSymmetricChunksTest, ConsecutiveReleasesNeverReuseANoiseStream) {
  constexpr Eigen::Index kC = internal::kNoiseChunkCoordinates;
  constexpr size_t kCompared = 1000;  // Values compared per chunk (the last has 1,256).
  Generator gen = Generator::FromSeed(42);
  std::vector<std::vector<double>> chunks;
  for (int release = 0; release < 2; ++release) {
    PrivacyLedger ledger;
    Eigen::MatrixXd value = Eigen::MatrixXd::Zero(kChunkedD, kChunkedD);
    ASSERT_TRUE(
        ReleaseSymmetric(value, {MechanismKind::kGaussian, 1.0, 2.0, "r"}, gen, ledger, 2).ok());
    const std::vector<double> noise = UpperInColumnOrder(value);
    // Every coordinate got noise (a draw is 0 with probability about 4e-7 at
    // this scale): the chunks' entries cover the upper triangle.
    EXPECT_EQ(std::count(noise.begin(), noise.end(), 0.0), 0);
    for (size_t begin = 0; begin < noise.size(); begin += kC) {
      chunks.emplace_back(noise.begin() + static_cast<std::ptrdiff_t>(begin),
                          noise.begin() + static_cast<std::ptrdiff_t>(begin + kCompared));
    }
  }
  ASSERT_EQ(chunks.size(), 6u);
  for (size_t a = 0; a < chunks.size(); ++a) {
    for (size_t b = a + 1; b < chunks.size(); ++b) {
      EXPECT_NE(chunks[a], chunks[b]) << "chunks " << a << " and " << b;
    }
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
