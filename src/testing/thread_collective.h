// Test support: the ranks of a distributed fit as threads of one process, so
// that the library's distributed path (dpem/engine/collective.h) is tested
// deterministically without MPI. Not part of the library.
//
//   ThreadCollectiveGroup group(3);
//   RunOnRanks(group, [&](const Collective& c) { ... one rank's fit ... });
//
// Thread safety: each ThreadCollective is used by its own rank's thread.
#ifndef DPEM_TESTING_THREAD_COLLECTIVE_H_
#define DPEM_TESTING_THREAD_COLLECTIVE_H_

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "dpem/engine/collective.h"

namespace dpem::test_support {

// The state the ranks of one group share: a slot per rank and a barrier.
class ThreadCollectiveGroup {
 public:
  explicit ThreadCollectiveGroup(int ranks) : slots_(static_cast<size_t>(ranks)) {}
  int size() const { return static_cast<int>(slots_.size()); }

  // Blocks until every rank has arrived; DeadlineExceeded after
  // kTimeout (ranks that took different paths: a test fails, never hangs).
  Status Barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++arrived_ == size()) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return OkStatus();
    }
    if (!cv_.wait_for(lock, kTimeout, [&] { return generation != generation_; })) {
      return InternalError("a rank did not reach the collective step");
    }
    return OkStatus();
  }
  static constexpr std::chrono::seconds kTimeout{20};
  std::vector<unsigned char>& slot(int rank) { return slots_[static_cast<size_t>(rank)]; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
  std::vector<std::vector<unsigned char>> slots_;
};

// One rank of a ThreadCollectiveGroup.
class ThreadCollective final : public Collective {
 public:
  ThreadCollective(ThreadCollectiveGroup& group, int rank) : group_(&group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }

  Status Broadcast(std::span<unsigned char> data) const override {
    if (rank_ == 0) group_->slot(0).assign(data.begin(), data.end());
    DPEM_RETURN_IF_ERROR(group_->Barrier());
    if (rank_ != 0) {
      const std::vector<unsigned char>& root = group_->slot(0);
      if (root.size() != data.size()) return InternalError("broadcast sizes differ");
      std::memcpy(data.data(), root.data(), data.size());
    }
    return group_->Barrier();
  }

  Status GatherToRank0(
      std::span<const unsigned char> mine,
      const std::function<Status(int, std::span<const unsigned char>)>& consume) const override {
    group_->slot(rank_).assign(mine.begin(), mine.end());
    DPEM_RETURN_IF_ERROR(group_->Barrier());
    Status status = OkStatus();
    for (int r = 0; r < size() && rank_ == 0; ++r) {
      const Status s = consume(r, group_->slot(r));
      if (status.ok()) status = s;
    }
    DPEM_RETURN_IF_ERROR(group_->Barrier());
    return status;
  }

 private:
  ThreadCollectiveGroup* group_;
  int rank_;
};

// Runs `rank_main(collective)` on `ranks` threads, one per rank, and waits
// for all of them.
inline void RunOnRanks(int ranks, const std::function<void(const Collective&)>& rank_main) {
  ThreadCollectiveGroup group(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&group, &rank_main, r] {
      const ThreadCollective c(group, r);
      rank_main(c);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_THREAD_COLLECTIVE_H_
