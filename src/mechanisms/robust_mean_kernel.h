// Eight closed forms at a time: the inner kernel of the smoothed truncation
// of many values (SmoothedTruncatedValues, robust_mean.cc). Private to the
// library.
//
// Thread safety: a pure function.
#ifndef DPEM_MECHANISMS_ROBUST_MEAN_KERNEL_H_
#define DPEM_MECHANISMS_ROBUST_MEAN_KERNEL_H_

namespace dpem::internal {

// The lanes of one call.
inline constexpr int kClosedFormLanes = 8;

// out[t] = ClosedForm(a[t], b[t]) (robust_mean_closed_form.h, unclamped)
// for t < kClosedFormLanes. Preconditions: every b[t] > 0 and finite, every
// a[t] finite. Where the build found glibc's vector math library (libmvec,
// DPEM_HAVE_LIBMVEC), erfc and exp are its SIMD versions (within 4 ulps of
// the scalar ones, against 1): every lane is computed the same way whatever
// the position of its value, so a value's result does not depend on the
// values computed beside it.
void ClosedFormOfEight(const double* a, const double* b, double* out);

}  // namespace dpem::internal

#endif  // DPEM_MECHANISMS_ROBUST_MEAN_KERNEL_H_
