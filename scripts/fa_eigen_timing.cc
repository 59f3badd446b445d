// Timing of the pieces of a private factor-analysis fit at d = 4096 (the
// Olivetti size): the top-10 eigenpairs by LAPACK and by Lanczos, the
// smallest eigenvalue by Lanczos (the shift repair), the full decomposition +
// eigenvalue floor (the floor repair), and 100 EM iterations. A scratch
// benchmark for docs/factor_analysis.md, not part of the build
// (benchmarks/fa_fit_benchmark.cc has the same pieces as Google Benchmark
// cases). The matrix is synthetic (rank-400 signal plus symmetric noise of
// the size a private release adds), from Eigen's Random(): fine for timing,
// never for privacy. Build and run from the repository root (-march=native as
// build-fa was configured, DPEM_NATIVE_ARCH=ON: Eigen's alignment must agree):
//   g++ -O2 -march=native -fopenmp -std=c++20 -Iinclude -Isrc -I/usr/include/eigen3 \
//       scripts/fa_eigen_timing.cc build-fa/libdpem.a -llapacke -llapack -lsodium \
//       -o /tmp/fa_eigen_timing && /tmp/fa_eigen_timing
#include <chrono>
#include <iostream>
#include "internal/eigen_solver.h"
#include "models/factor_analysis/factor_analysis_internal.h"
using namespace dpem;
using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
int main(){
  const int d=4096;
  Eigen::MatrixXd a = Eigen::MatrixXd::Random(d, 400) / 64.0;
  Eigen::MatrixXd z = Eigen::MatrixXd::Random(d, d) * 0.01;
  Eigen::MatrixXd s = a*a.transpose()/400.0 + (z + z.transpose()) / 2;
  FaEmOptions o; o.factors=10; o.iterations=100;
  auto t = Clock::now();
  auto top = internal::TopEigenpairs(s, 10);
  std::cout << "TopEigenpairs (dsyevr, top 10): " << Since(t) << " s\n"; t = Clock::now();
  auto krylov = internal::LeadingEigenpairs(s, 10, o);
  std::cout << "LeadingEigenpairs (Lanczos, top 10): " << Since(t) << " s\n"; t = Clock::now();
  auto lowest = internal::LowestEigenvalue(s, o);
  std::cout << "LowestEigenvalue (Lanczos): " << Since(t) << " s\n"; t = Clock::now();
  internal::Eigenpairs eig;
  auto floored = internal::FloorEigenvalues(s, 1e-6, &eig);
  std::cout << "FloorEigenvalues (dsyevd + rank update): " << Since(t) << " s\n"; t = Clock::now();
  auto p = internal::FitFaWithEigenpairs(*floored, eig, o);
  std::cout << "100 EM iterations: " << Since(t) << " s " << p.ok() << krylov.ok() << lowest.ok()
            << top.ok() << "\n";
}
