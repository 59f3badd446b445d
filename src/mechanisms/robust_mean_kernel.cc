// ClosedFormOfEight: see robust_mean_kernel.h. Compiled with
// -fno-math-errno and -fopenmp-simd (cmake/parts/gradient_em.cmake) so that
// the loop below calls glibc's SIMD erfc and exp (libmvec), declared here as
// glibc's <math.h> declares them under -ffast-math; nothing else of
// -ffast-math is used: the arithmetic stays IEEE.
#ifdef DPEM_HAVE_LIBMVEC
extern "C" {
__attribute__((simd("notinbranch"))) double erfc(double) noexcept;
__attribute__((simd("notinbranch"))) double exp(double) noexcept;
}
#endif

#include "mechanisms/robust_mean_kernel.h"

#include "mechanisms/robust_mean_closed_form.h"

namespace dpem::internal {

void ClosedFormOfEight(const double* __restrict a, const double* __restrict b,
                       double* __restrict out) {
  // A fixed trip count of whole vectors: no scalar remainder, so every lane
  // uses the same (vector) erfc and exp.
#pragma omp simd
  for (int t = 0; t < kClosedFormLanes; ++t) out[t] = ClosedForm(a[t], b[t]);
}

}  // namespace dpem::internal
