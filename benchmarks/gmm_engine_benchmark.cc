// Speed of the fitting engine: one fused E-step pass (responsibilities and
// sufficient statistics) over N x d data for K components, one M-step, and
// the machine's dgemm rate, which bounds what any E-step can reach
// (docs/performance.md counts the flops). Linked with benchmark_main.
//
//   build/dpem_benchmarks --benchmark_filter='EStep|Dgemm'
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dpem/data/domain.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/data/generators.h"
#include "dpem/models/gmm/gmm.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"
#include "engine/exact_sum.h"
#include "models/gmm/gmm_frames.h"
#include "models/gmm/gmm_kernels.h"

namespace dpem {
namespace {

// N x d standard normal data drawn with a fixed seed.
DataMatrix NormalData(Eigen::Index n, Eigen::Index d) {
  Generator gen = Generator::FromSeed(7);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = SampleStandardNormal(gen);
  return x;
}

// K components with spread means and identity-like covariances.
GmmParameters Mixture(Eigen::Index k, Eigen::Index d, CovarianceType type) {
  GmmParameters p;
  p.type = type;
  p.weights = Eigen::VectorXd::Constant(k, 1.0 / static_cast<double>(k));
  p.means = Eigen::MatrixXd::Zero(k, d);
  for (Eigen::Index c = 0; c < k; ++c) p.means(c, c % d) = 0.5 * static_cast<double>(c);
  for (Eigen::Index c = 0; c < k; ++c) {
    Eigen::MatrixXd cov = Eigen::MatrixXd::Identity(d, d);
    if (type == CovarianceType::kFull && d > 1) cov(0, 1) = cov(1, 0) = 0.3;
    p.covariances.push_back(cov);
  }
  return p;
}

// Times `pass` (returning a StatusOr) once per benchmark iteration, skips
// with its error if it fails, and counts `items` per call.
template <typename Pass>
void TimePass(benchmark::State& state, Eigen::Index items, Pass pass) {
  for (auto _ : state) {
    auto result = pass();
    if (!result.ok()) state.SkipWithError(result.status().message().c_str());
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * items);
}

// The engine of a pass with `threads` workers (a benchmark's argument).
Engine EngineWithThreads(std::int64_t threads) {
  return *Engine::Create({static_cast<int>(threads), 0});
}

// Reports a benchmark of threaded code in milliseconds of wall-clock time
// (for Apply).
void WallMilliseconds(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

// The data shapes of the pass benchmarks that take (N, d, K, threads):
// (N, d, K) = (1e6, 10, 10) and (1e5, 100, 10) on 2 threads, in wall-clock
// milliseconds (for Apply).
void StandardPasses(benchmark::internal::Benchmark* b) {
  b->Args({1000000, 10, 10, 2})->Args({100000, 100, 10, 2});
  WallMilliseconds(b);
}

// K well-separated clusters (scripts/bench_vs_sklearn.py's data: centres
// with N(0, 16) coordinates, unit normal noise) and the mixture that
// generated them, equal weights and identity covariances: the fitted model
// of a converged plain fit.
struct SettledCase {
  DataMatrix x;
  GmmParameters params;
};
SettledCase Clusters(Eigen::Index n, Eigen::Index d, Eigen::Index k) {
  Generator gen = Generator::FromSeed(11);
  SettledCase c;
  c.params.type = CovarianceType::kFull;
  c.params.weights = Eigen::VectorXd::Constant(k, 1.0 / static_cast<double>(k));
  c.params.means.resize(k, d);
  for (Eigen::Index i = 0; i < c.params.means.size(); ++i) {
    c.params.means.data()[i] = 4.0 * SampleStandardNormal(gen);
  }
  c.params.covariances.assign(static_cast<size_t>(k), Eigen::MatrixXd::Identity(d, d));
  c.x.resize(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    c.x.row(i) = c.params.means.row(i % k);
    for (Eigen::Index j = 0; j < d; ++j) c.x(i, j) += SampleStandardNormal(gen);
  }
  return c;
}

// Arguments: N, d, K, threads, and 1 for the plain fits' pass (the
// settled-record shortcut, gmm_settled_rows.h) or 0 for the dense pass that
// releases use.
void BM_EStepSettled(benchmark::State& state) {
  const SettledCase c = Clusters(state.range(0), state.range(1), state.range(2));
  const MatrixRowSource source = *MatrixRowSource::Borrow(c.x);
  const Engine engine = EngineWithThreads(state.range(3));
  if (state.range(4) == 1) {
    TimePass(state, c.x.rows(),
             [&] { return internal::ComputePlainFitStatistics(c.params, source, engine); });
  } else {
    TimePass(state, c.x.rows(), [&] { return ComputeStatistics(c.params, source, engine); });
  }
}
BENCHMARK(BM_EStepSettled)
    ->Args({100000, 100, 10, 2, 1})
    ->Args({100000, 100, 10, 2, 0})
    ->Args({1000000, 10, 10, 2, 1})
    ->Args({1000000, 10, 10, 2, 0})
    ->Apply(WallMilliseconds);

// Arguments: N, d, K, covariance type (0 full, 1 diag, 2 spherical), threads.
void BM_EStep(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = state.range(1), k = state.range(2);
  const auto type = static_cast<CovarianceType>(state.range(3));
  const DataMatrix x = NormalData(n, d);
  const GmmParameters params = Mixture(k, d, type);
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  const Engine engine = EngineWithThreads(state.range(4));
  TimePass(state, n, [&] { return ComputeStatistics(params, source, engine); });
  // Flops of the full kernel: 4 K F per row, F = d(d+1)/2 + d + 1 quadratic
  // features (two products of 2 K F: log densities and feature sums).
  if (type == CovarianceType::kFull) {
    const double features = static_cast<double>(d * (d + 1) / 2 + d + 1);
    state.counters["GFLOP/s"] = benchmark::Counter(
        4.0 * static_cast<double>(k * n) * features * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  }
}
BENCHMARK(BM_EStep)
    ->Args({1000000, 10, 10, 0, 2})
    ->Args({1000000, 10, 10, 0, 1})
    ->Args({100000, 100, 10, 0, 2})
    ->Args({1000000, 2, 5, 2, 2})
    ->Args({1000000, 10, 10, 1, 2})
    ->Apply(WallMilliseconds);

// The M-step from exact statistics of the E-step above (K, d).
void BM_MStep(benchmark::State& state) {
  const Eigen::Index d = state.range(0), k = state.range(1);
  const GmmParameters params = Mixture(k, d, CovarianceType::kFull);
  const DataMatrix x = NormalData(10000, d);
  const GmmStatistics stats = *ComputeStatistics(params, x);
  for (auto _ : state) {
    benchmark::DoNotOptimize(MStep(stats, params, static_cast<double>(stats.n), {}));
  }
}
BENCHMARK(BM_MStep)->Args({10, 10})->Args({100, 10})->Unit(benchmark::kMicrosecond);

// The private E-step in component frames (models/gmm/gmm_frames.h): data and
// mixture scaled by 0.05 into the unit ball, so that every component gets a
// local frame (rho^2 lambda_max < 1). Arguments: N, d, K, threads.
void BM_FramedEStep(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = state.range(1), k = state.range(2);
  const DataMatrix x = 0.05 * NormalData(n, d);
  GmmParameters params = Mixture(k, d, CovarianceType::kFull);
  params.means *= 0.05;
  for (Eigen::MatrixXd& c : params.covariances) c *= 0.0025;
  const std::vector<internal::ComponentFrame> frames =
      *internal::ChooseFrames(params, internal::DefaultFrameRadius(d));
  for (const internal::ComponentFrame& f : frames) {
    if (!f.local) state.SkipWithError("expected local frames");
  }
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  const Engine engine = EngineWithThreads(state.range(3));
  TimePass(state, n,
           [&] { return internal::ComputeFramedStatistics(params, frames, source, engine); });
}
BENCHMARK(BM_FramedEStep)->Apply(StandardPasses)->Args({1000000, 2, 5, 2});

// One k-means pass (ComputeKmeansStatistics: nearest centres, counts and
// sums summed exactly, sse), as each Lloyd iteration and each private
// iteration of `fit kmeans` makes it. Arguments: N, d, K, threads.
void BM_KmeansPass(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = state.range(1), k = state.range(2);
  const DataMatrix x = NormalData(n, d);
  const Eigen::MatrixXd centres = Mixture(k, d, CovarianceType::kSpherical).means;
  const MatrixRowSource source = *MatrixRowSource::Borrow(x);
  const Engine engine = EngineWithThreads(state.range(3));
  TimePass(state, n, [&] { return ComputeKmeansStatistics(centres, source, engine); });
}
BENCHMARK(BM_KmeansPass)->Apply(StandardPasses);

// Gradient EM on the 2-component GMM of wang-dp-gradient-em: a fit of T = 5
// iterations (each one pass over the data: per-record gradients or EM maps,
// then the mean: the robust private mean, the clipped one, or the plain
// one), reported per iteration. Arguments: N, d, method (0 dp, 1 clipped
// baseline, 2 plain), threads.
void BM_GradientEmIteration(benchmark::State& state) {
  const GradientEmMethod methods[] = {GradientEmMethod::kDp, GradientEmMethod::kClipped,
                                      GradientEmMethod::kNonPrivate};
  GeneratorOptions g;
  g.model = GradientEmModel::kGmm;
  g.n = state.range(0);
  g.d = state.range(1);
  g.snr = 3.0;
  g.sigma = 1.0;
  Generator data_gen = Generator::FromSeed(3);
  const GradientEmData data = GenerateGradientEmData(g, data_gen)->data;
  GradientEmOptions o;
  o.method = methods[state.range(2)];
  o.iterations = 5;
  o.sigma = 1.0;
  o.engine.threads = static_cast<int>(state.range(3));
  if (o.IsPrivate()) {
    o.epsilon = 1.0;
    o.delta = 1e-5;
  }
  if (o.method == GradientEmMethod::kDp) o.tau = 10.0;
  if (o.method == GradientEmMethod::kClipped) o.clip = 5.0;
  TimePass(state, o.iterations * g.n, [&] {
    Generator gen = Generator::FromSeed(1);
    return FitGradientEm(data, o, gen);
  });
}
BENCHMARK(BM_GradientEmIteration)
    ->Args({1000000, 10, 0, 2})
    ->Args({1000000, 10, 1, 2})
    ->Args({1000000, 10, 2, 2})
    ->Apply(WallMilliseconds);

// The exact sums of released statistics (engine/exact_sum.h): folding one
// block partial of m entries into an ExactSum (round to the quantum, add as
// a 128-bit integer, zero the partial). Argument: m (660: the feature sums of
// (d, K) = (10, 10), full; 1110: the framed pass's statistics). A pass costs
// this times its number of blocks (N / rows per block).
void BM_ExactSumFold(benchmark::State& state) {
  const Eigen::Index m = state.range(0);
  internal::ExactSum sum(m);
  Eigen::VectorXd partial(m);
  Generator gen = Generator::FromSeed(1);
  const Eigen::VectorXd values = 300.0 * *SampleGaussianVector(gen, m, 1.0);
  for (auto _ : state) {
    partial = values;
    sum.FoldAndZero({{partial.data(), m}});
    benchmark::DoNotOptimize(partial.data());
  }
  state.SetItemsProcessed(state.iterations() * m);
}
BENCHMARK(BM_ExactSumFold)->Arg(660)->Arg(1110)->Unit(benchmark::kMicrosecond);

// The rate at which the engine's threads read N x d data from memory (a
// block sum, no other work: the floor of any pass), and the same through the
// unit-ball map that every fit's pass reads its blocks through
// (UnitBallRowSource: centre, clip, scale). Arguments: N, d, threads, and
// 1 to read through the map. GB/s of raw data.
void BM_EngineRead(benchmark::State& state) {
  const Eigen::Index n = state.range(0), d = state.range(1);
  const DataMatrix x = NormalData(n, d);
  const MatrixRowSource raw = *MatrixRowSource::Borrow(x);
  DataDomain domain;
  domain.data_norm = 10.0 * std::sqrt(static_cast<double>(d));  // Most rows inside.
  const UnitBallRowSource unit = *UnitBallRowSource::Create(raw, domain);
  const RowSource& source = state.range(3) != 0 ? static_cast<const RowSource&>(unit) : raw;
  const Engine engine = EngineWithThreads(state.range(2));
  std::vector<double> sums(static_cast<size_t>(engine.threads()), 0.0);
  for (auto _ : state) {
    const Status status = engine.ForEachBlock(
        source, d, [&](int thread, const RowBlock& block, Eigen::Index) {
          sums[static_cast<size_t>(thread)] += block.sum();
          return OkStatus();
        });
    if (!status.ok()) state.SkipWithError(status.message().c_str());
    benchmark::DoNotOptimize(sums.data());
  }
  state.counters["GB/s"] = benchmark::Counter(
      8.0 * static_cast<double>(n * d) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_EngineRead)
    ->Args({1000000, 10, 2, 0})
    ->Args({1000000, 10, 2, 1})
    ->Apply(WallMilliseconds);

// The machine's dgemm rate on square n x n products (OpenBLAS, all cores).
void BM_Dgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Eigen::MatrixXd a = NormalData(n, n), b = NormalData(n, n);
  Eigen::MatrixXd c(n, n);
  for (auto _ : state) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(),
                n, 0.0, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * std::pow(static_cast<double>(n), 3) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Dgemm)->Arg(2000)->Apply(WallMilliseconds);

}  // namespace
}  // namespace dpem
