// Read-only tables of records that the fitting engine reads in blocks of
// rows: a matrix in memory, a memory-mapped .npy file (npy.h), or another
// source seen through the domain transform (UnitBallRowSource). A source
// never holds a non-finite value: every constructor checks.
//
// Thread safety: Block is const and may be called concurrently, each caller
// with its own scratch matrix.
#ifndef DPEM_DATA_ROW_SOURCE_H_
#define DPEM_DATA_ROW_SOURCE_H_

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/status.h"

namespace dpem {

class Collective;  // dpem/engine/collective.h

// Rows [begin, end) of a table.
struct RowRange {
  Eigen::Index begin = 0;
  Eigen::Index end = 0;
  Eigen::Index size() const { return end - begin; }
};

// Rows [start, start + count) of a source, as doubles.
using RowBlock = Eigen::Map<const DataMatrix>;

// N records x d features, read in blocks.
class RowSource {
 public:
  virtual ~RowSource() = default;
  // N >= 0 and d >= 1.
  virtual Eigen::Index rows() const = 0;
  virtual Eigen::Index cols() const = 0;
  // Rows [start, start + count), 0 <= start, count >= 1,
  // start + count <= rows(). The block either points into the source's own
  // storage or into `scratch` (resized as needed); it stays valid until
  // `scratch` is next used or the source is destroyed.
  virtual RowBlock Block(Eigen::Index start, Eigen::Index count,
                         DataMatrix& scratch) const = 0;

  // The rows this process holds, the only ones Block may be asked for: all
  // of them, unless the source is one rank's shard of a table spread over
  // the ranks of a distributed fit (ShardRowSource). rows() is always the
  // whole table's N.
  virtual RowRange LocalRows() const { return {0, rows()}; }
  // The ranks that hold the table's shards, or null for a table held by
  // this process alone.
  virtual const Collective* collective() const { return nullptr; }
};

// One rank's shard of a table spread over the ranks of a distributed fit
// (docs/distributed.md): the ranks' shards, in rank order, are the table.
// rows() and cols() are the whole table's; LocalRows() is this rank's range
// and Block reads only within it (rows are numbered in the whole table).
class ShardRowSource final : public RowSource {
 public:
  // A collective step: every rank of `collective` calls it with its own
  // shard. InvalidArgument on every rank if the ranks' shards disagree on
  // the number of columns (naming the first rank that differs from rank 0)
  // or a shard has no rows (naming its rank). `collective` must outlive the
  // source.
  static StatusOr<ShardRowSource> Create(std::unique_ptr<RowSource> local,
                                         const Collective& collective);

  Eigen::Index rows() const override { return rows_; }
  Eigen::Index cols() const override { return local_->cols(); }
  RowBlock Block(Eigen::Index start, Eigen::Index count,
                 DataMatrix& scratch) const override;
  RowRange LocalRows() const override { return range_; }
  const Collective* collective() const override { return collective_; }

 private:
  ShardRowSource(std::unique_ptr<RowSource> local, const Collective& c, Eigen::Index rows,
                 RowRange range)
      : local_(std::move(local)), collective_(&c), rows_(rows), range_(range) {}
  std::unique_ptr<RowSource> local_;
  const Collective* collective_;
  Eigen::Index rows_;
  RowRange range_;
};

// A source over a matrix in memory: borrowed (the matrix must outlive the
// source and not change) or owned.
class MatrixRowSource final : public RowSource {
 public:
  // Borrows `x`; InvalidArgument if it has no columns or a non-finite value.
  static StatusOr<MatrixRowSource> Borrow(const DataMatrix& x);
  // Borrows `rows` x `cols` doubles stored row by row (C order) at `data`,
  // e.g. a NumPy array's buffer, which must outlive the source and not
  // change; nothing is copied. rows >= 0 (`data` may be null when rows is
  // 0); same checks as above.
  static StatusOr<MatrixRowSource> Borrow(const double* data, Eigen::Index rows,
                                          Eigen::Index cols);
  // Takes ownership of `x`; same checks.
  static StatusOr<MatrixRowSource> Own(DataMatrix x);

  Eigen::Index rows() const override { return view_.rows(); }
  Eigen::Index cols() const override { return view_.cols(); }
  RowBlock Block(Eigen::Index start, Eigen::Index count,
                 DataMatrix& scratch) const override;
  // The whole matrix.
  const RowBlock& matrix() const { return view_; }

 private:
  MatrixRowSource(std::shared_ptr<const DataMatrix> owned, RowBlock view)
      : owned_(std::move(owned)), view_(view) {}
  std::shared_ptr<const DataMatrix> owned_;  // Null when borrowed.
  RowBlock view_;
};

// The records of `raw` mapped into the unit ball as MapToUnitBall does
// (subtract the centre, clip to radius R, scale by 1 / R), block by block, so
// no mapped copy of the data is ever held: bit for bit for every record
// safely inside the ball; a record at the sphere is checked by Eigen's norms
// where its row lies, whose rounding depends on the row's address
// alignment (public shapes), and may differ in its last bits, each with norm
// <= 1. Borrows `raw`.
class UnitBallRowSource final : public RowSource {
 public:
  // InvalidArgument if ValidateDomain fails or the centre is neither empty
  // nor of size raw.cols().
  static StatusOr<UnitBallRowSource> Create(const RowSource& raw,
                                            const DataDomain& domain);

  Eigen::Index rows() const override { return raw_->rows(); }
  Eigen::Index cols() const override { return raw_->cols(); }
  RowBlock Block(Eigen::Index start, Eigen::Index count,
                 DataMatrix& scratch) const override;
  RowRange LocalRows() const override { return raw_->LocalRows(); }
  const Collective* collective() const override { return raw_->collective(); }

 private:
  UnitBallRowSource(const RowSource& raw, DataDomain domain)
      : raw_(&raw), domain_(std::move(domain)) {}
  const RowSource* raw_;
  DataDomain domain_;
};

// The domain a fit of `x` uses, shared by every model's fit. `requested`
// with an empty centre means the origin; the centre must have x.cols()
// entries. If R is not set (NaN) and either requested.from_data is set or the
// fit is not private, R becomes the largest ||x_i - c|| (1 for all-zero
// data) and from_data is set. A PRIVATE fit whose R comes from the data
// reveals its largest record: the reason is then appended to `void_reasons`
// (non-null), and the caller must mark its guarantee void. InvalidArgument
// for a mismatched centre or a domain that fails ValidateModelDomain (an R
// from the data included).
StatusOr<DataDomain> ResolveFitDomain(const RowSource& x, DataDomain requested,
                                      bool is_private, std::vector<std::string>* void_reasons);

}  // namespace dpem

#endif  // DPEM_DATA_ROW_SOURCE_H_
