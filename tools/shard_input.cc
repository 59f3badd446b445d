// See shard_input.h.
#include "shard_input.h"

#include <utility>

#include "dpem/data/io.h"

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

}  // namespace dpem::cli
