// Exact sums of block partials (engine/exact_sum.h): the property the
// privacy argument of every release uses (docs/privacy.md, "What is
// computed") is that neighbours' totals differ by exactly the difference of
// the one block partial that differs, whatever N and the thread count.
#include "engine/exact_sum.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/models/kmeans/kmeans.h"

namespace dpem::internal {
namespace {

// Random block partials of `size` entries: sums of ~1000 products of
// numbers in [-1, 1], as a block of unit-ball records gives.
std::vector<std::vector<double>> Partials(int blocks, int size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::vector<double>> out(blocks, std::vector<double>(size));
  for (auto& block : out) {
    for (double& v : block) v = 1000.0 * u(rng) * u(rng) + u(rng) * 1e-9;
  }
  return out;
}

std::vector<double> Total(std::vector<std::vector<double>> partials, int parts) {
  const int size = static_cast<int>(partials[0].size());
  std::vector<ExactSum> sums(parts, ExactSum(size));
  for (size_t b = 0; b < partials.size(); ++b) {
    sums[b % parts].FoldAndZero({{partials[b].data(), size}});
    for (double v : partials[b]) EXPECT_EQ(v, 0.0);  // The next block starts from zero.
  }
  std::vector<double> out(size);
  MergeExactSums(sums).WriteTo({{out.data(), size}});
  return out;
}

TEST(ExactSumTest, IsTheSameForAnySplitAndOrder) {
  auto partials = Partials(500, 7, 1);
  const std::vector<double> one = Total(partials, 1);
  EXPECT_EQ(Total(partials, 3), one);
  std::reverse(partials.begin(), partials.end());
  EXPECT_EQ(Total(partials, 2), one);
  // Against a long double sum: within the quantum per block plus one final rounding.
  for (int j = 0; j < 7; ++j) {
    long double exact = 0;
    for (const auto& b : partials) exact += b[j];
    EXPECT_NEAR(static_cast<double>(exact), one[j],
                500 * kExactSumQuantum + 1e-15 * std::fabs(one[j]));
  }
}

// Neighbours: 20,000 blocks, one of which differs. The exact totals differ
// by the rounded difference of that block alone; a plain double sum in the
// same order drifts by the rounding of every later addition.
TEST(ExactSumTest, NeighboursDifferByTheirOneBlockOnly) {
  const int blocks = 20000, size = 3;
  const auto base = Partials(blocks, size, 2);
  auto neighbour = base;
  const auto changed = Partials(1, size, 3)[0];
  neighbour[7] = changed;
  ExactSum a(size), b(size), block_a(size), block_b(size);
  double plain_a[size] = {0, 0, 0}, plain_b[size] = {0, 0, 0};
  for (int i = 0; i < blocks; ++i) {
    for (int j = 0; j < size; ++j) {
      plain_a[j] += base[i][j];
      plain_b[j] += neighbour[i][j];
    }
    auto x = base[i], y = neighbour[i];
    a.FoldAndZero({{x.data(), size}});
    b.FoldAndZero({{y.data(), size}});
  }
  auto x = base[7], y = changed;
  block_a.FoldAndZero({{x.data(), size}});
  block_b.FoldAndZero({{y.data(), size}});
  // (a - b) == (block_a - block_b) exactly: compare a + block_b with b + block_a.
  ExactSum left = a, right = b;
  left.Add(block_b);
  right.Add(block_a);
  std::vector<double> l(size), r(size);
  left.WriteTo({{l.data(), size}});
  right.WriteTo({{r.data(), size}});
  EXPECT_EQ(l, r);
  // The plain double sum does not have the property: its difference is off
  // by more than the quantum in some coordinate (the test would pass
  // vacuously if summation were exact anyway).
  double worst = 0;
  for (int j = 0; j < size; ++j) {
    const double diff = (plain_a[j] - plain_b[j]) - (base[7][j] - changed[j]);
    worst = std::max(worst, std::fabs(diff));
  }
  EXPECT_GT(worst, 1e3 * kExactSumQuantum);
}

TEST(ExactSumTest, ClampsAndIgnoresNan) {
  ExactSum s(3);
  double v[3] = {1e300, -1e300, std::nan("")};
  s.FoldAndZero({{v, 3}});
  double out[3];
  s.WriteTo({{out, 3}});
  EXPECT_EQ(out[0], std::ldexp(1.0, kExactSumMaxBits));
  EXPECT_EQ(out[1], -std::ldexp(1.0, kExactSumMaxBits));
  EXPECT_EQ(out[2], 0.0);
}

// More blocks of the largest partial than a single 128-bit word can hold:
// the total never wraps around (a wrapped total would tell neighbours apart,
// review finding); it is clamped at 2^126 units, a contraction.
TEST(ExactSumTest, NeverWrapsAroundAndClampsTheTotal) {
  ExactSum up(1), down(1);
  const double largest = std::ldexp(1.0, kExactSumMaxBits);
  const long blocks = (1L << (127 - kExactSumMaxBits - kExactSumFractionBits)) + 1;
  for (long b = 0; b < blocks; ++b) {
    double v = largest, w = -largest;
    up.FoldAndZero({{&v, 1}});
    down.FoldAndZero({{&w, 1}});
  }
  double out = 0, back = 0;
  up.WriteTo({{&out, 1}});
  down.WriteTo({{&back, 1}});
  EXPECT_EQ(out, std::ldexp(1.0, kExactSumTotalBits - kExactSumFractionBits));
  EXPECT_EQ(back, -out);
  up.Add(down);  // Exactly zero again, then one more unit-sized block.
  double one = 1.0, total = -1;
  up.FoldAndZero({{&one, 1}});
  up.WriteTo({{&total, 1}});
  EXPECT_EQ(total, 1.0);
}

DataMatrix UnitBallData(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.3);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) x(i, j) = normal(rng);
    const double norm = x.row(i).norm();
    if (norm > 1.0) x.row(i) /= norm * (1 + 1e-12);
  }
  return x;
}

