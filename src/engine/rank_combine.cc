// Combining the ranks' results: see engine/rank_combine.h.
#include "engine/rank_combine.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace dpem::internal {
namespace {

std::span<const unsigned char> BytesOf(std::span<const double> v) {
  return {reinterpret_cast<const unsigned char*>(v.data()), v.size_bytes()};
}

std::span<unsigned char> MutableBytesOf(std::span<double> v) {
  return {reinterpret_cast<unsigned char*>(v.data()), v.size_bytes()};
}

// Rank 0's `bytes` (any size) on every rank: the size, then the bytes.
Status BroadcastBytes(const Collective& c, std::vector<unsigned char>& bytes) {
  std::uint64_t size = bytes.size();
  DPEM_RETURN_IF_ERROR(c.Broadcast({reinterpret_cast<unsigned char*>(&size), sizeof(size)}));
  bytes.resize(size);
  return c.Broadcast(bytes);
}

// A status as bytes: its code (4 bytes) and message.
std::vector<unsigned char> StatusBytes(const Status& s) {
  const auto code = static_cast<std::int32_t>(s.code());
  std::vector<unsigned char> bytes(sizeof(code) + s.message().size());
  std::memcpy(bytes.data(), &code, sizeof(code));
  std::memcpy(bytes.data() + sizeof(code), s.message().data(), s.message().size());
  return bytes;
}

Status StatusFromBytes(std::span<const unsigned char> bytes) {
  std::int32_t code = 0;
  if (bytes.size() < sizeof(code)) return InternalError("a rank sent a malformed status");
  std::memcpy(&code, bytes.data(), sizeof(code));
  return Status(static_cast<StatusCode>(code),
                std::string(bytes.begin() + sizeof(code), bytes.end()));
}

thread_local std::string last_agreed_failure;

}  // namespace

bool IsAgreedFailure(const Status& status) {
  return !status.ok() && status.message() == last_agreed_failure;
}

Status MarkAgreed(Status status) {
  if (!status.ok()) last_agreed_failure = status.message();
  return status;
}

Status AgreeOnStatus(const Collective* c, const Status& local) {
  if (IsSingleProcess(c)) return local;
  std::vector<unsigned char> first_failure = StatusBytes(OkStatus());
  bool failed = false;
  DPEM_RETURN_IF_ERROR(c->GatherToRank0(
      StatusBytes(local), [&](int rank, std::span<const unsigned char> bytes) {
        const Status s = StatusFromBytes(bytes);
        if (failed || s.ok()) return OkStatus();
        failed = true;
        first_failure = StatusBytes(
            Status(s.code(), "rank " + std::to_string(rank) + ": " + s.message()));
        return OkStatus();
      }));
  DPEM_RETURN_IF_ERROR(BroadcastBytes(*c, first_failure));
  return MarkAgreed(StatusFromBytes(first_failure));
}

Status StatusOfRank0(const Collective* c, const Status& status) {
  if (IsSingleProcess(c)) return status;
  std::vector<unsigned char> bytes = StatusBytes(status);
  DPEM_RETURN_IF_ERROR(BroadcastBytes(*c, bytes));
  return MarkAgreed(StatusFromBytes(bytes));
}

Status SumInRankOrder(const Collective* c, std::span<double> values) {
  if (IsSingleProcess(c)) return OkStatus();
  std::vector<double> total(values.size(), 0.0);
  const std::vector<double> mine(values.begin(), values.end());
  DPEM_RETURN_IF_ERROR(c->GatherToRank0(
      BytesOf(mine), [&](int rank, std::span<const unsigned char> bytes) {
        if (bytes.size() != values.size_bytes()) {
          return InternalError("rank " + std::to_string(rank) + " sent a sum of another size");
        }
        for (size_t i = 0; i < total.size(); ++i) {
          double v;
          std::memcpy(&v, bytes.data() + i * sizeof(double), sizeof(double));
          total[i] = rank == 0 ? v : total[i] + v;
        }
        return OkStatus();
      }));
  std::copy(total.begin(), total.end(), values.begin());
  return c->Broadcast(MutableBytesOf(values));
}

Status SumInRankOrder(const Collective* c, const std::vector<StatisticArray>& arrays) {
  for (const StatisticArray& a : arrays) {
    DPEM_RETURN_IF_ERROR(SumInRankOrder(c, {a.first, static_cast<size_t>(a.second)}));
  }
  return OkStatus();
}

StatusOr<double> MaxOverRanks(const Collective* c, double value) {
  if (IsSingleProcess(c)) return value;
  double largest = value;
  DPEM_RETURN_IF_ERROR(c->GatherToRank0(
      BytesOf({&value, 1}), [&](int, std::span<const unsigned char> bytes) {
        double v;
        if (bytes.size() != sizeof(v)) return InternalError("a rank sent a malformed maximum");
        std::memcpy(&v, bytes.data(), sizeof(v));
        largest = std::max(largest, v);
        return OkStatus();
      }));
  DPEM_RETURN_IF_ERROR(c->Broadcast(MutableBytesOf({&largest, 1})));
  return largest;
}

Status WriteExactSumOverRanks(const Collective* c, const ExactSum& local,
                              const std::vector<StatisticArray>& arrays) {
  if (IsSingleProcess(c)) {
    local.WriteTo(arrays);
    return OkStatus();
  }
  ExactSum total(local.size());
  DPEM_RETURN_IF_ERROR(c->GatherToRank0(
      local.ToBytes(),
      [&](int, std::span<const unsigned char> bytes) { return total.AddBytes(bytes); }));
  total.WriteTo(arrays);  // Meaningful on rank 0; the others receive it.
  for (const StatisticArray& a : arrays) {
    DPEM_RETURN_IF_ERROR(BroadcastFromRank0(c, {a.first, static_cast<size_t>(a.second)}));
  }
  return OkStatus();
}

StatusOr<DataMatrix> ReadRowsOnEveryRank(const RowSource& x, Eigen::Index begin,
                                         Eigen::Index end) {
  DataMatrix rows(end - begin, x.cols());
  const RowRange local = x.LocalRows();
  const Eigen::Index from = std::max(begin, local.begin), to = std::min(end, local.end);
  DataMatrix scratch;
  if (from < to) rows.middleRows(from - begin, to - from) = x.Block(from, to - from, scratch);
  const Collective* c = x.collective();
  if (IsSingleProcess(c)) return rows;
  // Each row is held by exactly one rank: the sum over ranks of the rows
  // each holds (zeros elsewhere) is the table's rows, exactly.
  std::vector<double> mine(static_cast<size_t>(rows.size()), 0.0);
  if (from < to) {
    Eigen::Map<DataMatrix>(mine.data(), rows.rows(), rows.cols())
        .middleRows(from - begin, to - from) = rows.middleRows(from - begin, to - from);
  }
  DPEM_RETURN_IF_ERROR(SumInRankOrder(c, mine));
  return DataMatrix(Eigen::Map<DataMatrix>(mine.data(), rows.rows(), rows.cols()));
}

StatusOr<Eigen::RowVectorXd> ReadRowOnEveryRank(const RowSource& x, Eigen::Index row) {
  DPEM_ASSIGN_OR_RETURN(const DataMatrix m, ReadRowsOnEveryRank(x, row, row + 1));
  return Eigen::RowVectorXd(m.row(0));
}

Status BroadcastFromRank0(const Collective* c, std::span<double> values) {
  if (IsSingleProcess(c)) return OkStatus();
  return c->Broadcast(MutableBytesOf(values));
}

}  // namespace dpem::internal
