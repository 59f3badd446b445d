// See shard_input.h.
#include "shard_input.h"

#include <cstring>
#include <utility>
#include <vector>

#include "dpem/data/io.h"
#include "engine/rank_combine.h"

namespace dpem::cli {
namespace {

const Collective* g_collective = nullptr;

// Rows [begin, end) of another source, numbered from 0.
class RowRangeSource final : public RowSource {
 public:
  RowRangeSource(std::unique_ptr<RowSource> all, Eigen::Index begin, Eigen::Index end)
      : all_(std::move(all)), begin_(begin), end_(end) {}
  Eigen::Index rows() const override { return end_ - begin_; }
  Eigen::Index cols() const override { return all_->cols(); }
  RowBlock Block(Eigen::Index start, Eigen::Index count, DataMatrix& scratch) const override {
    return all_->Block(begin_ + start, count, scratch);
  }

 private:
  std::unique_ptr<RowSource> all_;
  Eigen::Index begin_, end_;
};

}  // namespace

const Collective* CliCollective() { return g_collective; }
void SetCliCollective(const Collective* collective) { g_collective = collective; }

std::string ShardPath(const std::string& input, int rank) {
  std::string path = input;
  const std::string placeholder = kRankPlaceholder;
  for (size_t at = path.find(placeholder); at != std::string::npos;
       at = path.find(placeholder, at)) {
    path.replace(at, placeholder.size(), std::to_string(rank));
  }
  return path;
}

std::function<StatusOr<std::unique_ptr<RowSource>>()> ShardOpener(const std::string& input,
                                                                  const Collective& c) {
  return [input, &c]() -> StatusOr<std::unique_ptr<RowSource>> {
    if (input.find(kRankPlaceholder) != std::string::npos) {
      return OpenRowSource(ShardPath(input, c.rank()));
    }
    DPEM_ASSIGN_OR_RETURN(std::unique_ptr<RowSource> all, OpenRowSource(input));
    const Eigen::Index n = all->rows(), r = c.rank(), p = c.size();
    const Eigen::Index begin = n * r / p, end = n * (r + 1) / p;
    return std::unique_ptr<RowSource>(std::make_unique<RowRangeSource>(std::move(all), begin, end));
  };
}

bool IsCliRank0() { return g_collective == nullptr || g_collective->rank() == 0; }

Status AgreeAcrossRanks(const Status& local) {
  return internal::AgreeOnStatus(g_collective, local);
}

StatusOr<DataMatrix> ReadRankRows(const std::string& input) {
  StatusOr<DataMatrix> x = InvalidArgumentError("unread");
  if (IsSingleProcess(g_collective)) {
    x = ReadMatrix(g_collective == nullptr ? input : ShardPath(input, 0));
  } else {
    StatusOr<std::unique_ptr<RowSource>> source = ShardOpener(input, *g_collective)();
    if (source.ok()) {
      DataMatrix scratch;
      x = (*source)->rows() > 0 ? DataMatrix((*source)->Block(0, (*source)->rows(), scratch))
                                : DataMatrix(0, (*source)->cols());
    } else {
      x = source.status();
    }
  }
  DPEM_RETURN_IF_ERROR(AgreeAcrossRanks(x.status()));
  return x;
}

StatusOr<std::pair<double, Eigen::Index>> MeanOverRanks(double mean, Eigen::Index n) {
  if (IsSingleProcess(g_collective)) return std::make_pair(mean, n);
  double parts[2] = {n > 0 ? mean * static_cast<double>(n) : 0.0, static_cast<double>(n)};
  DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(g_collective, parts));
  return std::make_pair(parts[0] / parts[1], static_cast<Eigen::Index>(parts[1]));
}

StatusOr<std::optional<DataMatrix>> GatherRowsToRank0(const DataMatrix& local) {
  if (IsSingleProcess(g_collective)) return std::optional<DataMatrix>(local);
  const std::span<const unsigned char> bytes(reinterpret_cast<const unsigned char*>(local.data()),
                                             local.size() * sizeof(double));
  std::vector<double> all;
  DPEM_RETURN_IF_ERROR(g_collective->GatherToRank0(
      bytes, [&](int, std::span<const unsigned char> part) {
        const size_t old = all.size();
        all.resize(old + part.size() / sizeof(double));
        if (!part.empty()) std::memcpy(all.data() + old, part.data(), part.size());
        return OkStatus();
      }));
  if (g_collective->rank() != 0) return std::optional<DataMatrix>();
  const Eigen::Index cols = local.cols();
  return std::optional<DataMatrix>(Eigen::Map<const DataMatrix>(
      all.data(), cols > 0 ? static_cast<Eigen::Index>(all.size()) / cols : 0, cols));
}

}  // namespace dpem::cli
