#include "dpem/data/row_source.h"

#include <string>
#include <utility>

namespace dpem {
namespace {

Status CheckMatrix(const DataMatrix& x) {
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

RowBlock ViewOf(const DataMatrix& x) { return RowBlock(x.data(), x.rows(), x.cols()); }

}  // namespace

StatusOr<MatrixRowSource> MatrixRowSource::Borrow(const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(CheckMatrix(x));
  return MatrixRowSource(nullptr, ViewOf(x));
}

StatusOr<MatrixRowSource> MatrixRowSource::Own(DataMatrix x) {
  DPEM_RETURN_IF_ERROR(CheckMatrix(x));
  auto owned = std::make_shared<const DataMatrix>(std::move(x));
  const RowBlock view = ViewOf(*owned);
  return MatrixRowSource(std::move(owned), view);
}

RowBlock MatrixRowSource::Block(Eigen::Index start, Eigen::Index count,
                                DataMatrix& /*scratch*/) const {
  return RowBlock(view_.data() + start * view_.cols(), count, view_.cols());
}

}  // namespace dpem
