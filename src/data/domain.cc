#include "dpem/data/domain.h"

#include "dpem/data/row_source.h"
#include "internal/dimension_dispatch.h"
#include "internal/simd_chunks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dpem {
namespace {

// The sum of squares of `row` accumulated in long double (on x86-64, 64-bit
// significands: much closer to the exact value than a double sum).
template <typename Row>
long double ExtendedSquaredNorm(const Row& row) {
  long double sum = 0.0L;
  for (Eigen::Index j = 0; j < row.size(); ++j) {
    const long double v = row(j);
    sum += v * v;
  }
  return sum;
}

// True if the row's norm exceeds 1 by any of the ways of computing it.
template <typename Row>
bool AboveUnit(const Row& row) {
  return row.squaredNorm() > 1.0 || row.stableNorm() > 1.0 ||
         ExtendedSquaredNorm(row) > 1.0L;
}

// Shrinks `row` by factors 1 - 2^(k-53), k = 0, 1, ..., until its norm is at
// most 1. Terminates: at k = 53 the factor is 0.
template <typename Row>
void ShrinkIntoUnitBall(Row row) {
  if (!AboveUnit(row)) return;
  const auto original = row.eval();
  for (int k = 0; k <= 53 && AboveUnit(row); ++k) {
    row = original * (1.0 - std::ldexp(1.0, k - 53));
  }
}

// The L2 norm of a finite row as max_abs * relative, computed without
// overflow or underflow: max_abs is the largest magnitude of an entry and
// relative = ||row / max_abs||_2 lies in [1, sqrt(d)] (both 0 for a zero row).
struct ScaledNorm {
  double max_abs = 0.0;
  double relative = 0.0;
};

template <typename Row>
ScaledNorm NormOf(const Row& row) {
  const double max_abs = row.cwiseAbs().maxCoeff();
  if (max_abs == 0.0) return {};
  return {max_abs, (row / max_abs).norm()};
}

// Writes v / R, or v / ||v|| if ||v|| > R, into `out`, with norm <= 1.
// Returns 1 if it clipped, 0 otherwise.
template <typename In, typename Out>
int ClipAndScale(const In& v, double r, Out out) {
  const ScaledNorm n = NormOf(v);
  // max_abs * relative >= max_abs cannot underflow; if it overflows to
  // infinity the record is outside any finite R, as it should be.
  const bool clip = n.max_abs * n.relative > r;
  if (clip) {
    // Projection onto the ball of radius R, then division by R: v / ||v||,
    // computed as (v / max_abs) / relative.
    out = (v / n.max_abs) / n.relative;
  } else {
    out = v / r;
  }
  ShrinkIntoUnitBall(out);
  return clip ? 1 : 0;
}

// `v` in the shortest form that reads back exactly, e.g. "1e-320", "nan".
std::string ShortestText(double v) {
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof(text), v).ptr);
}

Status CheckFinite(const DataMatrix& x, const char* what) {
  if (x.allFinite()) return OkStatus();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    if (!x.row(i).allFinite()) {
      return InvalidArgumentError(std::string(what) + ": record " +
                                  std::to_string(i + 1) +
                                  " has a NaN or infinite value");
    }
  }
  return OkStatus();
}

// Squared norm below which a row of v / R is certainly inside the unit ball
// by every way of computing its norm (their relative errors are ~d * 2^-53),
// so the careful clip below would return v / R unchanged.
constexpr double kSafelyInsideSquaredNorm = 1.0 - 1e-9;

// True if the centre is empty or every entry is +0.0: then x - c is x, bit
// for bit (also for x = -0.0, which a centre of -0.0 would turn into +0.0),
// and a UnitBallRowSource drops such a centre, so that its maps skip the
// subtraction, which costs a per-row pass.
bool IsPositiveZero(const Eigen::VectorXd& c) {
  for (double v : c) {
    if (v != 0.0 || std::signbit(v)) return false;
  }
  return true;
}

// Maps one finite record in place: subtract c (if non-empty), clip to R,
// divide by R. Returns 1 if it clipped. The common case (a record safely
// inside the ball) computes exactly what ClipAndScale's unclipped branch
// does, without allocating; the rest goes through ClipAndScale.
template <typename Row>
int MapRowInPlace(const Eigen::VectorXd& c, double r, Row row) {
  if (c.size() != 0) {
    if (!(row - c.transpose()).allFinite()) {
      // x - c overflows: halve both (||x - c|| > DBL_MAX >= R).
      const Eigen::RowVectorXd centred = 0.5 * row - 0.5 * c.transpose();
      return ClipAndScale(centred, 0.5 * r, row);
    }
    row -= c.transpose();
  }
  if ((row / r).squaredNorm() <= kSafelyInsideSquaredNorm) {
    row /= r;
    return 0;
  }
  const Eigen::RowVectorXd centred = row;
  return ClipAndScale(centred, r, row);
}

