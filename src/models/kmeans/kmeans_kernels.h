// The inner kernel of the k-means passes in small dimensions
// (NearestCentre::Assign, kmeans.cc): for eight rows at a time, one SIMD
// register per column, every centre's score x . mu_k - ||mu_k||^2 / 2 and
// the running best, in registers, instead of a B x K matrix product (whose
// packing of a d = 10 block cost more than its multiplications) and a
// scalar scan of each row. Private to the library.
//
// Thread safety: a pure function of its arguments.
#ifndef DPEM_MODELS_KMEANS_KMEANS_KERNELS_H_
#define DPEM_MODELS_KMEANS_KMEANS_KERNELS_H_

#include <Eigen/Core>

#include <algorithm>
#include <limits>

#include "internal/simd_chunks.h"

namespace dpem::internal {

// The largest dimension with a compiled kernel; above it Assign uses a
// matrix product, which is efficient there.
inline constexpr int kMaxKmeansKernelDimension = 16;

// Eight doubles in one SIMD register (GCC and Clang vector extensions: the
// comparison and the select below vectorise, which Eigen's select does not).
using EightDoubles = Doubles8;

// The kernels below take a B x D row-major block `x` (row i at x + i ld),
// the centres as a D x K column-major array (centre k in column k) and h_k
// = ||mu_k||^2 / 2; the nearest centre of x_i maximises x_i . mu_k - h_k
// (the first on ties), and its squared distance is max(0, ||x_i||^2 - 2
// max_k(...)). Dot products are summed over the coordinates in order,
// ||x_i||^2 likewise.

// Column j of eight consecutive rows of a row-major block (p: the first
// row's entry, ld: the distance between rows).
inline EightDoubles ColumnOfEight(const double* p, Eigen::Index ld) {
  return EightDoubles{p[0],      p[ld],     p[2 * ld], p[3 * ld],
                      p[4 * ld], p[5 * ld], p[6 * ld], p[7 * ld]};
}

// sum[j] += row[j] for j < D, in SIMD chunks.
template <int D>
__attribute__((always_inline)) inline void AddRow(double* __restrict sum,
                                                  const double* __restrict row) {
  ForEachChunk<D>([&]<typename V>(V, int j) {
    StoreChunk(sum + j, LoadChunk<V>(sum + j) + LoadChunk<V>(row + j));
  });
}

// The D columns of rows i..i+7 of a row-major block (one register each).
template <int D>
__attribute__((always_inline)) inline void LoadEight(const double* x, Eigen::Index i,
                                                     Eigen::Index ld, EightDoubles (&xs)[D]) {
#pragma GCC unroll 16
  for (int j = 0; j < D; ++j) xs[j] = ColumnOfEight(x + i * ld + j, ld);
}

// For eight rows held as columns `xs`: the index of the best centre of
// each (as a double) into `index`, and max(0, ||x||^2 - 2 best score), the
// squared distance to it, returned.
template <int D>
__attribute__((always_inline)) inline EightDoubles BestOfEight(const EightDoubles (&xs)[D],
                                                               const double* centres,
                                                               const double* h,
                                                               Eigen::Index k_count,
                                                               EightDoubles& index) {
  using V = EightDoubles;
  V best = V{} - std::numeric_limits<double>::infinity();
  index = V{};
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const double* mu = centres + k * D;
    V dot = xs[0] * mu[0];
#pragma GCC unroll 16
    for (int j = 1; j < D; ++j) dot += xs[j] * mu[j];
    dot -= h[k];
    const auto better = dot > best;
    best = better ? dot : best;
    index = better ? V{} + static_cast<double>(k) : index;
  }
  V norm = xs[0] * xs[0];
#pragma GCC unroll 16
  for (int j = 1; j < D; ++j) norm += xs[j] * xs[j];
  const V distance = norm - 2.0 * best;
  return distance > V{} ? distance : V{};
}

// The same for one row r (the rows left over after the groups of eight):
// the best centre's index, and the squared distance into `distance`.
template <int D>
int BestOfOne(const double* r, const double* centres, const double* h, Eigen::Index k_count,
              double& distance) {
  double best = -std::numeric_limits<double>::infinity(), norm = r[0] * r[0];
  int index = 0;
  for (int j = 1; j < D; ++j) norm += r[j] * r[j];
  for (Eigen::Index k = 0; k < k_count; ++k) {
    const double* mu = centres + k * D;
    double dot = r[0] * mu[0];
    for (int j = 1; j < D; ++j) dot += r[j] * mu[j];
    dot -= h[k];
    if (dot > best) {
      best = dot;
      index = static_cast<int>(k);
    }
  }
  distance = std::max(0.0, norm - 2.0 * best);
  return index;
}

// For each row: the index of its nearest centre into labels[i] and the
// squared distance into distances[i].
template <int D>
void NearestCentres(const double* x, Eigen::Index rows, Eigen::Index ld, const double* centres,
                    const double* h, Eigen::Index k_count, int* labels, double* distances) {
  Eigen::Index i = 0;
  for (; i + 8 <= rows; i += 8) {
    EightDoubles xs[D], index;
    LoadEight<D>(x, i, ld, xs);
    const EightDoubles distance = BestOfEight<D>(xs, centres, h, k_count, index);
    __builtin_memcpy(distances + i, &distance, sizeof(distance));
    for (int t = 0; t < 8; ++t) labels[i + t] = static_cast<int>(index[t]);
  }
  for (; i < rows; ++i) labels[i] = BestOfOne<D>(x + i * ld, centres, h, k_count, distances[i]);
}

// NearestCentres' assignment accumulated in place of the labels: for each
// row x_i and its nearest centre k, counts[k] += 1 and sums[k D + j] +=
// x_ij (sums row-major K x D), rows in order. Returns the sum of the rows'
// squared distances (the groups of eight summed lane by lane, then the
// lanes and the rest in order): the k-means pass without a per-row label.
template <int D>
double AccumulateNearest(const double* __restrict x, Eigen::Index rows, Eigen::Index ld,
                         const double* __restrict centres, const double* __restrict h,
                         Eigen::Index k_count, double* __restrict counts,
                         double* __restrict sums) {
  EightDoubles sse{};
  Eigen::Index i = 0;
  for (; i + 8 <= rows; i += 8) {
    EightDoubles xs[D], index;
    LoadEight<D>(x, i, ld, xs);
    sse += BestOfEight<D>(xs, centres, h, k_count, index);
    for (int t = 0; t < 8; ++t) {
      const int k = static_cast<int>(index[t]);
      counts[k] += 1.0;
      AddRow<D>(sums + k * D, x + (i + t) * ld);
    }
  }
  double total = 0.0;
  for (int t = 0; t < 8; ++t) total += sse[t];
  for (; i < rows; ++i) {
    double distance;
    const int k = BestOfOne<D>(x + i * ld, centres, h, k_count, distance);
    total += distance;
    counts[k] += 1.0;
    AddRow<D>(sums + k * D, x + i * ld);
  }
  return total;
}

}  // namespace dpem::internal

#endif  // DPEM_MODELS_KMEANS_KMEANS_KERNELS_H_
