// Tests of the non-private k-means core (dpem/models/kmeans/kmeans.h): the
// nearest-centre kernel and the block-wise statistics against brute force,
// NICV, and the sensitivities of the released statistics under replace-one
// neighbours, by brute force over adversarial and random neighbouring pairs.
#include "dpem/models/kmeans/kmeans.h"

#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dpem/models/gmm/gmm.h"

namespace dpem {
namespace {

DataMatrix RandomData(Eigen::Index n, Eigen::Index d, std::uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) x(i, j) = normal(rng);
  }
  return x;
}

// Brute force: nearest centre by explicit squared distances, first on ties.
void BruteForce(const Eigen::MatrixXd& c, const DataMatrix& x, Eigen::VectorXd& counts,
                Eigen::MatrixXd& sums, double& sse) {
  counts = Eigen::VectorXd::Zero(c.rows());
  sums = Eigen::MatrixXd::Zero(c.rows(), c.cols());
  sse = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    Eigen::Index best = 0;
    double best_d = INFINITY;
    for (Eigen::Index k = 0; k < c.rows(); ++k) {
      double dist = 0.0;
      for (Eigen::Index j = 0; j < c.cols(); ++j) dist += std::pow(x(i, j) - c(k, j), 2);
      if (dist < best_d) {
        best_d = dist;
        best = k;
      }
    }
    counts(best) += 1.0;
    sums.row(best) += x.row(i);
    sse += best_d;
  }
}

TEST(KmeansStatisticsTest, MatchesBruteForceAcrossManyBlocks) {
  // More rows than two blocks, so the block loop and Add are exercised.
  const DataMatrix x = RandomData(2 * kEStepChunkRows + 123, 3, 1);
  const Eigen::MatrixXd c = RandomData(5, 3, 2);
  Eigen::VectorXd counts;
  Eigen::MatrixXd sums;
  double sse = 0.0;
  BruteForce(c, x, counts, sums, sse);
  const StatusOr<KmeansStatistics> s = ComputeKmeansStatistics(c, x);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->n, x.rows());
  EXPECT_EQ(s->counts, counts);
  EXPECT_LT((s->sums - sums).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_NEAR(s->sse, sse, 1e-9 * sse);
}

TEST(KmeansStatisticsTest, EnginePassMatchesBruteForceForAnyThreadsAndBlocks) {
  const DataMatrix x = RandomData(1000, 3, 5);
  const Eigen::MatrixXd c = RandomData(4, 3, 6);
  Eigen::VectorXd counts;
  Eigen::MatrixXd sums;
  double sse = 0.0;
  BruteForce(c, x, counts, sums, sse);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  for (int threads : {1, 2, 3}) {
    for (Eigen::Index rows : {7, 0}) {  // 0: the engine's default block size.
      const Engine engine = *Engine::Create({threads, rows});
      const StatusOr<KmeansStatistics> s = ComputeKmeansStatistics(c, source, engine);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->n, x.rows());
      EXPECT_EQ(s->counts, counts);
      EXPECT_LT((s->sums - sums).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_NEAR(s->sse, sse, 1e-12 * sse);
      // Same thread count, same bits.
      const KmeansStatistics again = *ComputeKmeansStatistics(c, source, engine);
      EXPECT_EQ(again.sums, s->sums);
    }
  }
  const DataMatrix wrong = RandomData(10, 2, 7);
  EXPECT_FALSE(ComputeKmeansStatistics(c, *MatrixRowSource::Borrow(wrong),
                                       *Engine::Create({1, 0}))
                   .ok());
}

