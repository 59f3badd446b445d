// The ranks of a distributed fit as the processes of an MPI job (Open MPI):
// the Collective that `dpem-mpi` (tools/, built with DPEM_WITH_MPI) gives
// to the pipeline (docs/distributed.md). Part of the dpem::dpem_mpi library,
// built only with DPEM_WITH_MPI.
//
// Every collective step waits at most `timeout` for the other ranks. A rank
// that does not arrive in time (it died, hung, or took another path) ends
// the whole job: one line on stderr naming this rank and the step, then
// MPI_Abort with exit status 2, so no rank is left waiting. A rank killed
// outright is noticed by mpirun itself, which ends the others.
//
// Thread safety: one thread at a time (MPI is initialised with
// MPI_THREAD_FUNNELED: the thread that runs the fit makes every MPI call).
#ifndef DPEM_ENGINE_MPI_COLLECTIVE_H_
#define DPEM_ENGINE_MPI_COLLECTIVE_H_

#include <chrono>

#include "dpem/engine/collective.h"

namespace dpem {

// The default wait of a collective step: long enough for the slowest rank's
// pass over its shard.
inline constexpr std::chrono::seconds kDefaultCollectiveTimeout{600};

class MpiCollective final : public Collective {
 public:
  // Initialises MPI (MPI_Init_thread, funneled) if it is not yet, over
  // MPI_COMM_WORLD. Internal if MPI cannot be initialised.
  static StatusOr<MpiCollective> Create(std::chrono::seconds timeout);
  // Finalises MPI if Create initialised it (the last MpiCollective alive).
  ~MpiCollective() override;
  MpiCollective(MpiCollective&& other) noexcept;
  MpiCollective& operator=(MpiCollective&&) = delete;
  MpiCollective(const MpiCollective&) = delete;

  // What this rank has exchanged so far: collective steps taken, and bytes
  // of payload sent and received (docs/distributed.md measures them).
  struct Traffic {
    long long steps = 0;
    long long bytes_sent = 0;
    long long bytes_received = 0;
  };
  Traffic traffic() const { return traffic_; }

  // Ends every rank of the job with exit status `code` (MPI_Abort): for a
  // rank that failed on its own while the others wait for it.
  [[noreturn]] void Abort(int code) const;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Broadcast(std::span<unsigned char> data) const override;
  Status GatherToRank0(
      std::span<const unsigned char> mine,
      const std::function<Status(int rank, std::span<const unsigned char> bytes)>& consume)
      const override;

 private:
  MpiCollective(int rank, int size, std::chrono::seconds timeout, bool owns)
      : rank_(rank), size_(size), timeout_(timeout), owns_mpi_(owns) {}
  int rank_ = 0;
  int size_ = 1;
  std::chrono::seconds timeout_;
  bool owns_mpi_ = false;
  mutable Traffic traffic_;
};

}  // namespace dpem

#endif  // DPEM_ENGINE_MPI_COLLECTIVE_H_
