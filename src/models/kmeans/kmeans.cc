// The non-private core of k-means: see dpem/models/kmeans/kmeans.h.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dpem/models/gmm/gmm.h"  // kEStepChunkRows.
#include "dpem/models/kmeans/kmeans.h"
#include "engine/exact_sum.h"
#include "engine/rank_combine.h"
#include "internal/dimension_dispatch.h"
#include "internal/unit_ball.h"
#include "models/kmeans/kmeans_kernels.h"

namespace dpem {
namespace {

Status CheckShapes(const Eigen::MatrixXd& centres, const DataMatrix& x) {
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (centres.cols() != x.cols()) {
    return InvalidArgumentError("the centres have " + std::to_string(centres.cols()) +
                                " coordinates but the data has " + std::to_string(x.cols()) +
                                " columns");
  }
  if (!x.allFinite()) return InvalidArgumentError("the data holds NaN or infinite values");
  return OkStatus();
}

// A compiled kernel of kmeans_kernels.h (NearestCentres<D>).
using NearestCentresKernel = void (*)(const double*, Eigen::Index, Eigen::Index, const double*,
                                      const double*, Eigen::Index, int*, double*);

// The same for AccumulateNearest<D>.
using AccumulateNearestKernel = double (*)(const double*, Eigen::Index, Eigen::Index,
                                           const double*, const double*, Eigen::Index, double*,
                                           double*);

// Calls fn(first_row, block) for consecutive blocks of kEStepChunkRows rows.
template <typename Fn>
void ForEachChunk(const DataMatrix& x, Fn fn) {
  for (Eigen::Index start = 0; start < x.rows(); start += kEStepChunkRows) {
    const Eigen::Index rows = std::min(kEStepChunkRows, x.rows() - start);
    fn(start, x.middleRows(start, rows));
  }
}

// A block's fold into the exact sums costs about 2.3 ns per released entry
// whatever its rows (engine/exact_sum.h), while a row costs a fraction of a
// nanosecond per entry in the vectorised nearest-centre kernel: with many
// centres (the private start's fine round: 40 K cells, up to 10,000, with
// 2 (d + 1) entries each) blocks of one cache-sized sub-block would spend
// most of the pass folding. So a block holds enough sub-blocks of
// ChooseBlockRows(row_doubles) rows to have at least entries /
// kFoldEntriesPerRow rows, up to kMaxBlockRows (within the
// kMaxBlockRowsOption rows that the releases' computed-sum margin covers).
// Public values only.
constexpr Eigen::Index kFoldEntriesPerRow = 8;

Eigen::Index FoldSubBlocks(Eigen::Index entries, Eigen::Index row_doubles) {
  const Eigen::Index sub_rows = ChooseBlockRows(row_doubles);
  const Eigen::Index rows_wanted = (entries + kFoldEntriesPerRow - 1) / kFoldEntriesPerRow;
  const Eigen::Index wanted = (rows_wanted + sub_rows - 1) / sub_rows;
  return std::clamp<Eigen::Index>(wanted, 1, std::max<Eigen::Index>(kMaxBlockRows / sub_rows, 1));
}

}  // namespace

KmeansStatistics KmeansStatistics::Zero(Eigen::Index components, Eigen::Index dimension,
                                        bool framed) {
  KmeansStatistics s;
  s.counts = Eigen::VectorXd::Zero(components);
  s.sums = Eigen::MatrixXd::Zero(components, dimension);
  if (framed) {
    s.frame_counts = Eigen::VectorXd::Zero(components);
    s.frame_sums = Eigen::MatrixXd::Zero(components, dimension);
  }
  return s;
}

Status KmeansStatistics::Add(const KmeansStatistics& other) {
  if (other.counts.size() != counts.size() || other.sums.rows() != sums.rows() ||
      other.sums.cols() != sums.cols() || other.frame_counts.size() != frame_counts.size() ||
      other.frame_sums.rows() != frame_sums.rows() ||
      other.frame_sums.cols() != frame_sums.cols()) {
    return InvalidArgumentError("k-means statistics of different shapes cannot be added");
  }
  counts += other.counts;
  sums += other.sums;
  frame_counts += other.frame_counts;
  frame_sums += other.frame_sums;
  sse += other.sse;
  n += other.n;
  return OkStatus();
}

StatusOr<NearestCentre> NearestCentre::Create(const Eigen::MatrixXd& centres) {
  if (centres.rows() == 0 || centres.cols() == 0 || !centres.allFinite()) {
    return InvalidArgumentError("centres must be a non-empty finite K x d matrix");
  }
  NearestCentre nc;
  nc.centres_ = centres;
  nc.columns_ = centres.transpose();
  nc.half_squared_norms_ = 0.5 * centres.rowwise().squaredNorm().transpose();
  nc.kernel_ = internal::ForCompiledDimension<internal::kMaxKmeansKernelDimension>(
      centres.cols(), [](auto dimension) -> NearestCentresKernel {
        return &internal::NearestCentres<decltype(dimension)::value>;
      });
  nc.accumulate_kernel_ = internal::ForCompiledDimension<internal::kMaxKmeansKernelDimension>(
      centres.cols(), [](auto dimension) -> AccumulateNearestKernel {
        return &internal::AccumulateNearest<decltype(dimension)::value>;
      });
  return nc;
}

// scratch(i, k) = x_i . mu_k - ||mu_k||^2 / 2 (see Assign).
void NearestCentre::SquaredDistances(const Eigen::Ref<const DataMatrix>& block,
                                     Eigen::MatrixXd& out) const {
  out.noalias() = block * centres_.transpose();
  out.rowwise() -= half_squared_norms_;
  out = ((-2.0 * out).colwise() + block.rowwise().squaredNorm()).cwiseMax(0.0);
}

void NearestCentre::Assign(const Eigen::Ref<const DataMatrix>& block, Eigen::VectorXi& labels,
                           Eigen::VectorXd& distances, Eigen::MatrixXd& scratch) const {
  labels.resize(block.rows());
  distances.resize(block.rows());
  if (kernel_ != nullptr) {
    kernel_(block.data(), block.rows(), block.outerStride(), columns_.data(),
            half_squared_norms_.data(), centres_.rows(), labels.data(), distances.data());
    return;
  }
  // scratch(i, k) = x_i . mu_k - ||mu_k||^2 / 2; the nearest centre maximises
  // it, and ||x_i - mu_k||^2 = ||x_i||^2 - 2 scratch(i, k).
  scratch.noalias() = block * centres_.transpose();
  scratch.rowwise() -= half_squared_norms_;
  for (Eigen::Index i = 0; i < block.rows(); ++i) {
    Eigen::Index best = 0;
    const double top = scratch.row(i).maxCoeff(&best);  // First maximum on ties.
    labels(i) = static_cast<int>(best);
    distances(i) = std::max(0.0, block.row(i).squaredNorm() - 2.0 * top);
  }
}

Status CellFrames::Validate(Eigen::Index components) const {
  if (radii.size() != components || !radii.allFinite() || !(radii.array() >= 0.0).all()) {
    return InvalidArgumentError("cell frames need one finite radius >= 0 per centre");
  }
  return OkStatus();
}

void NearestCentre::Accumulate(const Eigen::Ref<const DataMatrix>& block,
                               KmeansStatistics& stats, Eigen::MatrixXd& scratch,
                               const CellFrames* frames) const {
  if (frames == nullptr && accumulate_kernel_ != nullptr) {
    // The sums accumulated row-major (K x d) in `scratch` (d x K), then added.
    scratch.setZero(block.cols(), centres_.rows());
    stats.sse += accumulate_kernel_(block.data(), block.rows(), block.outerStride(),
                                    columns_.data(), half_squared_norms_.data(), centres_.rows(),
                                    stats.counts.data(), scratch.data());
    stats.sums += scratch.transpose();
    stats.n += block.rows();
    return;
  }
  Eigen::VectorXi labels;
  Eigen::VectorXd distances;
  Assign(block, labels, distances, scratch);
  if (frames == nullptr) {
    for (Eigen::Index i = 0; i < block.rows(); ++i) {
      stats.counts(labels(i)) += 1.0;
      stats.sums.row(labels(i)) += block.row(i);
    }
  } else {
    // Each record's part decided and its terms computed explicitly, the
    // frame vector shrunk by its own computed norm: the vectors the
    // sensitivity argument is about.
    Eigen::RowVectorXd u(block.cols());
    for (Eigen::Index i = 0; i < block.rows(); ++i) {
      const int k = labels(i);
      const double r = frames->radii(k);
      if (r > 0.0) {
        u = (block.row(i) - centres_.row(k)) / r;
        const double squared_norm = u.squaredNorm();
        if (squared_norm <= 1.0) {
          internal::ShrinkIntoUnitBall(u, squared_norm);
          stats.frame_counts(k) += 1.0;
          stats.frame_sums.row(k) += u;
          continue;
        }
      }
      stats.counts(k) += 1.0;
      stats.sums.row(k) += block.row(i);
    }
  }
  stats.sse += distances.sum();
  stats.n += block.rows();
}

StatusOr<KmeansStatistics> ComputeKmeansStatistics(const Eigen::MatrixXd& centres,
                                                   const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(CheckShapes(centres, x));
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(centres));
  KmeansStatistics stats = KmeansStatistics::Zero(centres.rows(), centres.cols());
  Eigen::MatrixXd scratch;
  ForEachChunk(x, [&](Eigen::Index, const Eigen::Ref<const DataMatrix>& block) {
    nc.Accumulate(block, stats, scratch);
  });
  return stats;
}

