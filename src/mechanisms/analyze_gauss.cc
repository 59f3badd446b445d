#include "dpem/mechanisms/analyze_gauss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"
#include "internal/parallel_for.h"
#include "internal/linear_algebra.h"

namespace dpem {
namespace {

// Side of the square tiles in which the passes below visit an entry (i, j)
// together with (j, i): 32 x 32 doubles of each stay in the L1 cache.
constexpr Eigen::Index kTile = 32;

// Calls fn(i, j) for every i <= j < d with j in the strip of columns
// [jb, jb + kTile), tile by tile, so that the reads or writes of (j, i) that
// go with (i, j) stay in the cache.
template <typename Fn>
void ForEachUpperEntryOfStrip(Eigen::Index d, Eigen::Index jb, Fn fn) {
  const Eigen::Index j_end = std::min(jb + kTile, d);
  for (Eigen::Index ib = 0; ib <= jb; ib += kTile) {
    for (Eigen::Index j = jb; j < j_end; ++j) {
      const Eigen::Index i_end = std::min(ib + kTile, j + 1);
      for (Eigen::Index i = ib; i < i_end; ++i) fn(i, j);
    }
  }
}

// Calls strip_fn(s, jb) for the strips s = 0, 1, ... of kTile columns
// (jb = s kTile) of a d x d matrix, on up to `threads` threads. Each strip's
// entries (i, j) and (j, i), i <= j, belong to it alone, so strips may write
// them concurrently.
template <typename Fn>
void ForEachStrip(Eigen::Index d, int threads, Fn strip_fn) {
  internal::ParallelFor((d + kTile - 1) / kTile, threads,
                        [&](Eigen::Index s) { strip_fn(s, s * kTile); });
}

// What ValidateSymmetricMatrix checks of a square matrix, in one pass.
struct SymmetryMeasure {
  bool finite = true;
  double max_abs = 0.0;    // max |A(i, j)|
  double asymmetry = 0.0;  // max |A(i, j) - A(j, i)|
};

SymmetryMeasure MeasureSymmetry(const Eigen::Ref<const Eigen::MatrixXd>& a, int threads) {
  const Eigen::Index d = a.rows();
  std::vector<SymmetryMeasure> strips(static_cast<size_t>((d + kTile - 1) / kTile));
  ForEachStrip(d, threads, [&](Eigen::Index s, Eigen::Index jb) {
    SymmetryMeasure& m = strips[static_cast<size_t>(s)];
    ForEachUpperEntryOfStrip(d, jb, [&](Eigen::Index i, Eigen::Index j) {
      const double upper = a(i, j);
      const double lower = a(j, i);
      m.finite = m.finite && std::isfinite(upper) && std::isfinite(lower);
      m.max_abs = std::max({m.max_abs, std::abs(upper), std::abs(lower)});
      m.asymmetry = std::max(m.asymmetry, std::abs(upper - lower));
    });
  });
  SymmetryMeasure all;  // Maxima and "and": the order does not matter.
  for (const SymmetryMeasure& m : strips) {
    all.finite = all.finite && m.finite;
    all.max_abs = std::max(all.max_abs, m.max_abs);
    all.asymmetry = std::max(all.asymmetry, m.asymmetry);
  }
  return all;
}

// ValidateSymmetricMatrix, also giving the asymmetry it measured.
StatusOr<double> CheckSymmetric(const Eigen::Ref<const Eigen::MatrixXd>& matrix,
                                std::string_view what, int threads) {
  const std::string name(what);
  if (matrix.size() == 0) return InvalidArgumentError(name + " is empty");
  if (matrix.rows() != matrix.cols()) {
    return InvalidArgumentError(name + " is not square (" +
                                std::to_string(matrix.rows()) + " x " +
                                std::to_string(matrix.cols()) + ")");
  }
  const SymmetryMeasure m = MeasureSymmetry(matrix, threads);
  if (!m.finite) return InvalidArgumentError(name + " has a NaN or infinite entry");
  if (m.asymmetry > kSymmetryRelativeTolerance * m.max_abs) {
    return InvalidArgumentError(name + " is not symmetric (max |A - A^T| = " +
                                std::to_string(m.asymmetry) + ")");
  }
  return m.asymmetry;
}

// (A + A^T) / 2, exactly symmetric: entry (i, j) and (j, i) are computed by
// the same floating-point sum.
Eigen::MatrixXd Symmetrised(const Eigen::Ref<const Eigen::MatrixXd>& a) {
  Eigen::MatrixXd out(a.rows(), a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) {
      out(i, j) = 0.5 * (a(i, j) + a(j, i));
      out(j, i) = out(i, j);
    }
  }
  return out;
}

// The upper triangle of (A + A^T) / 2, in place (the lower is left as it is).
void SymmetriseUpperInPlace(Eigen::Ref<Eigen::MatrixXd> a, int threads) {
  ForEachStrip(a.rows(), threads, [&](Eigen::Index, Eigen::Index jb) {
    ForEachUpperEntryOfStrip(a.rows(), jb, [&](Eigen::Index i, Eigen::Index j) {
      a(i, j) = 0.5 * (a(i, j) + a(j, i));
    });
  });
}

void MirrorUpperToLower(Eigen::Ref<Eigen::MatrixXd> a, int threads) {
  ForEachStrip(a.rows(), threads, [&](Eigen::Index, Eigen::Index jb) {
    ForEachUpperEntryOfStrip(a.rows(), jb,
                             [&](Eigen::Index i, Eigen::Index j) { a(j, i) = a(i, j); });
  });
}

// Entry (i, j), i <= j, of the upper triangle's coordinate k in column order
// (k = j (j + 1) / 2 + i: the order of vec_upper).
std::pair<Eigen::Index, Eigen::Index> UpperEntry(Eigen::Index k) {
  auto j = static_cast<Eigen::Index>((std::sqrt(8.0 * static_cast<double>(k) + 1.0) - 1.0) / 2.0);
  while (j * (j + 1) / 2 > k) --j;  // Correct the floating-point root.
  while ((j + 1) * (j + 2) / 2 <= k) ++j;
  return {k - j * (j + 1) / 2, j};
}

// Noise on the upper-triangle coordinates [begin, end) of `a` (in column
// order), drawn from `stream`.
void NoiseUpperCoordinates(Eigen::Ref<Eigen::MatrixXd> a, const internal::DiscreteGrid& grid,
                           Generator& stream, Eigen::Index begin, Eigen::Index end) {
  auto [i, j] = UpperEntry(begin);
  for (Eigen::Index k = begin; k < end; ++k) {
    a(i, j) = internal::WithDiscreteNoise(a(i, j), MechanismKind::kGaussian, grid, stream);
    if (++i > j) {
      ++j;
      i = 0;
    }
  }
}

// The discrete Analyze Gauss (additive_noise.h, "Discrete noise"), in place:
// the upper triangle u(A) (m = d(d+1)/2 coordinates) of sym(A), rounded to
// the grid, plus discrete Gaussian noise in chunks of fixed streams
// (internal::ForEachNoiseChunk) on `threads` threads, mirrored. Records the
// charged release first. `asymmetry` is CheckSymmetric's: when 0, A is
// sym(A) already.
Status ReleaseSymmetricDiscrete(Eigen::Ref<Eigen::MatrixXd> value, double asymmetry,
                                const NoiseSpec& spec, Generator& gen, PrivacyLedger& ledger,
                                int threads) {
  const Eigen::Index d = value.rows();
  const Eigen::Index m = d * (d + 1) / 2;
  DPEM_ASSIGN_OR_RETURN(const internal::DiscreteGrid grid, internal::PlanDiscreteGrid(spec, m));
  DPEM_RETURN_IF_ERROR(ledger.Record(
      Release{MechanismKind::kGaussian, grid.sensitivity, grid.noise_scale, spec.label}));
  if (asymmetry > 0.0) SymmetriseUpperInPlace(value, threads);
  internal::ForEachNoiseChunk(m, threads, gen,
                              [&](Generator& stream, Eigen::Index begin, Eigen::Index end) {
                                NoiseUpperCoordinates(value, grid, stream, begin, end);
                              });
  MirrorUpperToLower(value, threads);
  return OkStatus();
}

}  // namespace

