// MPI behind dpem::Collective: see dpem/engine/mpi_collective.h.
#include "dpem/engine/mpi_collective.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace dpem {
namespace {

// Waits for `request` to complete, polling (a rank waiting on a slower one
// sleeps between polls rather than spinning on a core another rank needs);
// after `timeout`, ends the job (see the header).
void WaitOrAbort(MPI_Request& request, std::chrono::seconds timeout, int rank,
                 const char* step) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int done = 0;
  for (long polls = 0;; ++polls) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (polls > 2000) std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (polls % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
  }
  std::fprintf(stderr,
               "dpem: rank %d: no answer from the other ranks within %lld s at a collective step "
               "(%s): a rank died, hung or failed; ending the run\n",
               rank, static_cast<long long>(timeout.count()), step);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

constexpr int kGatherTag = 7301;
// MPI counts are ints: larger payloads go in pieces of this many bytes (in
// order; messages between two ranks with one tag arrive in order).
constexpr size_t kMaxMessageBytes = size_t{1} << 30;

}  // namespace

StatusOr<MpiCollective> MpiCollective::Create(std::chrono::seconds timeout) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  bool owns = false;
  if (!initialised) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      return InternalError("MPI could not be initialised");
    }
    owns = true;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return MpiCollective(rank, size, timeout, owns);
}

MpiCollective::MpiCollective(MpiCollective&& other) noexcept
    : rank_(other.rank_), size_(other.size_), timeout_(other.timeout_),
      owns_mpi_(other.owns_mpi_) {
  other.owns_mpi_ = false;
}

MpiCollective::~MpiCollective() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owns_mpi_ && !finalised) MPI_Finalize();
}

void MpiCollective::Abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; if it did, end this rank.
}

Status MpiCollective::Broadcast(std::span<unsigned char> data) const {
  MPI_Request request;
  for (size_t done = 0; done < data.size() || done == 0; done += kMaxMessageBytes) {
    const int count = static_cast<int>(std::min(kMaxMessageBytes, data.size() - done));
    MPI_Ibcast(data.data() + done, count, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    WaitOrAbort(request, timeout_, rank_, "broadcast");
    if (data.empty()) break;
  }
  ++traffic_.steps;
  (rank_ == 0 ? traffic_.bytes_sent : traffic_.bytes_received) +=
      static_cast<long long>(data.size()) * (rank_ == 0 ? size_ - 1 : 1);
  return OkStatus();
}

Status MpiCollective::GatherToRank0(
    std::span<const unsigned char> mine,
    const std::function<Status(int, std::span<const unsigned char>)>& consume) const {
  // The sizes first, then each rank's bytes in rank order (rank 0 holds
  // one rank's at a time).
  std::uint64_t size = mine.size();
  std::vector<std::uint64_t> sizes(static_cast<size_t>(rank_ == 0 ? size_ : 0));
  MPI_Request request;
  MPI_Igather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD,
              &request);
  WaitOrAbort(request, timeout_, rank_, "gather sizes");
  ++traffic_.steps;
  if (rank_ != 0) {
    for (size_t done = 0; done < mine.size(); done += kMaxMessageBytes) {
      const int count = static_cast<int>(std::min(kMaxMessageBytes, mine.size() - done));
      MPI_Isend(mine.data() + done, count, MPI_BYTE, 0, kGatherTag, MPI_COMM_WORLD, &request);
      WaitOrAbort(request, timeout_, rank_, "gather");
    }
    traffic_.bytes_sent += static_cast<long long>(mine.size() + sizeof(size));
    return OkStatus();
  }
  Status status = consume(0, mine);
  std::vector<unsigned char> bytes;
  for (int r = 1; r < size_; ++r) {
    bytes.resize(sizes[static_cast<size_t>(r)]);
    for (size_t done = 0; done < bytes.size(); done += kMaxMessageBytes) {
      const int count = static_cast<int>(std::min(kMaxMessageBytes, bytes.size() - done));
      MPI_Irecv(bytes.data() + done, count, MPI_BYTE, r, kGatherTag, MPI_COMM_WORLD, &request);
      WaitOrAbort(request, timeout_, rank_, "gather");
    }
    traffic_.bytes_received += static_cast<long long>(bytes.size() + sizeof(size));
    const Status s = consume(r, bytes);
    if (status.ok()) status = s;
  }
  return status;
}

}  // namespace dpem
