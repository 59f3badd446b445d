// How the ranks of a distributed fit combine what each computed from its own
// shard (dpem/engine/collective.h): exact sums exactly, floating-point sums
// in rank order, a row fetched from the rank that holds it, and one status
// for all. Every function is a collective step when the source or collective
// is distributed (all ranks call it in the same order), and does nothing
// beyond the single-process result when it is not: a single-process fit
// never pays for them.
//
// Private to the library. Thread safety: called by the thread that runs the
// fit.
#ifndef DPEM_ENGINE_RANK_COMBINE_H_
#define DPEM_ENGINE_RANK_COMBINE_H_

#include <Eigen/Core>

#include <span>
#include <vector>

#include "dpem/data/row_source.h"
#include "dpem/engine/collective.h"
#include "dpem/status.h"
#include "engine/exact_sum.h"

namespace dpem::internal {

// OK on every rank if `local` is OK on every rank; otherwise, on every rank,
// the status of the lowest-numbered rank that failed, its message prefixed
// with "rank R: " (R counted from 0). `local` itself when `c` is
// single-process.
Status AgreeOnStatus(const Collective* c, const Status& local);

// Whether `status` is a failure that every rank returned alike: one that
// AgreeOnStatus or StatusOfRank0 returned (or was marked with MarkAgreed)
// on this thread. A failure that is not agreed happened on some ranks only:
// the others are waiting at a collective step, and the process must end the
// job (dpem-mpi calls MPI_Abort) instead of leaving them to time out.
bool IsAgreedFailure(const Status& status);
// Marks `status`, a failure every rank computes alike from shared values,
// as agreed; returns it.
Status MarkAgreed(Status status);

// Rank 0's `status` on every rank (e.g. the budget charge that only rank 0
// makes).
Status StatusOfRank0(const Collective* c, const Status& status);

// `values` replaced, on every rank, by the sum over ranks of each rank's
// `values` (the same size on every rank), added in rank order on rank 0 and
// broadcast: the same bits on every rank, and for a given P on every run.
Status SumInRankOrder(const Collective* c, std::span<double> values);

// SumInRankOrder of each array in turn.
Status SumInRankOrder(const Collective* c, const std::vector<StatisticArray>& arrays);

// The largest of the ranks' `value`s, on every rank.
StatusOr<double> MaxOverRanks(const Collective* c, double value);

// The exact sum over ranks of each rank's `local` (same size everywhere),
// written into `arrays` on every rank as ExactSum::WriteTo writes it. For a
// single process, local.WriteTo(arrays).
Status WriteExactSumOverRanks(const Collective* c, const ExactSum& local,
                              const std::vector<StatisticArray>& arrays);

// Rows [begin, end) of the table of which `x` holds LocalRows(), on every
// rank: each rank contributes the rows it holds, in rank order.
StatusOr<DataMatrix> ReadRowsOnEveryRank(const RowSource& x, Eigen::Index begin,
                                         Eigen::Index end);

// Row `row` (a row of the whole table) on every rank.
StatusOr<Eigen::RowVectorXd> ReadRowOnEveryRank(const RowSource& x, Eigen::Index row);

// Broadcasts rank 0's `values` (the same size on every rank).
Status BroadcastFromRank0(const Collective* c, std::span<double> values);

}  // namespace dpem::internal

#endif  // DPEM_ENGINE_RANK_COMBINE_H_
