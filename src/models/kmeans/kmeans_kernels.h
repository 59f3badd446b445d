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

namespace dpem::internal {

// The largest dimension with a compiled kernel; above it Assign uses a
// matrix product, which is efficient there.
inline constexpr int kMaxKmeansKernelDimension = 16;

// For each row x_i of the B x D row-major block `x` (row i at x + i ld): the
// index of the centre maximising x_i . mu_k - h_k (the first on
// ties) into labels(i), and max(0, ||x_i||^2 - 2 max_k(...)) into
// distances(i). `centres` is D x K column-major (centre k in column k) and
// `h` holds ||mu_k||^2 / 2. Dot products are summed over the coordinates in
// order, ||x_i||^2 likewise.
// Eight doubles in one SIMD register (GCC and Clang vector extensions: the
// comparison and the select below vectorise, which Eigen's select does not).
using EightDoubles = double __attribute__((vector_size(64)));

// Column j of eight consecutive rows of a row-major block (p: the first
// row's entry, ld: the distance between rows).
inline EightDoubles ColumnOfEight(const double* p, Eigen::Index ld) {
  return EightDoubles{p[0],      p[ld],     p[2 * ld], p[3 * ld],
                      p[4 * ld], p[5 * ld], p[6 * ld], p[7 * ld]};
}

template <int D>
void NearestCentres(const double* x, Eigen::Index rows, Eigen::Index ld, const double* centres,
                    const double* h, Eigen::Index k_count, int* labels, double* distances) {
  using V = EightDoubles;
  constexpr double kLowest = -std::numeric_limits<double>::infinity();
  Eigen::Index i = 0;
  for (; i + 8 <= rows; i += 8) {
    V xs[D];
#pragma GCC unroll 16
    for (int j = 0; j < D; ++j) xs[j] = ColumnOfEight(x + i * ld + j, ld);
    V best = V{} + kLowest, index = V{};
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
    V distance = norm - 2.0 * best;
    distance = distance > V{} ? distance : V{};
    __builtin_memcpy(distances + i, &distance, sizeof(distance));
    for (int t = 0; t < 8; ++t) labels[i + t] = static_cast<int>(index[t]);
  }
  for (; i < rows; ++i) {
    const double* r = x + i * ld;
    double best = kLowest, norm = r[0] * r[0];
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
    labels[i] = index;
    distances[i] = std::max(0.0, norm - 2.0 * best);
  }
}

}  // namespace dpem::internal

#endif  // DPEM_MODELS_KMEANS_KMEANS_KERNELS_H_