TEST(KmeansStatisticsTest, AddSumsDisjointBlocksAndRefusesShapes) {
  const DataMatrix x = RandomData(100, 2, 3);
  const Eigen::MatrixXd c = RandomData(3, 2, 4);
  KmeansStatistics a = *ComputeKmeansStatistics(c, x.topRows(40));
  const KmeansStatistics b = *ComputeKmeansStatistics(c, x.bottomRows(60));
  const KmeansStatistics all = *ComputeKmeansStatistics(c, x);
  ASSERT_TRUE(a.Add(b).ok());
  EXPECT_EQ(a.counts, all.counts);
  EXPECT_LT((a.sums - all.sums).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(a.sse, all.sse, 1e-12);
  EXPECT_EQ(a.n, 100);
  KmeansStatistics wrong = KmeansStatistics::Zero(4, 2);
  EXPECT_FALSE(a.Add(wrong).ok());
  EXPECT_EQ(a.n, 100);
}

TEST(KmeansStatisticsTest, TiesGoToTheLowestIndex) {
  Eigen::MatrixXd c(3, 1);
  c << 1.0, -1.0, 1.0;  // x = 0 is equidistant from all; 1 and 3 coincide.
  DataMatrix x(2, 1);
  x << 0.0, 2.0;
  const Eigen::VectorXi labels = *NearestCentreLabels(c, x);
  EXPECT_EQ(labels(0), 0);
  EXPECT_EQ(labels(1), 0);
}

// Assign in every dimension's path (the compiled kernels up to
// kMaxKmeansKernelDimension, a matrix product above), on a block whose rows
// are not contiguous (a view of some columns of a wider matrix) and whose
// length is not a multiple of eight, against brute force; ties in whole
// groups of eight rows go to the lowest index too (in the kernels' range).
TEST(KmeansStatisticsTest, AssignMatchesBruteForceInEveryDimension) {
  for (Eigen::Index d : {1, 2, 7, 10, 16, 17, 24}) {
    const DataMatrix wide = RandomData(203, d + 3, static_cast<std::uint32_t>(d));
    const Eigen::Ref<const DataMatrix> x = wide.leftCols(d);
    ASSERT_EQ(x.outerStride(), d + 3);
    Eigen::MatrixXd c = RandomData(6, d, static_cast<std::uint32_t>(100 + d));
    c.row(4) = c.row(1);  // A tie for every record whose nearest centre is 1.
    const NearestCentre nc = *NearestCentre::Create(c);
    Eigen::VectorXi labels;
    Eigen::VectorXd distances;
    Eigen::MatrixXd scratch;
    nc.Assign(x, labels, distances, scratch);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const Eigen::VectorXd dist = (c.rowwise() - x.row(i)).rowwise().squaredNorm();
      Eigen::Index best = 0;
      dist.minCoeff(&best);  // The first minimum.
      if (d <= 16) {
        EXPECT_EQ(labels(i), best) << d << " " << i;
      } else {
        // The matrix product may round the two copies of a centre apart
        // (their columns sit in different places of its register panels).
        EXPECT_TRUE(labels(i) == best || (best == 1 && labels(i) == 4)) << d << " " << i;
      }
      EXPECT_NEAR(distances(i), dist(best), 1e-12 * (1.0 + dist(best)));
    }
  }
  Eigen::MatrixXd c(3, 4);
  c << 1, 0, 0, 0, -1, 0, 0, 0, 1, 0, 0, 0;  // Centres 0 and 2 coincide.
  const DataMatrix x = DataMatrix::Zero(16, 4);  // Equidistant from all three.
  Eigen::VectorXi labels;
  Eigen::VectorXd distances;
  Eigen::MatrixXd scratch;
  NearestCentre::Create(c)->Assign(x, labels, distances, scratch);
  EXPECT_EQ(labels, Eigen::VectorXi::Zero(16));
  EXPECT_EQ(distances, Eigen::VectorXd::Ones(16));
}

// Accumulate without frames (the pass of every k-means iteration: in the
// kernels' range the assignment and the sums in one loop, no labels) against
// brute force in every dimension's path, on a non-contiguous block whose
// length is not a multiple of eight, with two coincident centres (the
// records nearest to them count for the first).
TEST(KmeansStatisticsTest, AccumulateMatchesBruteForceInEveryDimension) {
  for (Eigen::Index d : {1, 2, 7, 8, 10, 16, 17, 24}) {
    const DataMatrix wide = RandomData(203, d + 3, static_cast<std::uint32_t>(50 + d));
    const Eigen::Ref<const DataMatrix> x = wide.leftCols(d);
    Eigen::MatrixXd c = RandomData(6, d, static_cast<std::uint32_t>(150 + d));
    c.row(4) = c.row(1);
    Eigen::VectorXd all_counts, top_counts;
    Eigen::MatrixXd all_sums, top_sums;
    double all_sse = 0.0, top_sse = 0.0;
    BruteForce(c, x, all_counts, all_sums, all_sse);
    BruteForce(c, x.topRows(5), top_counts, top_sums, top_sse);
    ASSERT_GT(all_counts(1), 0.0) << d;
    EXPECT_EQ(all_counts(4), 0.0) << d;
    const NearestCentre nc = *NearestCentre::Create(c);
    KmeansStatistics s = KmeansStatistics::Zero(c.rows(), d);
    Eigen::MatrixXd scratch;
    nc.Accumulate(x, s, scratch);
    nc.Accumulate(x.topRows(5), s, scratch);  // A second block adds.
    Eigen::VectorXd counts = all_counts + top_counts;
    Eigen::MatrixXd sums = all_sums + top_sums;
    if (d > 16) {
      // The matrix product may round the two copies apart (see above):
      // compare their records together.
      for (Eigen::VectorXd* v : {&counts, &s.counts}) (*v)(1) += (*v)(4), (*v)(4) = 0.0;
      for (Eigen::MatrixXd* m : {&sums, &s.sums}) {
        m->row(1) += m->row(4);
        m->row(4).setZero();
      }
    }
    EXPECT_EQ(s.counts, counts) << d;
    EXPECT_LT((s.sums - sums).cwiseAbs().maxCoeff(), 1e-12) << d;
    EXPECT_NEAR(s.sse, all_sse + top_sse, 1e-12 * (all_sse + top_sse)) << d;
    EXPECT_EQ(s.n, x.rows() + 5) << d;
  }
}

