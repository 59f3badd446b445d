// Cost of the floating-point-safe noise: the exact discrete samplers
// (random/discrete_samplers.h) and a whole release in discrete vs continuous
// mode (mechanisms/additive_noise.h). Compare with BM_StandardNormal and
// BM_Laplace of samplers_benchmark.cc. Linked with benchmark_main.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>

#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/random/discrete_samplers.h"
#include "dpem/random/generator.h"

namespace dpem {
namespace {

// One Bernoulli(exp(-1/2)) draw.
void BM_BernoulliExpNeg(benchmark::State& state) {
  Generator gen = Generator::FromSeed(11);
  for (auto _ : state) benchmark::DoNotOptimize(*SampleBernoulliExpNeg(gen, 1, 2));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BernoulliExpNeg);

// One discrete Gaussian (range(1) = 0) or discrete Laplace (1) draw with
// scale state.range(0) (2^20 is the mechanisms' grid scale).
void BM_DiscreteNoise(benchmark::State& state) {
  Generator gen = Generator::FromSeed(12);
  const auto scale = static_cast<std::uint64_t>(state.range(0));
  const bool gaussian = state.range(1) == 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(gaussian ? *SampleDiscreteGaussian(gen, scale)
                                      : *SampleDiscreteLaplace(gen, scale));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DiscreteNoise)->Args({1, 0})->Args({1 << 20, 0})->Args({1, 1})->Args({1 << 20, 1});

// ReleaseVector of 10000 coordinates; range(0): 0 continuous, 1 discrete;
// range(1): 0 Gaussian, 1 Laplace.
void BM_ReleaseVector(benchmark::State& state) {
  Generator gen = Generator::FromSeed(14);
  NoiseSpec spec{state.range(1) == 0 ? MechanismKind::kGaussian : MechanismKind::kLaplace, 1.0,
                 2.0, "benchmark"};
  spec.sampling = state.range(0) == 0 ? NoiseSampling::kContinuous : NoiseSampling::kDiscrete;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(10000);
  for (auto _ : state) {
    PrivacyLedger ledger;
    benchmark::DoNotOptimize(ReleaseVector(v, spec, gen, ledger));
  }
  state.SetItemsProcessed(state.iterations() * v.size());
}
BENCHMARK(BM_ReleaseVector)->Args({0, 0})->Args({1, 0})->Args({0, 1})->Args({1, 1});

// ReleaseSymmetric (discrete Analyze Gauss) of a d x d symmetric matrix on
// range(1) threads: d = 4096 is the private factor-analysis release of the
// Olivetti faces (8,390,656 coordinates). The copy of the input made before
// each release is not timed.
void BM_ReleaseSymmetric(benchmark::State& state) {
  const Eigen::Index d = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  Generator gen = Generator::FromSeed(15);
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(d, d).cwiseAbs() * 200.0;
  const Eigen::MatrixXd input = a + a.transpose();  // Exactly symmetric, like T.
  const NoiseSpec spec{MechanismKind::kGaussian, std::sqrt(2.0), 4.5, "benchmark"};
  Eigen::MatrixXd value;
  for (auto _ : state) {
    state.PauseTiming();
    value = input;
    state.ResumeTiming();
    PrivacyLedger ledger;
    const Status s = ReleaseSymmetric(value, spec, gen, ledger, threads);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(value.data());
  }
  state.SetItemsProcessed(state.iterations() * d * (d + 1) / 2);
}
BENCHMARK(BM_ReleaseSymmetric)
    ->Args({512, 1})
    ->Args({4096, 1})
    ->Args({4096, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace dpem
