// The processes of a distributed fit and the two collective steps the
// library needs from them (docs/distributed.md).
//
// A distributed fit runs the same program on P processes ("ranks"), each
// holding one shard of the records (ShardRowSource, dpem/data/row_source.h).
// Every pass computes each rank's statistics with the engine; the ranks'
// statistics are then combined in rank order (src/engine/rank_combine.h),
// so a run is reproducible for a given P. Randomness comes from rank 0's
// generator only (Generator::ShareFromRank0): rank 0 draws every release's
// noise once, from its CSPRNG, and every rank then computes the same
// released values. Only rank 0 charges the budget, writes the model file and
// prints. The MPI implementation is MpiCollective (dpem/engine/mpi_collective.h,
// built with DPEM_WITH_MPI); tests use an in-process one.
//
// Every method is a collective step: all ranks call it, in the same order,
// with the same sizes where a size is shared. A rank that does not arrive
// within the implementation's timeout ends the whole run (the MPI
// implementation prints one line naming the rank and exits with status 2):
// a distributed fit cannot go on without a rank, and must not hang.
//
// Thread safety: one thread per Collective at a time (the thread that runs
// the fit).
#ifndef DPEM_ENGINE_COLLECTIVE_H_
#define DPEM_ENGINE_COLLECTIVE_H_

#include <cstddef>
#include <functional>
#include <span>

#include "dpem/status.h"

namespace dpem {

class Collective {
 public:
  virtual ~Collective() = default;

  // This process's rank, in [0, size()).
  virtual int rank() const = 0;
  // The number of ranks P >= 1.
  virtual int size() const = 0;

  // Copies rank 0's `data` into every other rank's `data` (the same size on
  // every rank).
  virtual Status Broadcast(std::span<unsigned char> data) const = 0;

  // Sends every rank's `mine` (sizes may differ) to rank 0, which calls
  // `consume(r, bytes_of_rank_r)` for r = 0, 1, ..., P - 1 in that order
  // (one rank's bytes held at a time); the other ranks call nothing. A
  // non-OK status from `consume` is returned on rank 0 after every rank's
  // bytes have arrived (the collective step completes on all ranks).
  virtual Status GatherToRank0(
      std::span<const unsigned char> mine,
      const std::function<Status(int rank, std::span<const unsigned char> bytes)>& consume)
      const = 0;
};

// True if `c` is null or has a single rank: nothing to combine.
inline bool IsSingleProcess(const Collective* c) { return c == nullptr || c->size() == 1; }

}  // namespace dpem

#endif  // DPEM_ENGINE_COLLECTIVE_H_