// 1 / R when that is a normal number (so that v * (1 / R) is v / R to within
// one rounding, and no mapped entry of a record inside the ball underflows
// or overflows where v / R would not), else 0: the maps then divide.
double InverseOrZero(double r) {
  const double inverse = 1.0 / r;
  return std::isnormal(inverse) ? inverse : 0.0;
}

// One row of the fast path: out[j] = (raw[j] - c[j]) * inverse (c null: no
// centre), returning the sum of the squares of the written values. D > 0 is
// the dimension known when compiling (the loop is then unrolled and
// vectorised), D = 0 reads it from `d`.
template <int D>
double MapRowFast(const double* __restrict raw, const double* __restrict c, double inverse,
                  Eigen::Index d, double* __restrict out) {
  if constexpr (D == 0) {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < d; ++j) {
      out[j] = (c == nullptr ? raw[j] : raw[j] - c[j]) * inverse;
      sum += out[j] * out[j];
    }
    return sum;
  } else {
    // Squares summed lane by lane per chunk, then the chunks' lanes in order.
    double sum = 0.0;
    internal::ForEachChunk<D>([&]<typename V>(V, int j) {
      V v = internal::LoadChunk<V>(raw + j);
      if (c != nullptr) v -= internal::LoadChunk<V>(c + j);
      v *= inverse;
      internal::StoreChunk(out + j, v);
      sum += internal::SumOfLanes(v * v);
    });
    return sum;
  }
}

// How far ahead of the row being mapped the map asks for the raw data: 4
// KiB. The raw block is usually the first touch of the records (a
// memory-mapped file), and the hardware's prefetcher does not cross 4 KiB
// pages; measured in docs/performance.md ("The unit-ball map, the k-means
// pass and the robust mean").
constexpr Eigen::Index kMapPrefetchDoubles = 512;

// The rows of the row-major `rows` x `d` array `raw` mapped into `out`
// (which may be `raw` itself); returns how many were clipped. Each row is
// first written as (x - c) * (1 / R); a row whose computed squared norm is
// not safely inside the ball, by a margin for its rounding (or every row,
// where 1 / R is not normal), is redone from its raw values by
// MapRowInPlace where it lies. One fused pass: a division
// per entry and a separate pass for the norms cost more than the k-means
// pass that reads the block (docs/performance.md).
template <int D>
Eigen::Index MapRowsTo(const Eigen::VectorXd& c, double r, const double* raw, Eigen::Index rows,
                       Eigen::Index d, double* out) {
  const double inverse = InverseOrZero(r);
  const double* centre = c.size() != 0 ? c.data() : nullptr;
  // The fast path's acceptance: safely inside, less the error of its sum of
  // d squares (below d 2^-53 relative for the running sum of the runtime
  // path; without the term, d of about 2e7 could drop enough squares below
  // half an ulp of the sum to accept a row above norm 1).
  const double accept =
      kSafelyInsideSquaredNorm - 2.0 * static_cast<double>(d) * std::ldexp(1.0, -53);
  // In place, a row is mapped into `buffer` first: its raw values must
  // survive until its norm is known.
  std::vector<double> buffer(raw == out ? d : 0);
  Eigen::Index clipped = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double* in = raw + i * d;
    if (i * d + kMapPrefetchDoubles < rows * d) __builtin_prefetch(in + kMapPrefetchDoubles);
    double* row = out + i * d;
    if (inverse != 0.0) {
      double* target = buffer.empty() ? row : buffer.data();
      if (MapRowFast<D>(in, centre, inverse, d, target) <= accept) {
        if (target != row) std::copy(target, target + d, row);
        continue;
      }
    }
    // In its final place: the careful path's norms (Eigen's reductions
    // round by the row's address alignment) are those of the row returned.
    if (in != row) std::copy(in, in + d, row);
    clipped += MapRowInPlace(c, r, Eigen::Map<Eigen::RowVectorXd>(row, d));
  }
  return clipped;
}

// MapRowsTo with D chosen from d (compiled kernels for d <= 16).
Eigen::Index MapRowsTo(const DataDomain& domain, const double* raw, Eigen::Index rows,
                       Eigen::Index d, double* out) {
  using Kernel = Eigen::Index (*)(const Eigen::VectorXd&, double, const double*, Eigen::Index,
                                  Eigen::Index, double*);
  Kernel kernel = internal::ForCompiledDimension<16>(
      d, [](auto dimension) -> Kernel { return &MapRowsTo<decltype(dimension)::value>; });
  if (kernel == nullptr) kernel = &MapRowsTo<0>;
  return kernel(domain.center, domain.data_norm, raw, rows, d, out);
}

// Maps every row of `x` in place; returns how many were clipped.
// Precondition: CheckCenter passed and x is finite.
Eigen::Index MapRowsInPlace(const DataDomain& domain, DataMatrix& x) {
  return MapRowsTo(domain, x.data(), x.rows(), x.cols(), x.data());
}

