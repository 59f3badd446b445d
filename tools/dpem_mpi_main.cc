// dpem-mpi: the dpem CLI on the ranks of an MPI job, for fits of data spread
// over many machines (docs/distributed.md):
//
//   mpirun -np 4 dpem-mpi fit gmm --input 'part-{rank}.npy' ...
//
// Every rank runs the same command on its shard of --input; rank 0 alone
// charges the budget, writes the model file and prints (the other ranks'
// std::cout and std::cerr are discarded); every rank exits with the same
// status. The wait of each collective step is DPEM_COLLECTIVE_TIMEOUT
// seconds (default kDefaultCollectiveTimeout). DPEM_MPI_TRAFFIC=1 prints each
// rank's collective steps and bytes at the end (docs/distributed.md).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "cli_common.h"
#include "dpem/engine/mpi_collective.h"
#include "engine/rank_combine.h"
#include "shard_input.h"

namespace {

// DPEM_COLLECTIVE_TIMEOUT, or the default; nullopt if it is not a whole
// number of seconds in [1, 10^6].
std::optional<std::chrono::seconds> TimeoutFromEnvironment() {
  const char* text = std::getenv("DPEM_COLLECTIVE_TIMEOUT");
  if (text == nullptr || *text == '\0') return dpem::kDefaultCollectiveTimeout;
  char* end = nullptr;
  const long seconds = std::strtol(text, &end, 10);
  if (*end != '\0' || seconds < 1 || seconds > 1000000) return std::nullopt;
  return std::chrono::seconds(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dpem::cli;
  const std::optional<std::chrono::seconds> timeout = TimeoutFromEnvironment();
  if (!timeout) {
    PrintError("", "DPEM_COLLECTIVE_TIMEOUT must be a whole number of seconds in [1, 1000000]");
    return kUsageErrorExitCode;
  }
  dpem::StatusOr<dpem::MpiCollective> mpi = dpem::MpiCollective::Create(*timeout);
  if (!mpi.ok()) {
    PrintError("", mpi.status().message());
    return kUsageErrorExitCode;
  }
  // The other ranks' output goes to a buffer that is never printed (and
  // the streams get their own buffers back before it is destroyed).
  std::ostringstream discarded;
  std::streambuf* const out = std::cout.rdbuf();
  std::streambuf* const err = std::cerr.rdbuf();
  if (mpi->rank() != 0) {
    std::cout.rdbuf(discarded.rdbuf());
    std::cerr.rdbuf(discarded.rdbuf());
  }
  // The commands that read data: fit, and score, predict and transform
  // (each rank reads its shard; rank 0 prints or writes for all).
  const std::string command = argc > 1 ? argv[1] : "";
  const bool distributed = command == "fit" || command == "score" || command == "predict" ||
                           command == "transform";
  if (mpi->size() > 1 && !command.empty() && command[0] != '-' && !distributed) {
    PrintError("", "dpem-mpi runs fit, score, predict and transform; run '" + command +
                       "' with dpem");
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
    return kUsageErrorExitCode;
  }
  SetCliCollective(&*mpi);
  CliFailure failure;
  const int code = RunCli(argc, argv, &failure);
  SetCliCollective(nullptr);
  if (!failure.status.ok() && mpi->size() > 1 &&
      !dpem::internal::IsAgreedFailure(failure.status)) {
    // This rank failed on its own: the others wait for it at a collective
    // step. Say why (rank 0 has printed it already), then end the job.
    if (mpi->rank() != 0) {
      std::fprintf(stderr, "%s (rank %d)\n", failure.line.c_str(), mpi->rank());
    }
    std::fflush(stderr);
    mpi->Abort(kUsageErrorExitCode);
  }
  if (const char* stats = std::getenv("DPEM_MPI_TRAFFIC"); stats != nullptr && *stats == '1') {
    // Every rank's line, on the C stream (the C++ streams of ranks > 0 are
    // discarded).
    const dpem::MpiCollective::Traffic t = mpi->traffic();
    std::fprintf(stderr, "dpem-mpi traffic: rank %d: %lld collective steps, %lld bytes sent, %lld bytes received\n",
                 mpi->rank(), t.steps, t.bytes_sent, t.bytes_received);
  }
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  return code;
}