TEST(KmeansNicvTest, DefinitionAndTranslationInvariance) {
  // Two records per centre at distance 1 and 3: NICV = (1 + 9 + 1 + 9) / 4.
  Eigen::MatrixXd c(2, 2);
  c << 0, 0, 100, 0;
  DataMatrix x(4, 2);
  x << 1, 0, 0, 3, 101, 0, 100, -3;
  EXPECT_DOUBLE_EQ(*Nicv(c, x), 5.0);
  // Far from the origin (lat/lon-like offsets) the shifted form stays exact.
  const Eigen::Vector2d offset(4.0e6, -7.0e6);
  const DataMatrix xs = x.rowwise() + offset.transpose();
  const Eigen::MatrixXd cs = c.rowwise() + offset.transpose();
  EXPECT_NEAR(*Nicv(cs, xs, offset), 5.0, 1e-12);
  EXPECT_FALSE(Nicv(cs, xs, Eigen::VectorXd::Zero(3)).ok());
}

TEST(KmeansNicvTest, RefusesBadInput) {
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(2, 2);
  DataMatrix x = DataMatrix::Zero(3, 3);
  EXPECT_FALSE(Nicv(c, x).ok());
  DataMatrix nan = DataMatrix::Zero(2, 2);
  nan(1, 1) = NAN;
  EXPECT_FALSE(Nicv(c, nan).ok());
  EXPECT_FALSE(NearestCentre::Create(Eigen::MatrixXd()).ok());
}

// ---------------------------------------------------------------------------
// Sensitivities by brute force: neighbouring data sets D, D' (one record
// replaced, both in the unit ball), the same released centres (the analysis
// conditions on earlier releases), statistics computed by the library.

struct Change {
  double joint_l2 = 0.0;
  double joint_l1 = 0.0;
  double counts_l1 = 0.0;
  double sums_l1 = 0.0;
};

Change StatisticsChange(const Eigen::MatrixXd& c, DataMatrix x, const Eigen::RowVectorXd& a,
                        const Eigen::RowVectorXd& b) {
  x.row(0) = a;
  const KmeansStatistics s = *ComputeKmeansStatistics(c, x);
  x.row(0) = b;
  const KmeansStatistics t = *ComputeKmeansStatistics(c, x);
  const Eigen::VectorXd dn = s.counts - t.counts;
  const Eigen::MatrixXd ds = s.sums - t.sums;
  Change ch;
  ch.joint_l2 = std::sqrt(dn.squaredNorm() + ds.squaredNorm());
  ch.counts_l1 = dn.lpNorm<1>();
  ch.sums_l1 = ds.cwiseAbs().sum();
  ch.joint_l1 = ch.counts_l1 + ch.sums_l1;
  return ch;
}

Eigen::RowVectorXd RandomInBall(std::mt19937& rng, Eigen::Index d, bool sphere) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  Eigen::RowVectorXd v(d);
  for (Eigen::Index j = 0; j < d; ++j) v(j) = normal(rng);
  v /= v.norm();
  return sphere ? v : v * std::pow(unif(rng), 1.0 / static_cast<double>(d));
}

