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
  // Fixed trip counts of whole vectors: no scalar remainder, so every lane
  // uses the same (vector) erfc and exp. Three loops: the clamped arguments,
  // the functions (a loop of their own, see CorrectionFrom), the terms.
  constexpr int kLanes = kClosedFormLanes;
  double v_minus[kLanes], v_plus[kLanes], erfc_minus[kLanes], erfc_plus[kLanes],
      exp_minus[kLanes], exp_plus[kLanes];
#pragma omp simd
  for (int t = 0; t < kLanes; ++t) {
    v_minus[t] = VMinus(a[t], b[t]);
    v_plus[t] = VPlus(a[t], b[t]);
    erfc_minus[t] = ErfcArgument(v_minus[t]);
    erfc_plus[t] = ErfcArgument(v_plus[t]);
    exp_minus[t] = ExpArgument(v_minus[t]);
    exp_plus[t] = ExpArgument(v_plus[t]);
  }
#pragma omp simd
  for (int t = 0; t < kLanes; ++t) {
    erfc_minus[t] = std::erfc(erfc_minus[t]);
    erfc_plus[t] = std::erfc(erfc_plus[t]);
    exp_minus[t] = std::exp(exp_minus[t]);
    exp_plus[t] = std::exp(exp_plus[t]);
  }
#pragma omp simd
  for (int t = 0; t < kLanes; ++t) {
    out[t] = ClosedFormFrom(a[t], b[t], v_minus[t], v_plus[t], erfc_minus[t], erfc_plus[t],
                            exp_minus[t], exp_plus[t]);
  }
}

}  // namespace dpem::internal
