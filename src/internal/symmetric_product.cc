// Products with the lower triangle of a symmetric matrix: see
// internal/symmetric_product.h.
#include "internal/symmetric_product.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace dpem::internal {
namespace {

// Columns per panel: each panel of the triangle below its diagonal block is
// one d x w block, used by two matrix products while it is in cache. 8 for
// vectors and 16 for a few columns were the fastest at d = 4096 (2 to 4 ms
// for one vector, about 10 ms for ten, on one core).
Eigen::Index PanelWidth(Eigen::Index k) { return k == 1 ? 8 : 16; }

// Column boundaries 0 = b_0 <= ... <= b_parts = d cutting the lower
// triangle into `parts` ranges of about equal area (column j holds d - j
// entries), each boundary a multiple of `panel`.
std::vector<Eigen::Index> PartBoundaries(Eigen::Index d, int parts, Eigen::Index panel) {
  std::vector<Eigen::Index> bounds{0};
  const double total = 0.5 * static_cast<double>(d) * static_cast<double>(d + 1);
  double area = 0.0;
  Eigen::Index j = 0;
  for (int p = 1; p < parts; ++p) {
    while (j < d && area < total * p / parts) area += static_cast<double>(d - j++);
    const Eigen::Index aligned = std::min(d, (j + panel - 1) / panel * panel);
    bounds.push_back(std::max(bounds.back(), aligned));
  }
  bounds.push_back(d);
  return bounds;
}

// y += S(:, [begin, end)) contributions: for each panel J of columns, the
// diagonal block's (symmetric) product and, with B the block below it,
// y_J += B^T x_below and y_below += B x_J.
void AddPanels(const Eigen::MatrixXd& s, const Eigen::Ref<const Eigen::MatrixXd>& x,
               Eigen::Index begin, Eigen::Index end, Eigen::Index panel, Eigen::MatrixXd& y) {
  const Eigen::Index d = s.rows();
  for (Eigen::Index j = begin; j < end; j += panel) {
    const Eigen::Index w = std::min(panel, end - j);
    const Eigen::Index below = d - j - w;
    y.middleRows(j, w).noalias() +=
        s.block(j, j, w, w).selfadjointView<Eigen::Lower>() * x.middleRows(j, w);
    if (below == 0) continue;
    const auto b = s.block(j + w, j, below, w);
    y.middleRows(j, w).noalias() += b.transpose() * x.middleRows(j + w, below);
    y.middleRows(j + w, below).noalias() += b * x.middleRows(j, w);
  }
}

// Calls run(p) once for each p in [0, parts), on the calling thread and up
// to threads - 1 others that take the next undone p in turn. std::thread,
// not OpenMP: a product lasts milliseconds, and OpenMP's spinning at the end
// of each parallel region made Lanczos 2 to 3 times slower than one thread on
// a machine loaded by other processes; a joined std::thread sleeps instead.
// If no thread can be started, the calling thread does every part.
void RunParts(int parts, int threads, const std::function<void(int)>& run) {
  std::atomic<int> next{0};
  const auto work = [&] {
    for (int p = next++; p < parts; p = next++) run(p);
  };
  std::vector<std::thread> helpers;
  try {
    for (int t = 1; t < std::min(threads, parts); ++t) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // Fewer helpers than asked: the parts are shared among those started.
  }
  work();
  for (std::thread& h : helpers) h.join();
}

int DefaultThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#endif
}

}  // namespace

Eigen::MatrixXd SymmetricProduct(const Eigen::MatrixXd& lower,
                                 const Eigen::Ref<const Eigen::MatrixXd>& x, int threads) {
  assert(lower.rows() == lower.cols() && lower.rows() == x.rows());
  const Eigen::Index d = lower.rows();
  const Eigen::Index k = x.cols();
  const Eigen::Index panel = PanelWidth(k);
  if (d <= kSymmetricProductSerialDimension || k == 0) {
    Eigen::MatrixXd y = Eigen::MatrixXd::Zero(d, k);
    AddPanels(lower, x, 0, d, panel, y);
    return y;
  }
  const std::vector<Eigen::Index> bounds = PartBoundaries(d, kSymmetricProductParts, panel);
  std::vector<Eigen::MatrixXd> partial(kSymmetricProductParts);
  RunParts(kSymmetricProductParts, threads > 0 ? threads : DefaultThreads(), [&](int p) {
    // Part p writes rows >= bounds[p] only.
    partial[p] = Eigen::MatrixXd::Zero(d, k);
    AddPanels(lower, x, bounds[p], bounds[p + 1], panel, partial[p]);
  });
  Eigen::MatrixXd y = std::move(partial[0]);
  for (int p = 1; p < kSymmetricProductParts; ++p) {
    const Eigen::Index from = bounds[p];
    y.bottomRows(d - from) += partial[p].bottomRows(d - from);
  }
  return y;
}

}  // namespace dpem::internal
