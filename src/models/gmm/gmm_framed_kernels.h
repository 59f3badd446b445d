// The inner kernels of the framed E-step (gmm_framed_estep.cc) for full
// covariances in small dimensions, where a general matrix product spends
// more time packing and filling its register panels than multiplying (the
// second moment is d x d with d ~ 10, its depth a block of rows). Each
// kernel works on eight rows at a time, one SIMD register per column, with
// the dimension D a compile-time constant so that the columns and the
// accumulators stay in registers. Private to the library.
//
// Every value is computed per record, as the privacy argument of the framed
// pass needs (gmm_framed_estep.cc): y_i from x_i, its squared norm from y_i,
// and the record's term g_i u_i u_i^T as (g_i u_ij) u_il, two roundings per
// entry as in a matrix product. Only the order in which a block's records
// are added differs from a plain loop (eight running sums per entry, added
// at the end of the block), which is a floating-point sum of the same terms.
//
// Thread safety: pure functions of their arguments.
#ifndef DPEM_MODELS_GMM_GMM_FRAMED_KERNELS_H_
#define DPEM_MODELS_GMM_GMM_FRAMED_KERNELS_H_

#include <Eigen/Core>

namespace dpem::internal {

// The largest dimension with a compiled kernel; above it the pass uses
// Eigen's matrix products, which are efficient there.
inline constexpr int kMaxFramedKernelDimension = 16;

namespace framed_kernels {

using Lanes = Eigen::Array<double, 8, 1>;

inline Lanes Load(const double* p) { return Eigen::Map<const Lanes>(p); }

// Lane sums into `out` (added).
inline void AddLanes(const Lanes& lanes, double& out) { out += lanes.sum(); }

}  // namespace framed_kernels

// y = x M^T - 1 o^T for the B x D column-major block `x` (leading dimension
// `ld`, also that of `y`), the lower-triangular D x D map `m` (column-major)
// and the offsets `o` (D), and norms(i) = ||y_i||^2 as computed from y_i.
template <int D>
void FrameMapAndNorms(const double* x, Eigen::Index rows, Eigen::Index ld, const double* m,
                      const double* o, double* y, double* norms) {
  using framed_kernels::Lanes;
  using framed_kernels::Load;
  Eigen::Index i = 0;
  for (; i + 8 <= rows; i += 8) {
    Lanes xs[D];
#pragma GCC unroll 16
    for (int l = 0; l < D; ++l) xs[l] = Load(x + l * ld + i);
    Lanes n = Lanes::Zero();
#pragma GCC unroll 16
    for (int j = 0; j < D; ++j) {
      Lanes acc = Lanes::Constant(-o[j]);
#pragma GCC unroll 16
      for (int l = 0; l <= j; ++l) acc += m[l * D + j] * xs[l];
      Eigen::Map<Lanes>(y + j * ld + i) = acc;
      n += acc * acc;
    }
    Eigen::Map<Lanes>(norms + i) = n;
  }
  for (; i < rows; ++i) {
    double n = 0.0;
    for (int j = 0; j < D; ++j) {
      double acc = -o[j];
      for (int l = 0; l <= j; ++l) acc += m[l * D + j] * x[l * ld + i];
      y[j * ld + i] = acc;
      n += acc * acc;
    }
    norms[i] = n;
  }
}

// Adds sum_i g_i, sum_i g_i u_i and the lower triangle of sum_i g_i u_i
// u_i^T into `count`, `sums` (D) and `lower` (D x D, column-major), where
// u_i = c_i y_i for the B x D column-major block `y` (leading dimension
// `ld`), the weights `g` and the scales `c` (u_i = y_i if `c` is null).
template <int D>
void WeightedMoments(const double* y, Eigen::Index rows, Eigen::Index ld, const double* g,
                     const double* c_or_null, double& count, double* sums, double* lower) {
  using framed_kernels::Lanes;
  using framed_kernels::Load;
  Lanes n = Lanes::Zero();
  Lanes s[D];
  Lanes q[D * (D + 1) / 2];
  for (Lanes& a : s) a.setZero();
  for (Lanes& a : q) a.setZero();
  Eigen::Index i = 0;
  for (; i + 8 <= rows; i += 8) {
    const Lanes gi = Load(g + i);
    n += gi;
    Lanes us[D];
#pragma GCC unroll 16
    for (int l = 0; l < D; ++l) us[l] = Load(y + l * ld + i);
    if (c_or_null != nullptr) {
      const Lanes ci = Load(c_or_null + i);
#pragma GCC unroll 16
      for (int l = 0; l < D; ++l) us[l] *= ci;
    }
#pragma GCC unroll 16
    for (int j = 0; j < D; ++j) {
      const Lanes w = gi * us[j];
      s[j] += w;
#pragma GCC unroll 16
      for (int l = j; l < D; ++l) q[j * D - j * (j - 1) / 2 + l - j] += w * us[l];
    }
  }
  framed_kernels::AddLanes(n, count);
  int p = 0;
  for (int j = 0; j < D; ++j) {
    framed_kernels::AddLanes(s[j], sums[j]);
    for (int l = j; l < D; ++l) framed_kernels::AddLanes(q[p++], lower[j * D + l]);
  }
  for (; i < rows; ++i) {
    count += g[i];
    double us[D];
    for (int l = 0; l < D; ++l) us[l] = c_or_null ? y[l * ld + i] * c_or_null[i] : y[l * ld + i];
    for (int j = 0; j < D; ++j) {
      const double w = g[i] * us[j];
      sums[j] += w;
      for (int l = j; l < D; ++l) lower[j * D + l] += w * us[l];
    }
  }
}

}  // namespace dpem::internal

#endif  // DPEM_MODELS_GMM_GMM_FRAMED_KERNELS_H_
