// The checks of fit options that every model makes alike: the number of
// components K, of iterations J and the budget epsilon, first in each
// model's Validate; and the names of the starts. Private to the library.
//
// Thread safety: pure functions.
#ifndef DPEM_PIPELINE_FIT_OPTIONS_H_
#define DPEM_PIPELINE_FIT_OPTIONS_H_

#include <string>
#include <string_view>

#include "dpem/status.h"
#include "internal/enum_names.h"

namespace dpem::internal {

// InvalidArgument unless components K >= 1, iterations J >= 0 (0: the
// model's default) and epsilon > 0 (infinity: the non-private fit, called
// `plain_fit` in the message, e.g. "EM"), checked in that order.
inline Status ValidateCommonFitOptions(int components, int iterations, double epsilon,
                                       std::string_view plain_fit) {
  if (components < 1) return InvalidArgumentError("components K must be >= 1");
  if (iterations < 0) {
    return InvalidArgumentError("iterations J must be >= 1 (or 0 for the default)");
  }
  if (!(epsilon > 0.0)) {
    return InvalidArgumentError("epsilon must be > 0 (or infinity for non-private " +
                                std::string(plain_fit) + ")");
  }
  return OkStatus();
}

// The names of the starting points that GmmInit and KmeansInit share, in the
// order their parsers list them.
template <typename Init>
inline constexpr EnumName<Init> kStartNames[] = {{Init::kRandom, "random"},
                                                 {Init::kKmeansPlusPlus, "kmeans++"},
                                                 {Init::kPrivate, "private"}};

}  // namespace dpem::internal

#endif  // DPEM_PIPELINE_FIT_OPTIONS_H_
