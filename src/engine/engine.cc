#include "dpem/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace dpem {

Status EngineOptions::Validate() const {
  if (threads < 0 || threads > 1024) {
    return InvalidArgumentError("threads must be in [0, 1024] (0 = all), got " +
                                std::to_string(threads));
  }
  if (block_rows < 0 || block_rows > kMaxBlockRowsOption) {
    return InvalidArgumentError("block_rows must be in [0, 2^16] (0 = automatic), got " +
                                std::to_string(block_rows));
  }
  return OkStatus();
}

Eigen::Index ChooseBlockRows(Eigen::Index row_doubles) {
  const Eigen::Index per_row = std::max<Eigen::Index>(row_doubles, 1) * 8;
  return std::clamp(kTargetBlockBytes / per_row, kMinBlockRows, kMaxBlockRows);
}

StatusOr<Engine> Engine::Create(const EngineOptions& options) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  int threads = options.threads;
#ifdef _OPENMP
  if (threads == 0) threads = omp_get_max_threads();
#else
  threads = 1;
#endif
  return Engine(std::max(threads, 1), options.block_rows);
}

Status Engine::ForEachBlock(const RowSource& source, Eigen::Index row_doubles,
                            const BlockFunction& fn, Eigen::Index sub_blocks) const {
  // The blocks of the whole table's grid (rows [b R, (b + 1) R)) that meet
  // the rows this process holds, cut to them: one process holds them all;
  // a rank of a distributed fit, its shard's.
  const RowRange local = source.LocalRows();
  const Eigen::Index rows =
      block_rows_ > 0
          ? block_rows_
          : std::min(kMaxBlockRowsOption,  // The computed-sum margin's bound.
                     std::max<Eigen::Index>(sub_blocks, 1) * ChooseBlockRows(row_doubles));
  const Eigen::Index first_block = local.begin / rows;
  const Eigen::Index blocks =
      local.size() > 0 ? (local.end + rows - 1) / rows - first_block : 0;
  const int threads = static_cast<int>(std::min<Eigen::Index>(threads_, std::max<Eigen::Index>(blocks, 1)));
  std::vector<Status> first_error(static_cast<size_t>(threads));
  std::atomic<bool> failed{false};
  // Always a parallel region, even of one thread: Eigen then runs the
  // kernels' matrix products sequentially inside each worker instead of
  // starting a team of its own per product (which, for the small products of
  // a block, costs far more than it saves).
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    // OpenMP may give fewer threads than asked (OMP_THREAD_LIMIT,
    // OMP_DYNAMIC): partition among those that run, or blocks are lost.
    const int t = omp_get_thread_num();
    const Eigen::Index team = omp_get_num_threads();
#else
    const int t = 0;
    const Eigen::Index team = 1;
#endif
    DataMatrix scratch;
    const Eigen::Index begin = blocks * t / team;
    const Eigen::Index end = blocks * (t + 1) / team;
    for (Eigen::Index b = begin; b < end && !failed.load(std::memory_order_relaxed); ++b) {
      const Eigen::Index start = std::max((first_block + b) * rows, local.begin);
      const Eigen::Index count = std::min((first_block + b + 1) * rows, local.end) - start;
      Status status = fn(t, source.Block(start, count, scratch), start);
      if (!status.ok()) {
        first_error[static_cast<size_t>(t)] = std::move(status);
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }
  for (Status& s : first_error) {
    if (!s.ok()) return s;
  }
  return OkStatus();
}

}  // namespace dpem
