// A parallel loop over independent items, for the library's passes that are
// not over a row source (those use Engine::ForEachBlock). Private to the
// library.
#ifndef DPEM_INTERNAL_PARALLEL_FOR_H_
#define DPEM_INTERNAL_PARALLEL_FOR_H_

#include <Eigen/Core>

#include <algorithm>

namespace dpem::internal {

// Calls fn(i) for every i in [0, n), on up to `threads` threads (at least
// one, at most n), one index at a time as threads free up (dynamic
// scheduling, for items of uneven cost). The items must write disjoint data
// and their results must not depend on which thread runs them or in which
// order, so that the outcome is the same for any thread count.
template <typename Fn>
void ParallelFor(Eigen::Index n, int threads, Fn fn) {
  const int team = static_cast<int>(std::clamp<Eigen::Index>(n, 1, std::max(threads, 1)));
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (Eigen::Index i = 0; i < n; ++i) fn(i);
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_PARALLEL_FOR_H_