StatusOr<KmeansStatistics> ComputeKmeansStatistics(const Eigen::MatrixXd& centres,
                                                   const RowSource& x, const Engine& engine,
                                                   const CellFrames* frames) {
  if (x.cols() != centres.cols()) {
    return InvalidArgumentError("the centres have " + std::to_string(centres.cols()) +
                                " coordinates but the data has " + std::to_string(x.cols()) +
                                " columns");
  }
  if (frames != nullptr) DPEM_RETURN_IF_ERROR(frames->Validate(centres.rows()));
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(centres));
  // Counts and sums (the released statistics): each block's partial from
  // zero, the partials summed exactly (engine/exact_sum.h); sse and n in
  // thread order.
  struct Worker {
    KmeansStatistics stats;
    Eigen::MatrixXd scratch;
    internal::ExactSum exact;
  };
  const auto released = [](KmeansStatistics& s) {
    return std::vector<internal::StatisticArray>{{s.counts.data(), s.counts.size()},
                                                 {s.sums.data(), s.sums.size()},
                                                 {s.frame_counts.data(), s.frame_counts.size()},
                                                 {s.frame_sums.data(), s.frame_sums.size()}};
  };
  const Eigen::Index row_doubles = centres.rows() + centres.cols();
  const Eigen::Index entries =
      (frames != nullptr ? 2 : 1) * centres.rows() * (centres.cols() + 1);
  DPEM_ASSIGN_OR_RETURN(
      std::vector<Worker> workers,
      engine.ReduceInSubBlocks<Worker>(
          x, row_doubles,
          [&](Worker& w) {
            w.stats = KmeansStatistics::Zero(centres.rows(), centres.cols(), frames != nullptr);
            w.exact = internal::ExactSum(entries);
          },
          [&](Worker& w, const RowBlock& sub) { nc.Accumulate(sub, w.stats, w.scratch, frames); },
          [&](Worker& w) { w.exact.FoldAndZero(released(w.stats)); },
          FoldSubBlocks(entries, row_doubles)));
  const internal::ExactSum exact = internal::MergeExactSums(workers, &Worker::exact);
  for (size_t t = 1; t < workers.size(); ++t) {
    DPEM_RETURN_IF_ERROR(workers[0].stats.Add(workers[t].stats));  // sse and n.
  }
  KmeansStatistics& total = workers[0].stats;
  const Collective* c = x.collective();
  DPEM_RETURN_IF_ERROR(internal::WriteExactSumOverRanks(c, exact, released(total)));
  DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(c, {&total.sse, 1}));
  total.n = x.rows();
  return std::move(total);
}