// Maps the rows of `raw` into `out` (resized; must not alias raw) with the
// values MapRowsInPlace gives. Precondition as above.
Eigen::Index MapRows(const DataDomain& domain, const RowBlock& raw, DataMatrix& out) {
  out.resize(raw.rows(), raw.cols());
  return MapRowsTo(domain, raw.data(), raw.rows(), raw.cols(), out.data());
}

// ValidateDomain, and the centre's size against d columns.
Status CheckCenter(const DataDomain& domain, Eigen::Index d, const char* what) {
  DPEM_RETURN_IF_ERROR(ValidateDomain(domain));
  const Eigen::Index c = domain.center.size();
  if (c != 0 && c != d) {
    return InvalidArgumentError(std::string(what) + ": the domain centre has " +
                                std::to_string(c) + " entries but the data has " +
                                std::to_string(d) + " columns");
  }
  return OkStatus();
}

}  // namespace

Status ValidateDomain(const DataDomain& domain) {
  const double r = domain.data_norm;
  if (!(std::isfinite(r) && r > 0.0)) {
    return InvalidArgumentError(
        "data_norm (the public bound R on the L2 norm of a record) must be a "
        "finite number > 0, got " + ShortestText(r) +
        (std::isnan(r) ? " (not set)" : ""));
  }
  if (!domain.center.allFinite()) {
    return InvalidArgumentError("the domain centre has a NaN or infinite entry");
  }
  return OkStatus();
}

Status ValidateModelDomain(const DataDomain& domain) {
  DPEM_RETURN_IF_ERROR(ValidateDomain(domain));
  const double r = domain.data_norm;
  if (r >= kMinModelDataNorm && r <= kMaxModelDataNorm) return OkStatus();
  const bool above = r > kMaxModelDataNorm;
  return InvalidArgumentError(
      "data_norm R = " + ShortestText(r) + " is " + (above ? "above " : "below ") +
      ShortestText(above ? kMaxModelDataNorm : kMinModelDataNorm) + ", the " +
      (above ? "largest" : "smallest") +
      " a model accepts: its parameters and scores in data units (covariances, variances and "
      "squared distances scale with R^2) would " + (above ? "overflow" : "underflow") +
      " double; express the data in " + (above ? "larger" : "smaller") + " units");
}

StatusOr<DataMatrix> MapToUnitBall(const DataMatrix& x, const DataDomain& domain,
                                   DomainTransformReport* report) {
  DPEM_RETURN_IF_ERROR(CheckCenter(domain, x.cols(), "MapToUnitBall"));
  DPEM_RETURN_IF_ERROR(CheckFinite(x, "MapToUnitBall"));
  DataMatrix u = x;
  const Eigen::Index clipped = MapRowsInPlace(domain, u);
  if (report != nullptr) report->clipped_rows = clipped;
  return u;
}

StatusOr<UnitBallRowSource> UnitBallRowSource::Create(const RowSource& raw,
                                                      const DataDomain& domain) {
  DPEM_RETURN_IF_ERROR(CheckCenter(domain, raw.cols(), "UnitBallRowSource"));
  DataDomain mapped = domain;
  if (IsPositiveZero(mapped.center)) mapped.center.resize(0);  // The same map.
  return UnitBallRowSource(raw, std::move(mapped));
}

RowBlock UnitBallRowSource::Block(Eigen::Index start, Eigen::Index count,
                                  DataMatrix& scratch) const {
  const RowBlock raw = raw_->Block(start, count, scratch);
  if (raw.data() != scratch.data()) {
    MapRows(domain_, raw, scratch);  // One pass instead of a copy and a map.
  } else {
    MapRowsInPlace(domain_, scratch);
  }
  return RowBlock(scratch.data(), scratch.rows(), scratch.cols());
}

StatusOr<double> DataNormFromData(const DataMatrix& x) {
  if (x.rows() == 0 || x.cols() == 0) {
    return InvalidArgumentError("DataNormFromData: empty data matrix (" +
                                std::to_string(x.rows()) + " x " +
                                std::to_string(x.cols()) + ")");
  }
  DPEM_RETURN_IF_ERROR(CheckFinite(x, "DataNormFromData"));
  double largest = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const ScaledNorm n = NormOf(x.row(i));
    largest = std::max(largest, n.max_abs * n.relative);
  }
  if (!std::isfinite(largest)) {
    return InvalidArgumentError(
        "DataNormFromData: the largest record norm overflows double");
  }
  return largest > 0.0 ? largest : 1.0;
}

DataMatrix MapFromUnitBall(const DataMatrix& u, double data_norm) {
  return u * data_norm;
}

DataMatrix MapFromUnitBall(const DataMatrix& u, const DataDomain& domain) {
  DataMatrix x = u * domain.data_norm;
  if (domain.center.size() != 0) x.rowwise() += domain.center.transpose();
  return x;
}

}  // namespace dpem