TEST(KmeansSensitivityTest, BoundsHoldAndAreAttained) {
  for (Eigen::Index d : {1, 2, 3, 5}) {
    std::mt19937 rng(static_cast<std::uint32_t>(10 + d));
    const Eigen::MatrixXd c = RandomData(4, d, static_cast<std::uint32_t>(20 + d), 0.5);
    DataMatrix x = RandomData(30, d, static_cast<std::uint32_t>(30 + d), 0.3);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      if (x.row(i).norm() > 1) x.row(i) /= x.row(i).norm();
    }
    Change worst;
    auto visit = [&](const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b) {
      const Change ch = StatisticsChange(c, x, a, b);
      worst.joint_l2 = std::max(worst.joint_l2, ch.joint_l2);
      worst.joint_l1 = std::max(worst.joint_l1, ch.joint_l1);
      worst.counts_l1 = std::max(worst.counts_l1, ch.counts_l1);
      worst.sums_l1 = std::max(worst.sums_l1, ch.sums_l1);
    };
    for (int t = 0; t < 3000; ++t) {
      const Eigen::RowVectorXd a = RandomInBall(rng, d, t % 2 == 0);
      visit(a, RandomInBall(rng, d, t % 3 == 0));
      visit(a, -a);  // Same cluster or not: the sum moves by 2.
      // Unit vectors with equal |entries| maximise ||x||_1 = sqrt(d) on the
      // sphere: pairs of random sign patterns.
      auto signs = [&] {
        Eigen::RowVectorXd e = RandomInBall(rng, d, true).array().sign().matrix();
        return Eigen::RowVectorXd(e / std::sqrt(static_cast<double>(d)));
      };
      const Eigen::RowVectorXd e = signs();
      visit(e, -e);
      visit(e, signs());
    }
    const double l1 = KmeansJointL1Sensitivity(d);
    EXPECT_LE(worst.joint_l2, kKmeansJointL2Sensitivity * (1 + 1e-12)) << "d=" << d;
    EXPECT_LE(worst.joint_l1, l1 * (1 + 1e-12)) << "d=" << d;
    EXPECT_LE(worst.counts_l1, kKmeansCountsL1Sensitivity) << "d=" << d;
    EXPECT_LE(worst.sums_l1, KmeansSumsL1Sensitivity(d) * (1 + 1e-12)) << "d=" << d;
    // Attained (the searches above include the maximisers).
    EXPECT_GT(worst.joint_l2, 2.0 * (1 - 1e-9)) << "d=" << d;
    EXPECT_GT(worst.counts_l1, 2.0 - 1e-12) << "d=" << d;
    EXPECT_GT(worst.sums_l1, KmeansSumsL1Sensitivity(d) * 0.98) << "d=" << d;
    EXPECT_GT(worst.joint_l1, l1 * 0.98) << "d=" << d;
  }
}

TEST(KmeansSensitivityTest, ClosedForms) {
  EXPECT_DOUBLE_EQ(KmeansSumsL1Sensitivity(4), 4.0);
  EXPECT_DOUBLE_EQ(KmeansJointL1Sensitivity(4), 6.0);
  EXPECT_DOUBLE_EQ(KmeansJointL1Sensitivity(2), 2.0 + 2.0 * std::sqrt(2.0));
}

// ---------------------------------------------------------------------------
// Cell frames (CellFrames): the frame and plain parts of the private start's
// fine round.

CellFrames Framed(const Eigen::VectorXd& radii) {
  CellFrames f;
  f.radii = radii;
  return f;
}

// Records in the unit ball, a quarter of them on its boundary.
DataMatrix InBall(Eigen::Index n, Eigen::Index d, std::uint32_t seed) {
  std::mt19937 rng(seed);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) x.row(i) = RandomInBall(rng, d, i % 4 == 0);
  return x;
}

// Brute force, in long double: nearest centre by explicit distances (first
// on ties); a record within its cell's radius r > 0 adds 1 and
// u = (x - c) / r to the frame part, any other record 1 and x to the plain
// part.
struct FramedParts {
  Eigen::VectorXd counts, frame_counts;
  Eigen::MatrixXd sums, frame_sums;
};
FramedParts FramedBruteForce(const Eigen::MatrixXd& c, const DataMatrix& x,
                             const CellFrames& f) {
  FramedParts p{Eigen::VectorXd::Zero(c.rows()), Eigen::VectorXd::Zero(c.rows()),
                Eigen::MatrixXd::Zero(c.rows(), c.cols()),
                Eigen::MatrixXd::Zero(c.rows(), c.cols())};
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    Eigen::Index best = 0;
    long double best_d = INFINITY;
    for (Eigen::Index k = 0; k < c.rows(); ++k) {
      long double dist = 0.0L;
      for (Eigen::Index j = 0; j < c.cols(); ++j) {
        const long double diff = static_cast<long double>(x(i, j)) - c(k, j);
        dist += diff * diff;
      }
      if (dist < best_d) {
        best_d = dist;
        best = k;
      }
    }
    const long double r = f.radii(best);
    const bool inside = r > 0.0L && std::sqrt(best_d) <= r;
    (inside ? p.frame_counts : p.counts)(best) += 1.0;
    for (Eigen::Index j = 0; j < c.cols(); ++j) {
      const long double xj = x(i, j);
      if (inside) {
        p.frame_sums(best, j) += static_cast<double>((xj - c(best, j)) / r);
      } else {
        p.sums(best, j) += static_cast<double>(xj);
      }
    }
  }
  return p;
}

