// The CLI on the ranks of a distributed fit (dpem-mpi, docs/distributed.md):
// which ranks this process belongs to, and which part of --input is its
// shard.
#ifndef DPEM_TOOLS_SHARD_INPUT_H_
#define DPEM_TOOLS_SHARD_INPUT_H_

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>

#include "dpem/data/row_source.h"
#include "dpem/engine/collective.h"
#include "dpem/status.h"

namespace dpem::cli {

// The ranks this process is one of: null for `dpem`; set once by
// dpem-mpi's main before any command runs.
const Collective* CliCollective();
void SetCliCollective(const Collective* collective);

// The placeholder in --input that a rank replaces by its rank.
inline constexpr const char* kRankPlaceholder = "{rank}";

// `input` with every kRankPlaceholder replaced by `rank`.
std::string ShardPath(const std::string& input, int rank);

// Opens this rank's shard of `input` (.csv or .npy): the file
// ShardPath(input, rank) if `input` holds kRankPlaceholder (one file per
// rank); otherwise rows [N r / P, N (r + 1) / P) of the one file that every
// rank reads (a .npy is memory-mapped, so a rank touches only its rows).
std::function<StatusOr<std::unique_ptr<RowSource>>()> ShardOpener(const std::string& input,
                                                                  const Collective& c);

// True unless this process is a rank other than 0 of dpem-mpi: the process
// that writes files and prints.
bool IsCliRank0();

// The records of `input` this process holds, as a matrix: the whole file,
// or under dpem-mpi this rank's shard (ShardOpener), with every rank's
// error agreed (AgreeAcrossRanks).
StatusOr<DataMatrix> ReadRankRows(const std::string& input);

// internal::AgreeOnStatus over the CLI's ranks: OK on every rank only if OK
// on every rank; otherwise the first failing rank's status, naming it.
Status AgreeAcrossRanks(const Status& local);

// The mean over every rank's records of a per-record quantity of which this
// rank's `n` records have mean `mean` (ignored if n = 0), and their count:
// on every rank.
StatusOr<std::pair<double, Eigen::Index>> MeanOverRanks(double mean, Eigen::Index n);

// Every rank's rows of a per-record output (the same number of columns), in
// rank order, on rank 0; nullopt on the other ranks.
StatusOr<std::optional<DataMatrix>> GatherRowsToRank0(const DataMatrix& local);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_SHARD_INPUT_H_
