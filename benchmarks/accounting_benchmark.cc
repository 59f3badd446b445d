// Speed of accounting and calibration: what a fit pays before its first
// iteration. Run: build/dpem_benchmarks --benchmark_filter=Account
#include <benchmark/benchmark.h>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/calibration.h"

namespace dpem {
namespace {

// The ledger of a 10-iteration GGG fit with K = 3 (70 Gaussian releases).
PrivacyLedger GggLedger() {
  const ReleasePattern pattern = GggPattern(3).value();
  return PatternLedger(pattern, 10, {30.0, 30.0, 30.0}).value();
}

void BM_ComputeEpsilon(benchmark::State& state) {
  const AccountantKind kind = AllAccountants()[static_cast<std::size_t>(state.range(0))];
  const PrivacyLedger ledger = GggLedger();
  for (auto _ : state) benchmark::DoNotOptimize(ComputeEpsilon(ledger, 1e-5, kind));
  state.SetLabel(std::string(AccountantName(kind)));
}
BENCHMARK(BM_ComputeEpsilon)->DenseRange(0, 7)->Unit(benchmark::kMicrosecond);

void BM_Calibrate(benchmark::State& state) {
  CalibrationOptions o;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  o.iterations = 10;
  o.pattern = state.range(1) ? LlgPattern(3).value() : GggPattern(3).value();
  o.accountant = AllAccountants()[static_cast<std::size_t>(state.range(0))];
  for (auto _ : state) benchmark::DoNotOptimize(Calibrate(o));
  state.SetLabel(std::string(AccountantName(o.accountant)) + " " + o.pattern.name);
}
BENCHMARK(BM_Calibrate)
    ->ArgsProduct({benchmark::CreateDenseRange(0, 7, 1), {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dpem
