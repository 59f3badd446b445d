// Throughput of the Generator and the noise samplers. Linked with
// benchmark_main (no main here).
#include <benchmark/benchmark.h>

#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace dpem {
namespace {

// Raw 64-bit words from the ChaCha20 generator.
void BM_GeneratorWords(benchmark::State& state) {
  Generator gen = Generator::FromSeed(1);
  for (auto _ : state) benchmark::DoNotOptimize(gen());
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * 8);
}
BENCHMARK(BM_GeneratorWords);

// One N(0, 1) draw (the second polar variate is discarded).
void BM_StandardNormal(benchmark::State& state) {
  Generator gen = Generator::FromSeed(2);
  for (auto _ : state) benchmark::DoNotOptimize(SampleStandardNormal(gen));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StandardNormal);

// One Laplace(0, 1) draw, unchecked form.
void BM_Laplace(benchmark::State& state) {
  Generator gen = Generator::FromSeed(3);
  for (auto _ : state) benchmark::DoNotOptimize(SampleLaplaceUnchecked(gen, 1.0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Laplace);

// A vector of state.range(0) Gaussian draws (both polar variates used).
void BM_GaussianVector(benchmark::State& state) {
  Generator gen = Generator::FromSeed(4);
  for (auto _ : state) {
    StatusOr<Eigen::VectorXd> v = SampleGaussianVector(gen, state.range(0), 1.0);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GaussianVector)->Arg(10000);

// A state.range(0) x state.range(0) symmetric Gaussian matrix.
void BM_SymmetricGaussianMatrix(benchmark::State& state) {
  Generator gen = Generator::FromSeed(5);
  for (auto _ : state) {
    StatusOr<Eigen::MatrixXd> m =
        SampleSymmetricGaussianMatrix(gen, state.range(0), 1.0);
    benchmark::DoNotOptimize(m);
  }
  const int64_t d = state.range(0);
  state.SetItemsProcessed(state.iterations() * d * (d + 1) / 2);
}
BENCHMARK(BM_SymmetricGaussianMatrix)->Arg(100);

}  // namespace
}  // namespace dpem
