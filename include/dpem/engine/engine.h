// The data-parallel engine shared by every model that iterates over the
// data: it splits a RowSource into blocks of rows and hands them to worker
// threads (OpenMP), each of which owns its accumulator. Callers merge the
// per-thread accumulators in thread order, so a result depends on the thread
// count but never on scheduling: the same data, thread count and seed give
// the same bits. Sufficient statistics of separate shards simply add, so a
// distributed backend runs the same block kernels per rank and sums.
//
//   DPEM_ASSIGN_OR_RETURN(std::vector<Stats> parts, engine.Reduce<Stats>(
//       source, row_doubles, [&](Stats& s) { s = Stats::Zero(...); },
//       [&](Stats& s, const RowBlock& block, Eigen::Index first_row) {
//         Accumulate(block, s);
//         return OkStatus();
//       }));
//   for (size_t t = 1; t < parts.size(); ++t) parts[0].Add(parts[t]);
//
// Thread safety: an Engine is immutable; ForEachBlock may be called from
// one thread at a time per callback state.
#ifndef DPEM_ENGINE_ENGINE_H_
#define DPEM_ENGINE_ENGINE_H_

#include <Eigen/Core>
#include <algorithm>
#include <functional>
#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/status.h"

namespace dpem {

// Options of the engine.
struct EngineOptions {
  // Worker threads; 0 = all the processor's hardware threads (OpenMP's
  // default, or OMP_NUM_THREADS). Must be in [0, 1024].
  int threads = 0;
  // Rows per block; 0 = chosen from the work per row (ChooseBlockRows) so a
  // block's temporaries fit in a core's cache. Otherwise in
  // [1, kMaxBlockRowsOption]: a private release charges the floating-point
  // error of one block of at most that many rows (kComputedSumMargin).
  Eigen::Index block_rows = 0;

  // InvalidArgument naming the field out of range.
  Status Validate() const;
};

// The largest block_rows an Engine accepts: 2^16.
inline constexpr Eigen::Index kMaxBlockRowsOption = Eigen::Index{1} << 16;

// Rows per block such that a block of `row_doubles` doubles of temporaries
// per row is about kTargetBlockBytes: in [kMinBlockRows, kMaxBlockRows].
inline constexpr Eigen::Index kTargetBlockBytes = 320 * 1024;
inline constexpr Eigen::Index kMinBlockRows = 64;
inline constexpr Eigen::Index kMaxBlockRows = 4096;
Eigen::Index ChooseBlockRows(Eigen::Index row_doubles);

// The sub-blocks per block of the exactly summed E-step passes (the GMM
// plain and framed passes): a block's fold costs about 2.3 ns per summed
// entry whatever its rows (K F entries for the plain pass: 51,510 at
// (d, K) = (100, 10), about a third of a 64-row block's work), so their
// blocks hold this many cache-sized sub-blocks.
inline constexpr Eigen::Index kFoldSubBlocks = 8;

// Calls fn(sub_block) on consecutive sub-blocks of ChooseBlockRows(row_doubles)
// rows of `block` (the last may be shorter), in order.
template <typename Fn>
Status ForEachSubBlock(const RowBlock& block, Eigen::Index row_doubles, Fn fn) {
  const Eigen::Index step = ChooseBlockRows(row_doubles);
  for (Eigen::Index s = 0; s < block.rows(); s += step) {
    const Eigen::Index rows = std::min(step, block.rows() - s);
    DPEM_RETURN_IF_ERROR(fn(RowBlock(block.data() + s * block.cols(), rows, block.cols())));
  }
  return OkStatus();
}

// What a worker does with one block: `thread` in [0, threads()), the block,
// and the index of its first row in the source. A non-OK status stops the
// pass (the other threads stop before their next block) and is returned.
using BlockFunction =
    std::function<Status(int thread, const RowBlock& block, Eigen::Index first_row)>;

// Runs block functions over sources.
class Engine {
 public:
  // Validates the options and resolves threads = 0.
  static StatusOr<Engine> Create(const EngineOptions& options);