StatusOr<double> Nicv(const Eigen::MatrixXd& centres, const DataMatrix& x,
                      const Eigen::VectorXd& shift) {
  DPEM_RETURN_IF_ERROR(CheckShapes(centres, x));
  if (shift.size() != 0 && shift.size() != x.cols()) {
    return InvalidArgumentError("the shift must have one entry per column");
  }
  if (shift.size() == 0) {
    DPEM_ASSIGN_OR_RETURN(const KmeansStatistics s, ComputeKmeansStatistics(centres, x));
    return s.sse / static_cast<double>(x.rows());
  }
  const DataMatrix shifted = x.rowwise() - shift.transpose();
  const Eigen::MatrixXd c = centres.rowwise() - shift.transpose();
  DPEM_ASSIGN_OR_RETURN(const KmeansStatistics s, ComputeKmeansStatistics(c, shifted));
  return s.sse / static_cast<double>(x.rows());
}

StatusOr<Eigen::VectorXi> NearestCentreLabels(const Eigen::MatrixXd& centres,
                                              const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(CheckShapes(centres, x));
  DPEM_ASSIGN_OR_RETURN(const NearestCentre nc, NearestCentre::Create(centres));
  Eigen::VectorXi out(x.rows());
  Eigen::VectorXi labels;
  Eigen::VectorXd distances;
  Eigen::MatrixXd scratch;
  ForEachChunk(x, [&](Eigen::Index start, const Eigen::Ref<const DataMatrix>& block) {
    nc.Assign(block, labels, distances, scratch);
    out.segment(start, block.rows()) = labels;
  });
  return out;
}

}  // namespace dpem
