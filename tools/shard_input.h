// The CLI on the ranks of a distributed fit (dpem-mpi, docs/distributed.md):
// which ranks this process belongs to, and which part of --input is its
// shard.
#ifndef DPEM_TOOLS_SHARD_INPUT_H_
#define DPEM_TOOLS_SHARD_INPUT_H_

#include <functional>
#include <memory>
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

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_SHARD_INPUT_H_