Status ValidateSymmetricMatrix(const Eigen::Ref<const Eigen::MatrixXd>& matrix,
                               std::string_view what) {
  return CheckSymmetric(matrix, what, 1).status();
}

Status ReleaseSymmetric(Eigen::Ref<Eigen::MatrixXd> value,
                        const NoiseSpec& spec, Generator& gen,
                        PrivacyLedger& ledger, int threads) {
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(spec));
  if (spec.mechanism != MechanismKind::kGaussian) {
    return InvalidArgumentError("release '" + spec.label +
                                "': Analyze Gauss needs a Gaussian spec");
  }
  if (threads < 1) {
    return InvalidArgumentError("release '" + spec.label + "': threads must be >= 1");
  }
  DPEM_ASSIGN_OR_RETURN(const double asymmetry,
                        CheckSymmetric(value, "release '" + spec.label + "': matrix", threads));
  if (spec.sampling == NoiseSampling::kDiscrete) {
    return ReleaseSymmetricDiscrete(value, asymmetry, spec, gen, ledger, threads);
  }
  DPEM_ASSIGN_OR_RETURN(
      Eigen::MatrixXd noise,
      SampleSymmetricGaussianMatrix(gen, value.rows(), spec.NoiseScale()));
  Eigen::MatrixXd released = Symmetrised(value) + noise;
  DPEM_RETURN_IF_ERROR(
      ledger.Record(Release{MechanismKind::kGaussian, spec.sensitivity,
                            spec.NoiseScale(), spec.label, NoiseSampling::kContinuous}));
  value = released;
  return OkStatus();
}

StatusOr<Eigen::MatrixXd> ProjectToEigenvalueFloor(const Eigen::MatrixXd& sym,
                                                   double floor) {
  if (!(std::isfinite(floor) && floor > 0.0)) {
    return InvalidArgumentError(
        "ProjectToEigenvalueFloor: floor must be finite and > 0");
  }
  DPEM_RETURN_IF_ERROR(
      ValidateSymmetricMatrix(sym, "ProjectToEigenvalueFloor: matrix"));
  return internal::ClampEigenvalues(sym, floor, std::numeric_limits<double>::infinity());
}

}  // namespace dpem
