// Choosing an inner kernel compiled for a fixed dimension from the runtime
// dimension d: the small-d kernels of the framed GMM pass
// (models/gmm/gmm_framed_kernels.h) and of k-means
// (models/kmeans/kmeans_kernels.h). Private to the library.
//
// Thread safety: a pure function.
#ifndef DPEM_INTERNAL_DIMENSION_DISPATCH_H_
#define DPEM_INTERNAL_DIMENSION_DISPATCH_H_

#include <Eigen/Core>

#include <type_traits>
#include <utility>

namespace dpem::internal {

// make(std::integral_constant<int, D>{}) for the D in [1, kMax] equal to
// `d`, or a value-initialised result (e.g. null kernel pointers) if d is
// outside that range. `make` returns the same type for every D.
template <int kMax, typename Make>
auto ForCompiledDimension(Eigen::Index d, Make make) {
  using Result = decltype(make(std::integral_constant<int, 1>{}));
  Result result{};
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((d == I + 1 ? (result = make(std::integral_constant<int, I + 1>{}), 0) : 0), ...);
  }(std::make_integer_sequence<int, kMax>{});
  return result;
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_DIMENSION_DISPATCH_H_
