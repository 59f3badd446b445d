#include "dpem/data/row_source.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dpem/engine/collective.h"
#include "engine/rank_combine.h"

namespace dpem {
namespace {

Status CheckMatrix(const RowBlock& x) {
  if (x.cols() < 1) return InvalidArgumentError("the data have no columns");
  if (x.allFinite()) return OkStatus();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if (!x.row(i).allFinite()) {
      return InvalidArgumentError("record " + std::to_string(i + 1) +
                                  " has a NaN or infinite value");
    }
  }
  return OkStatus();
}

// Rows per block of ResolveFitDomain's scan.
constexpr Eigen::Index kScanBlockRows = 4096;

RowBlock ViewOf(const DataMatrix& x) { return RowBlock(x.data(), x.rows(), x.cols()); }

}  // namespace

StatusOr<MatrixRowSource> MatrixRowSource::Borrow(const DataMatrix& x) {
  return Borrow(x.data(), x.rows(), x.cols());
}

StatusOr<MatrixRowSource> MatrixRowSource::Borrow(const double* data, Eigen::Index rows,
                                                  Eigen::Index cols) {
  if (rows < 0 || cols < 0 || (data == nullptr && rows * cols > 0)) {
    return InvalidArgumentError("the data have a negative shape or no storage");
  }
  const RowBlock view(data, rows, cols);
  DPEM_RETURN_IF_ERROR(CheckMatrix(view));
  return MatrixRowSource(nullptr, view);
}

StatusOr<MatrixRowSource> MatrixRowSource::Own(DataMatrix x) {
  DPEM_RETURN_IF_ERROR(CheckMatrix(ViewOf(x)));
  auto owned = std::make_shared<const DataMatrix>(std::move(x));
  const RowBlock view = ViewOf(*owned);
  return MatrixRowSource(std::move(owned), view);
}

RowBlock MatrixRowSource::Block(Eigen::Index start, Eigen::Index count,
                                DataMatrix& /*scratch*/) const {
  return RowBlock(view_.data() + start * view_.cols(), count, view_.cols());
}

StatusOr<ShardRowSource> ShardRowSource::Create(std::unique_ptr<RowSource> local,
                                               const Collective& collective) {
  // Every rank's (rows, cols), in rank order, on every rank.
  const int ranks = collective.size();
  std::vector<double> shapes(2 * static_cast<size_t>(ranks), 0.0);
  shapes[2 * static_cast<size_t>(collective.rank())] = static_cast<double>(local->rows());
  shapes[2 * static_cast<size_t>(collective.rank()) + 1] = static_cast<double>(local->cols());
  DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(&collective, shapes));
  Eigen::Index rows = 0, begin = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto n = static_cast<Eigen::Index>(shapes[2 * static_cast<size_t>(r)]);
    const auto d = static_cast<Eigen::Index>(shapes[2 * static_cast<size_t>(r) + 1]);
    if (d != static_cast<Eigen::Index>(shapes[1])) {
      return internal::MarkAgreed(InvalidArgumentError(
          "rank " + std::to_string(r) + ": the shard has " + std::to_string(d) +
          " columns, rank 0's has " + std::to_string(static_cast<Eigen::Index>(shapes[1]))));
    }
    if (n == 0) {
      // Public (a shard's size), and checked before any charge: every rank
      // holds at least one record (gradient EM needs it; an empty rank would
      // only idle).
      return internal::MarkAgreed(
          InvalidArgumentError("rank " + std::to_string(r) + ": the shard has no rows"));
    }
    if (r == collective.rank()) begin = rows;
    rows += n;
  }
  const RowRange range{begin, begin + local->rows()};
  return ShardRowSource(std::move(local), collective, rows, range);
}

RowBlock ShardRowSource::Block(Eigen::Index start, Eigen::Index count,
                               DataMatrix& scratch) const {
  return local_->Block(start - range_.begin, count, scratch);
}

StatusOr<DataDomain> ResolveFitDomain(const RowSource& x, DataDomain requested,
                                      bool is_private,
                                      std::vector<std::string>* void_reasons) {
  DataDomain& d = requested;
  if (d.center.size() == 0) d.center = Eigen::VectorXd::Zero(x.cols());
  if (d.center.size() != x.cols()) {
    return InvalidArgumentError("the domain centre has " + std::to_string(d.center.size()) +
                                " coordinates but the data has " + std::to_string(x.cols()) +
                                " columns");
  }
  if ((d.from_data || !is_private) && !std::isfinite(d.data_norm)) {
    // The largest norm of the records this process holds (0 if all are at
    // the centre), then of the whole table; 1 for a table all at the centre.
    double largest = 0.0;
    Status scanned = OkStatus();
    DataMatrix scratch;
    const RowRange local = x.LocalRows();
    for (Eigen::Index start = local.begin; start < local.end && scanned.ok();
         start += kScanBlockRows) {
      const Eigen::Index count = std::min(kScanBlockRows, local.end - start);
      const DataMatrix centred = x.Block(start, count, scratch).rowwise() - d.center.transpose();
      if (centred.isZero(0.0)) continue;  // DataNormFromData would say 1.
      const StatusOr<double> norm = DataNormFromData(centred);
      scanned = norm.status();
      if (norm.ok()) largest = std::max(largest, *norm);
    }
    // Every rank learns of a failure on any (an overflow), rather than
    // waiting for the failed rank at the next step.
    DPEM_RETURN_IF_ERROR(internal::AgreeOnStatus(x.collective(), scanned));
    DPEM_ASSIGN_OR_RETURN(largest, internal::MaxOverRanks(x.collective(), largest));
    d.data_norm = largest > 0.0 ? largest : 1.0;
    d.from_data = true;
  }
  if (d.from_data && is_private && void_reasons != nullptr) {
    void_reasons->push_back(
        "the data norm bound R was computed from the data (--data-norm-from-data), which "
        "reveals the largest record");
  }
  DPEM_RETURN_IF_ERROR(ValidateModelDomain(d));
  return d;
}

}  // namespace dpem