  // The number of worker threads (>= 1).
  int threads() const { return threads_; }

  // Calls `fn` on every block of `source`: the blocks are numbered in row
  // order and thread t takes a contiguous range of them (static partition),
  // in order. Only the rows this process holds are visited
  // (RowSource::LocalRows: a rank of a distributed fit visits its shard, in
  // the whole table's grid of blocks, `first_row` numbered in the table);
  // combining the ranks' results is the caller's (src/engine/rank_combine.h).
  // When block_rows is 0, a block has `sub_blocks` (>= 1) times
  // ChooseBlockRows(row_doubles) rows: a pass that ends each block with a
  // cost per block (folding its partial into exact sums) asks for several
  // cache-sized sub-blocks per block and works through them with
  // ForEachSubBlock. Returns the error of the lowest-numbered thread that
  // failed.
  Status ForEachBlock(const RowSource& source, Eigen::Index row_doubles,
                      const BlockFunction& fn, Eigen::Index sub_blocks = 1) const;

  // ForEachBlock with one accumulator per worker thread: `init` prepares
  // each (default-constructed first), `fn` runs on every block with the
  // accumulator of the thread that takes it, and the accumulators come back
  // in thread order, for the caller to merge in that fixed order (so the
  // result depends on the thread count, never on scheduling). Returns
  // ForEachBlock's error, if any.
  template <typename Accumulator>
  StatusOr<std::vector<Accumulator>> Reduce(
      const RowSource& source, Eigen::Index row_doubles,
      const std::function<void(Accumulator&)>& init,
      const std::function<Status(Accumulator&, const RowBlock&, Eigen::Index)>& fn,
      Eigen::Index sub_blocks = 1) const {
    std::vector<Accumulator> parts(static_cast<size_t>(threads_));
    for (Accumulator& part : parts) init(part);
    DPEM_RETURN_IF_ERROR(ForEachBlock(
        source, row_doubles,
        [&](int thread, const RowBlock& block, Eigen::Index first_row) {
          return fn(parts[static_cast<size_t>(thread)], block, first_row);
        },
        sub_blocks));
    return parts;
  }

  // Reduce for a pass that folds each block's partial into exact sums (a
  // cost per block): blocks of `sub_blocks` (>= 1; default kFoldSubBlocks)
  // cache-sized sub-blocks of ChooseBlockRows(row_doubles) rows; `work`
  // runs on each sub-block in order, then `end_of_block` once per block
  // (the fold).
  template <typename Accumulator>
  StatusOr<std::vector<Accumulator>> ReduceInSubBlocks(
      const RowSource& source, Eigen::Index row_doubles,
      const std::function<void(Accumulator&)>& init,
      const std::function<void(Accumulator&, const RowBlock&)>& work,
      const std::function<void(Accumulator&)>& end_of_block,
      Eigen::Index sub_blocks = kFoldSubBlocks) const;

 private:
  Engine(int threads, Eigen::Index block_rows) : threads_(threads), block_rows_(block_rows) {}
  int threads_ = 1;
  Eigen::Index block_rows_ = 0;
};

template <typename Accumulator>
StatusOr<std::vector<Accumulator>> Engine::ReduceInSubBlocks(
    const RowSource& source, Eigen::Index row_doubles,
    const std::function<void(Accumulator&)>& init,
    const std::function<void(Accumulator&, const RowBlock&)>& work,
    const std::function<void(Accumulator&)>& end_of_block, Eigen::Index sub_blocks) const {
  return Reduce<Accumulator>(
      source, row_doubles, init,
      [&](Accumulator& a, const RowBlock& block, Eigen::Index) {
        DPEM_RETURN_IF_ERROR(ForEachSubBlock(block, row_doubles, [&](const RowBlock& sub) {
          work(a, sub);
          return OkStatus();
        }));
        end_of_block(a);
        return OkStatus();
      },
      sub_blocks);
}

}  // namespace dpem

#endif  // DPEM_ENGINE_ENGINE_H_