TEST(KmeansCellFramesTest, StatisticsAreEachRecordsExplicitTerms) {
  const Eigen::Index d = 3;
  const DataMatrix x = InBall(1000, d, 41);
  const Eigen::MatrixXd c = RandomData(5, d, 42, 0.4);
  // Radii from far below the cells' extent (most records outside) to above
  // it; the last cell has no frame.
  const CellFrames f = Framed((Eigen::VectorXd(5) << 0.2, 0.3, 0.5, 1.0, 0.0).finished());
  const FramedParts want = FramedBruteForce(c, x, f);
  // Both parts are exercised, and the frameless cell has no frame part.
  ASSERT_GT(want.frame_counts.head(4).minCoeff(), 0.0);
  ASSERT_GT(want.counts.head(3).minCoeff(), 0.0);
  ASSERT_EQ(want.frame_counts(4), 0.0);
  ASSERT_GT(want.counts(4), 0.0);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  for (int threads : {1, 2, 3}) {
    for (Eigen::Index rows : {7, 0}) {
      const Engine engine = *Engine::Create({threads, rows});
      const StatusOr<KmeansStatistics> s = ComputeKmeansStatistics(c, source, engine, &f);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->counts, want.counts);
      EXPECT_EQ(s->frame_counts, want.frame_counts);
      EXPECT_LT((s->sums - want.sums).cwiseAbs().maxCoeff(), 1e-12);
      // Per record, the library shrinks to norm 1 - 1e-12: 1e-12 a record.
      EXPECT_LT((s->frame_sums - want.frame_sums).cwiseAbs().maxCoeff(), 1e-9);
    }
  }
  // Without frames, no frame part.
  const KmeansStatistics plain = *ComputeKmeansStatistics(c, source, *Engine::Create({1, 0}));
  EXPECT_EQ(plain.frame_counts.size(), 0);
  EXPECT_EQ(plain.frame_sums.size(), 0);
}

// The framed release [counts; sums; frame counts; frame sums] of `x` with
// `record` as its first row.
Eigen::VectorXd FramedRelease(const Eigen::MatrixXd& c, DataMatrix x, const CellFrames& f,
                              const Eigen::RowVectorXd& record) {
  x.row(0) = record;
  const KmeansStatistics s =
      *ComputeKmeansStatistics(c, *MatrixRowSource::Borrow(x), *Engine::Create({1, 0}), &f);
  Eigen::VectorXd v(2 * s.counts.size() + 2 * s.sums.size());
  v << s.counts, s.sums.reshaped(), s.frame_counts, s.frame_sums.reshaped();
  return v;
}

// The largest change of the framed release over neighbouring pairs (random,
// and antipodal) in d dimensions, by brute force.
double WorstFramedChange(Eigen::Index d, const Eigen::VectorXd& radii) {
  std::mt19937 rng(static_cast<std::uint32_t>(50 + d));
  const Eigen::MatrixXd c = RandomData(4, d, static_cast<std::uint32_t>(60 + d), 0.3);
  const CellFrames f = Framed(radii);
  const DataMatrix x = InBall(20, d, static_cast<std::uint32_t>(70 + d));
  double worst = 0.0;
  for (int t = 0; t < 2000; ++t) {
    const Eigen::RowVectorXd a = RandomInBall(rng, d, t % 2 == 0);
    const Eigen::VectorXd at_a = FramedRelease(c, x, f, a);
    worst = std::max(
        worst, (at_a - FramedRelease(c, x, f, RandomInBall(rng, d, t % 3 == 0))).norm());
    worst = std::max(worst, (at_a - FramedRelease(c, x, f, -a)).norm());
  }
  return worst;
}