// The passes that feed releases give bitwise the same statistics for any
// thread count (with plain per-thread double sums merged in thread order
// they differ in the last bits).
TEST(ExactSumTest, PassesAreBitwiseIndependentOfTheThreadCount) {
  const DataMatrix x = UnitBallData(20011, 3, 4);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  for (CovarianceType type :
       {CovarianceType::kFull, CovarianceType::kDiagonal, CovarianceType::kSpherical}) {
    GmmParameters p;
    p.type = type;
    p.weights = Eigen::VectorXd::Constant(2, 0.5);
    p.means = Eigen::MatrixXd::Zero(2, 3);
    p.means(0, 0) = 0.3;
    p.covariances.assign(2, Eigen::MatrixXd::Identity(3, 3) * 0.1);
    const GmmStatistics one = *ComputeStatistics(p, source, *Engine::Create({1, 50}));
    for (int threads : {2, 3, 5}) {
      const GmmStatistics s = *ComputeStatistics(p, source, *Engine::Create({threads, 50}));
      EXPECT_EQ(s.counts, one.counts);
      EXPECT_EQ(s.sums, one.sums);
      for (size_t c = 0; c < s.second_full.size(); ++c) {
        EXPECT_EQ(s.second_full[c], one.second_full[c]);
      }
      EXPECT_EQ(s.second_diag, one.second_diag);
      EXPECT_EQ(s.second_trace, one.second_trace);
    }
  }
  const Eigen::MatrixXd centres = x.topRows(4);
  const KmeansStatistics k1 = *ComputeKmeansStatistics(centres, source, *Engine::Create({1, 50}));
  const KmeansStatistics k3 = *ComputeKmeansStatistics(centres, source, *Engine::Create({3, 50}));
  EXPECT_EQ(k1.counts, k3.counts);
  EXPECT_EQ(k1.sums, k3.sums);
}

// A sum of one block partial needs no 128-bit units: SingleFoldValue gives
// the same bits as folding the value into an ExactSum and writing it back,
// for ties at the quantum, values that round to -0, magnitudes from the
// subnormal range past the clamp, and NaN.
TEST(ExactSumTest, ASingleFoldIsItsValueRoundedToTheQuantum) {
  const double q = kExactSumQuantum;
  std::vector<double> values = {0.0, -0.0, q / 2, -q / 2, 1.5 * q, -1.5 * q, 2.5 * q, q / 3,
                                -q / 3, 0.5 + q / 2, 1.0 + q, 2.0 + 4 * q, 400.0 - q / 4,
                                std::numeric_limits<double>::denorm_min(), -1e-300, 1e15,
                                4503599627370496.0 * 3, -1e300,
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 20000; ++i) values.push_back(u(rng) * std::pow(10.0, (i % 40) - 30));
  std::vector<double> folded = values;
  ExactSum sum(static_cast<Eigen::Index>(values.size()));
  sum.FoldAndZero({{folded.data(), static_cast<Eigen::Index>(folded.size())}});
  sum.WriteTo({{folded.data(), static_cast<Eigen::Index>(folded.size())}});
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(SingleFoldValue(values[i])),
              std::bit_cast<std::uint64_t>(folded[i]))
        << "value " << values[i] << " written " << folded[i];
  }
}

}  // namespace
}  // namespace dpem::internal
