// Speed of factor analysis's fit step on a d x d second moment (what follows
// the one pass over the data and the release): the top L eigenpairs by
// LAPACK and by Lanczos, the product with the d x d matrix that each EM
// iteration makes, and the whole post-processing (eigenvalue repair, start,
// J EM iterations). The matrices are synthetic and Olivetti-sized: a rank-400
// second moment with a decaying spectrum ("plain") and the same plus the
// symmetric noise of a release at epsilon = 1 ("noisy": entries of standard
// deviation 0.0124, half the eigenvalues negative). Linked with
// benchmark_main.
//
//   build-fa/dpem_benchmarks --benchmark_filter='Fa|SymmetricProduct'
#include <benchmark/benchmark.h>

#include <limits>
#include <random>

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "internal/randomized_eigen_solver.h"
#include "internal/symmetric_product.h"
#include "models/factor_analysis/factor_analysis_internal.h"

namespace dpem {
namespace {

// A (d x d, exactly symmetric): X^T X / 400 for 400 Gaussian rows whose
// i-th coordinate has scale 1 / (1 + i) / sqrt(d), plus N(0, noise^2) on
// each entry of the upper triangle, mirrored.
Eigen::MatrixXd SecondMoment(Eigen::Index d, double noise) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd x(400, d);
  for (Eigen::Index j = 0; j < d; ++j) {
    const double scale = 1.0 / (1.0 + static_cast<double>(j)) / std::sqrt(static_cast<double>(d));
    for (Eigen::Index i = 0; i < 400; ++i) x(i, j) = scale * n(rng);
  }
  Eigen::MatrixXd s = x.transpose() * x / 400.0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) s(i, j) += noise * n(rng);
  }
  s.triangularView<Eigen::StrictlyLower>() = s.transpose();
  return s;
}

constexpr double kReleaseNoise = 0.0124;  // z sqrt(2) / N at epsilon = 1 on Olivetti.

FaEmOptions Em(int iterations, bool krylov) {
  FaEmOptions o;
  o.factors = 10;
  o.iterations = iterations;
  o.tolerance = 0.0;  // All J iterations: the benchmarks time a fixed amount of work.
  o.threads = 0;
  o.dense_max_dimension = krylov ? 0 : std::numeric_limits<Eigen::Index>::max();
  return o;
}

// Args: d, noisy (0/1), Lanczos (0: LAPACK's dsyevr).
void BM_FaLeadingEigenpairs(benchmark::State& state) {
  const Eigen::MatrixXd s = SecondMoment(state.range(0), state.range(1) ? kReleaseNoise : 0.0);
  const FaEmOptions o = Em(1, state.range(2) != 0);
  for (auto _ : state) {
    StatusOr<internal::Eigenpairs> top = internal::LeadingEigenpairs(s, 10, o);
    if (!top.ok()) state.SkipWithError(top.status().ToString().c_str());
    benchmark::DoNotOptimize(top);
  }
}
BENCHMARK(BM_FaLeadingEigenpairs)
    ->ArgsProduct({{64, 128, 256, 512, 1024, 4096}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// The approximate top 10 of a private fit's start (randomized subspace
// iteration, FaFitOptions::approximate_start). Args: d, noisy (0/1).
void BM_FaRandomizedTopEigenpairs(benchmark::State& state) {
  const Eigen::MatrixXd s = SecondMoment(state.range(0), state.range(1) ? kReleaseNoise : 0.0);
  for (auto _ : state) {
    StatusOr<internal::Eigenpairs> top = internal::RandomizedTopEigenpairs(s, 10, 0);
    if (!top.ok()) state.SkipWithError(top.status().ToString().c_str());
    benchmark::DoNotOptimize(top);
  }
}
BENCHMARK(BM_FaRandomizedTopEigenpairs)
    ->ArgsProduct({{512, 1024, 4096}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// Args: d, k: one product with the lower triangle (EM's is k = L = 10,
// Lanczos's k = 1).
void BM_SymmetricProduct(benchmark::State& state) {
  const Eigen::MatrixXd s = SecondMoment(state.range(0), kReleaseNoise);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(state.range(0), state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(internal::SymmetricProduct(s, x, 0));
}
BENCHMARK(BM_SymmetricProduct)
    ->ArgsProduct({{1024, 4096}, {1, 10}})
    ->Unit(benchmark::kMillisecond);

// The fit step of a private fit: repair, start, J = 100 EM iterations.
// Args: d, noisy, repair (0: kShift, 1: kFloor), Lanczos.
void BM_FaFitStep(benchmark::State& state) {
  const Eigen::MatrixXd released =
      SecondMoment(state.range(0), state.range(1) ? kReleaseNoise : 0.0);
  const FaEigenvalueRepair repair =
      state.range(2) ? FaEigenvalueRepair::kFloor : FaEigenvalueRepair::kShift;
  const FaEmOptions o = Em(100, state.range(3) != 0);
  for (auto _ : state) {
    Eigen::MatrixXd s = released;
    StatusOr<internal::RepairedSpectrum> r = internal::RepairEigenvalues(s, 1e-6, repair, o);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    StatusOr<FaParameters> fit = internal::FitFaWithEigenpairs(s, r->top, o);
    if (!fit.ok()) state.SkipWithError(fit.status().ToString().c_str());
    benchmark::DoNotOptimize(fit);
  }
}
BENCHMARK(BM_FaFitStep)
    ->Args({4096, 1, 0, 1})
    ->Args({4096, 1, 1, 1})
    ->Args({4096, 0, 0, 1})
    ->Args({4096, 1, 0, 0})
    ->Args({512, 1, 0, 1})
    ->Args({512, 1, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace dpem