TEST(KmeansCellFramesTest, TheJointSensitivityIsStillTwo) {
  const Eigen::VectorXd mixed = (Eigen::VectorXd(4) << 0.01, 0.3, 0.9, 0.0).finished();
  const Eigen::VectorXd small = Eigen::VectorXd::Constant(4, 0.01);
  for (Eigen::Index d : {1, 2, 5}) {
    EXPECT_LE(WorstFramedChange(d, mixed), kKmeansJointL2Sensitivity * (1 + 1e-12)) << d;
    // Attained by antipodal boundary records in different cells, both
    // outside their frames.
    const double worst = WorstFramedChange(d, small);
    EXPECT_LE(worst, kKmeansJointL2Sensitivity * (1 + 1e-12)) << d;
    EXPECT_GT(worst, kKmeansJointL2Sensitivity * (1 - 1e-3)) << d;
  }
}

// A record on its frame's boundary (u of norm 1) against one on the ball's
// boundary outside any frame, in another cell: the change is
// sqrt(1 + 1 + 1 + 1) = 2, the bound, and not more.
TEST(KmeansCellFramesTest, AFrameRecordAgainstAPlainOneAttainsTheBound) {
  const Eigen::MatrixXd c = (Eigen::MatrixXd(2, 2) << 0.5, 0.0, -0.5, 0.0).finished();
  const CellFrames f = Framed((Eigen::VectorXd(2) << 0.25, 0.25).finished());
  const DataMatrix x = InBall(10, 2, 3);
  const Eigen::RowVectorXd on_frame = (Eigen::RowVectorXd(2) << 0.5, 0.25).finished();
  const Eigen::RowVectorXd outside = (Eigen::RowVectorXd(2) << -1.0, 0.0).finished();
  const double change =
      (FramedRelease(c, x, f, on_frame) - FramedRelease(c, x, f, outside)).norm();
  EXPECT_LE(change, kKmeansJointL2Sensitivity * (1 + 1e-12));
  EXPECT_GT(change, kKmeansJointL2Sensitivity * (1 - 1e-9));
}

// The framed pass sums its counts and sums exactly (engine/exact_sum.h):
// bitwise the same for any thread count at a given block size, as the plain
// pass (ExactSumTest.PassesAreBitwiseIndependentOfTheThreadCount). Sums
// added in floating point per thread and merged in thread order would differ
// in their last bits, and neighbours' releases would then differ by more
// than their one block's partials (docs/privacy.md, section 8).
TEST(KmeansCellFramesTest, FramedStatisticsAreBitwiseIndependentOfTheThreadCount) {
  const DataMatrix x = InBall(20011, 3, 43);
  const Eigen::MatrixXd c = RandomData(6, 3, 44, 0.4);
  const CellFrames f = Framed((Eigen::VectorXd(6) << 0.05, 0.1, 0.2, 0.5, 0.9, 0.0).finished());
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  for (Eigen::Index rows : {50, 0}) {
    const StatusOr<KmeansStatistics> one =
        ComputeKmeansStatistics(c, source, *Engine::Create({1, rows}), &f);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    for (int threads : {2, 3, 5}) {
      const StatusOr<KmeansStatistics> s =
          ComputeKmeansStatistics(c, source, *Engine::Create({threads, rows}), &f);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->counts, one->counts) << threads << " " << rows;
      EXPECT_EQ(s->sums, one->sums) << threads << " " << rows;
      EXPECT_EQ(s->frame_counts, one->frame_counts) << threads << " " << rows;
      EXPECT_EQ(s->frame_sums, one->frame_sums) << threads << " " << rows;
    }
  }
}

TEST(KmeansCellFramesTest, ValidateRefusesBadFrames) {
  const Eigen::VectorXd r = Eigen::VectorXd::Constant(3, 0.5);
  EXPECT_TRUE(Framed(r).Validate(3).ok());
  EXPECT_FALSE(Framed(r).Validate(2).ok());
  const double kInf = std::numeric_limits<double>::infinity();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {-1.0, -1e-300, kInf, kNan}) {
    CellFrames f = Framed(r);
    f.radii(1) = bad;
    EXPECT_FALSE(f.Validate(3).ok()) << bad;
  }
  CellFrames f = Framed(r);
  f.radii(0) = 0.0;  // No frame.
  EXPECT_TRUE(f.Validate(3).ok());
  const DataMatrix x = InBall(10, 2, 1);
  f.radii(0) = -1.0;
  EXPECT_FALSE(ComputeKmeansStatistics(RandomData(3, 2, 2), *MatrixRowSource::Borrow(x),
                                       *Engine::Create({1, 0}), &f)
                   .ok());
}

