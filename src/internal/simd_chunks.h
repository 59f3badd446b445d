// Short rows of compile-time length D in SIMD chunks: the row loops of the
// small-d kernels (the unit-ball map of data/domain.cc, the k-means
// accumulation of models/kmeans/kmeans_kernels.h), which the compiler leaves
// scalar when written as loops over D doubles. Private to the library.
//
// Thread safety: pure functions.
#ifndef DPEM_INTERNAL_SIMD_CHUNKS_H_
#define DPEM_INTERNAL_SIMD_CHUNKS_H_

namespace dpem::internal {

// Vectors of 8, 4 and 2 doubles (GCC and Clang vector extensions).
using Doubles8 = double __attribute__((vector_size(64)));
using Doubles4 = double __attribute__((vector_size(32)));
using Doubles2 = double __attribute__((vector_size(16)));
using Doubles1 = double __attribute__((vector_size(8)));

// Calls fn(V{}, j) for consecutive chunks covering [0, D): chunks of 8
// doubles while they fit, then at most one each of 4, 2 and 1. V is the
// chunk's vector type and j its first index.
template <int D, typename Fn>
__attribute__((always_inline)) inline void ForEachChunk(Fn&& fn) {
  int j = 0;
  for (; j + 8 <= D; j += 8) fn(Doubles8{}, j);
  if (j + 4 <= D) fn(Doubles4{}, j), j += 4;
  if (j + 2 <= D) fn(Doubles2{}, j), j += 2;
  if (j < D) fn(Doubles1{}, j);
}

// Unaligned load and store of a chunk of type V.
template <typename V>
__attribute__((always_inline)) inline V LoadChunk(const double* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V>
__attribute__((always_inline)) inline void StoreChunk(double* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// The sum of a chunk's lanes, in lane order.
template <typename V>
__attribute__((always_inline)) inline double SumOfLanes(V v) {
  double s = v[0];
  for (int t = 1; t < static_cast<int>(sizeof(V) / sizeof(double)); ++t) s += v[t];
  return s;
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_SIMD_CHUNKS_H_