// Validate accepts any finite radius > 0, the smallest included. A frame
// vector (x - c) / r that overflows has an infinite computed squared norm,
// so its record joins the plain part with x; a record exactly at its
// candidate has u = 0 and joins the frame. A computed squared norm of
// exactly 1 is inside (u shrunk to 1 - 1e-12); the next double out is not.
// Every released entry stays finite and each record adds one count and a
// vector of norm at most 1. Expectations worked out by hand.
TEST(KmeansCellFramesTest, TinyRadiiAndTheFramesBoundarySendRecordsToTheRightPart) {
  const double kTiny = std::numeric_limits<double>::denorm_min();
  const Eigen::MatrixXd c =
      (Eigen::MatrixXd(3, 2) << 0.5, 0.0, -0.5, 0.0, 0.0, 0.75).finished();
  const CellFrames f = Framed((Eigen::VectorXd(3) << 1e-300, kTiny, 0.125).finished());
  const double above = std::nextafter(0.875, 1.0);
  DataMatrix x(7, 2);
  x << 0.5, 0.0,     // At c_0: u = 0, frame.
      0.4, 0.1,      // u = 1e299 (-1, 1): squared norm overflows, plain.
      -0.5, 0.0,     // At c_1: u = 0 / denorm_min = 0, frame.
      -0.6, 0.0,     // u = -0.1 / denorm_min = -inf, plain.
      -0.5, 0.25,    // u = 0.25 / denorm_min = inf, plain.
      0.0, 0.875,    // u = (0, 1) exactly: squared norm 1, frame, shrunk.
      0.0, above;    // u = (0, 1 + 2^-50): plain.
  const StatusOr<KmeansStatistics> s =
      ComputeKmeansStatistics(c, *MatrixRowSource::Borrow(x), *Engine::Create({1, 0}), &f);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->counts, Eigen::Vector3d(1.0, 2.0, 1.0));
  EXPECT_EQ(s->frame_counts, Eigen::Vector3d(1.0, 1.0, 1.0));
  EXPECT_TRUE(s->sums.allFinite());
  EXPECT_TRUE(s->frame_sums.allFinite());
  const double q = std::ldexp(1.0, -52);  // The exact sums' quantum.
  EXPECT_NEAR(s->sums(0, 0), 0.4, q);
  EXPECT_NEAR(s->sums(0, 1), 0.1, q);
  EXPECT_NEAR(s->sums(1, 0), -1.1, 2 * q);
  EXPECT_NEAR(s->sums(1, 1), 0.25, q);
  EXPECT_NEAR(s->sums(2, 0), 0.0, q);
  EXPECT_NEAR(s->sums(2, 1), above, q);
  EXPECT_EQ(s->frame_sums.topRows(2), Eigen::MatrixXd::Zero(2, 2));
  EXPECT_EQ(s->frame_sums(2, 0), 0.0);
  EXPECT_NEAR(s->frame_sums(2, 1), 1.0 - 1e-12, q);
  EXPECT_LE(s->frame_sums(2, 1), 1.0 - 1e-12 + q);
}

}  // namespace
}  // namespace dpem

namespace dpem {
namespace {

// Review of the fused k-means pass (83d0a7b): the unframed pass (the
// compiled AccumulateNearest kernel for d <= 16, the matrix product above)
// must release counts and sums that are bitwise independent of the thread
// count, as the framed pass's test above checks for the framed path; the
// released vectors of replace-one neighbours may then differ only by their
// one block's partials.
TEST(KmeansReviewTest, UnframedStatisticsAreBitwiseIndependentOfTheThreadCount) {
  for (const Eigen::Index d : {1, 2, 3, 8, 10, 16, 17}) {
    const DataMatrix x = RandomData(10007, d, static_cast<std::uint32_t>(900 + d));
    const Eigen::MatrixXd c = RandomData(5, d, static_cast<std::uint32_t>(950 + d), 0.5);
    const MatrixRowSource raw = *MatrixRowSource::Borrow(x);
    DataDomain domain;
    domain.data_norm = 2.5;  // Some records clipped.
    const UnitBallRowSource source = *UnitBallRowSource::Create(raw, domain);
    for (const Eigen::Index rows : {13, 0}) {
      const StatusOr<KmeansStatistics> one =
          ComputeKmeansStatistics(c, source, *Engine::Create({1, rows}));
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      EXPECT_EQ(one->counts.sum(), static_cast<double>(x.rows())) << d;
      for (const int threads : {2, 3, 5}) {
        const StatusOr<KmeansStatistics> s =
            ComputeKmeansStatistics(c, source, *Engine::Create({threads, rows}));
        ASSERT_TRUE(s.ok()) << s.status().ToString();
        EXPECT_EQ(s->counts, one->counts) << d << " " << threads << " " << rows;
        EXPECT_EQ(s->sums, one->sums) << d << " " << threads << " " << rows;
      }
    }
  }
}

// Replace one record (read through the unit-ball map, as a private fit
// reads it) by another, chosen to be hard: a far outlier, a record
// equidistant from two centres, a record exactly at a centre. The released
// counts must differ by exactly one record moved (-1 at one centre, +1 at
// one centre, or nothing), and the sums by that record's own mapped row at
// those centres (up to the one block's rounding), for every thread count.
TEST(KmeansReviewTest, ReplaceOneMovesExactlyOneCountAndOneRow) {
  for (const Eigen::Index d : {2, 7, 9, 16, 20}) {
    DataMatrix x = RandomData(1003, d, static_cast<std::uint32_t>(700 + d));
    Eigen::MatrixXd c = RandomData(4, d, static_cast<std::uint32_t>(750 + d), 0.3);
    DataDomain domain;
    domain.data_norm = 3.0;
    std::vector<Eigen::RowVectorXd> replacements;
    replacements.push_back(Eigen::RowVectorXd::Constant(d, 1e300));
    replacements.push_back(0.5 * (c.row(0) + c.row(1)) * 3.0);  // Tie (in mapped units).
    replacements.push_back(c.row(2) * 3.0);                      // At a centre.
    replacements.push_back(Eigen::RowVectorXd::Constant(d, -0.0));
    for (const Eigen::Index i : {Eigen::Index{0}, Eigen::Index{7}, Eigen::Index{8},
                                 Eigen::Index{500}, Eigen::Index{1002}}) {
      for (size_t t = 0; t < replacements.size(); ++t) {
        DataMatrix y = x;
        y.row(i) = replacements[t];
        const MatrixRowSource raw_x = *MatrixRowSource::Borrow(x);
        const MatrixRowSource raw_y = *MatrixRowSource::Borrow(y);
        const UnitBallRowSource ux = *UnitBallRowSource::Create(raw_x, domain);
        const UnitBallRowSource uy = *UnitBallRowSource::Create(raw_y, domain);
        DataMatrix scratch;
        const Eigen::RowVectorXd u = ux.Block(i, 1, scratch).row(0);
        const Eigen::RowVectorXd v = uy.Block(i, 1, scratch).row(0);
        for (const int threads : {1, 3}) {
          const Engine engine = *Engine::Create({threads, 64});
          const KmeansStatistics a = *ComputeKmeansStatistics(c, ux, engine);
          const KmeansStatistics b = *ComputeKmeansStatistics(c, uy, engine);
          SCOPED_TRACE(::testing::Message() << "d=" << d << " i=" << i << " t=" << t
                                            << " threads=" << threads);
          const Eigen::VectorXd dc = b.counts - a.counts;
          Eigen::Index from = -1, to = -1;
          for (Eigen::Index k = 0; k < dc.size(); ++k) {
            if (dc(k) == -1.0) {
              ASSERT_EQ(from, -1);
              from = k;
            } else if (dc(k) == 1.0) {
              ASSERT_EQ(to, -1);
              to = k;
            } else {
              ASSERT_EQ(dc(k), 0.0) << k;
            }
          }
          ASSERT_EQ(from == -1, to == -1);
          Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(c.rows(), d);
          if (from != -1) {
            expected.row(from) -= u;
            expected.row(to) += v;
          }
          // Same centre: the difference is v - u at some centre; check that
          // it is v - u at exactly one.
          const Eigen::MatrixXd ds = b.sums - a.sums;
          if (from == -1) {
            Eigen::Index hit = -1;
            for (Eigen::Index k = 0; k < c.rows(); ++k) {
              if ((ds.row(k) - (v - u)).cwiseAbs().maxCoeff() <= 1e-12 &&
                  (v - u).cwiseAbs().maxCoeff() > 1e-12) {
                hit = k;
              }
            }
            if ((v - u).cwiseAbs().maxCoeff() > 1e-12) ASSERT_NE(hit, -1);
            if (hit != -1) expected.row(hit) += v - u;
          }
          EXPECT_LE((ds - expected).cwiseAbs().maxCoeff(), 1e-12);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dpem
