// The closed form of the smoothed Catoni-Giulini truncation
// (wang-dp-gradient-em eq. (12) and Appendix D), written once and compiled
// twice: for single values in robust_mean.cc, and eight at a time with
// vectorised erfc and exp in robust_mean_kernel.cc. Private to the library.
//
// Thread safety: pure functions.
#ifndef DPEM_MECHANISMS_ROBUST_MEAN_CLOSED_FORM_H_
#define DPEM_MECHANISMS_ROBUST_MEAN_CLOSED_FORM_H_

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dpem::internal {

inline constexpr double kClosedFormSqrt2 = std::numbers::sqrt2;
inline constexpr double kClosedFormInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// The arguments of erfc and exp below are kept where their results are
// normal numbers: erfc(t) for t in [-10, 26] (erfc(-10) is 2 in double,
// erfc(26) about 5.7e-296) and exp(t) for t >= -700 (about 9.9e-305). Beyond
// them the true values differ from these by less than 1e-295, which moves
// the closed form by less than 1e-200 for |a|, b <= kClosedFormLimit (each
// is multiplied by at most 10^3, or by v e^(-v^2 / 2) and (2 + v^2)
// e^(-v^2 / 2) times powers of b that keep the products finite), and the
// vectorised erfc and exp stay on their fast paths (an argument whose result
// underflows sends a whole vector to the scalar function).
inline constexpr double kErfcArgumentLow = -10.0;
inline constexpr double kErfcArgumentHigh = 26.0;
inline constexpr double kExpArgumentLow = -700.0;

// V_- = (sqrt 2 - a) / b and V_+ = (sqrt 2 + a) / b.
inline double VMinus(double a, double b) { return (kClosedFormSqrt2 - a) / b; }
inline double VPlus(double a, double b) { return (kClosedFormSqrt2 + a) / b; }
// The arguments of erfc and exp for V (the clamps above).
inline double ErfcArgument(double v) {
  return std::clamp(v / kClosedFormSqrt2, kErfcArgumentLow, kErfcArgumentHigh);
}
inline double ExpArgument(double v) { return std::max(-0.5 * v * v, kExpArgumentLow); }

// C-hat(a, b) from V_-, V_+ and erfc and exp at their arguments: T1 + ... +
// T5 of Appendix D, with the normal upper tail Phi(-v) = erfc(v / sqrt 2) / 2.
// (The vector kernel evaluates erfc and exp in a loop of their own: GCC
// rewrites exp(max(x, c)) as max(exp(x), exp(c)), which would call the
// vector exp on the unclamped argument.)
inline double CorrectionFrom(double a, double b, double v_minus, double v_plus,
                             double erfc_minus, double erfc_plus, double exp_minus,
                             double exp_plus) {
  constexpr double kSqrt2 = kClosedFormSqrt2;
  constexpr double kInvSqrt2Pi = kClosedFormInvSqrt2Pi;
  const double f_minus = 0.5 * erfc_minus;  // Phi(-V_-)
  const double f_plus = 0.5 * erfc_plus;    // Phi(-V_+)
  const double e_minus = exp_minus;
  const double e_plus = exp_plus;
  const double t1 = 2.0 * kSqrt2 / 3.0 * (f_minus - f_plus);
  const double t2 = -(a - a * a * a / 6.0) * (f_minus + f_plus);
  const double t3 = b * kInvSqrt2Pi * (1.0 - a * a / 2.0) * (e_plus - e_minus);
  const double t4 =
      a * b * b / 2.0 * (f_plus + f_minus + kInvSqrt2Pi * (v_plus * e_plus + v_minus * e_minus));
  const double t5 = b * b * b / 6.0 * kInvSqrt2Pi *
                    ((2.0 + v_minus * v_minus) * e_minus - (2.0 + v_plus * v_plus) * e_plus);
  return t1 + t2 + t3 + t4 + t5;
}

// The polynomial part of eq. (12): a (1 - b^2/2) - a^3/6.
inline double ClosedFormPolynomial(double a, double b) {
  return a * (1.0 - b * b / 2.0) - a * a * a / 6.0;
}

// eq. (12) from the same pieces: the polynomial part plus C-hat(a, b).
inline double ClosedFormFrom(double a, double b, double v_minus, double v_plus,
                             double erfc_minus, double erfc_plus, double exp_minus,
                             double exp_plus) {
  return ClosedFormPolynomial(a, b) +
         CorrectionFrom(a, b, v_minus, v_plus, erfc_minus, erfc_plus, exp_minus, exp_plus);
}

// C-hat(a, b) of Appendix D. Requires b >= kClosedFormMinSmoothing
// (robust_mean.h), so that V^2 is finite.
inline double ClosedFormCorrection(double a, double b) {
  const double v_minus = VMinus(a, b), v_plus = VPlus(a, b);
  return CorrectionFrom(a, b, v_minus, v_plus, std::erfc(ErfcArgument(v_minus)),
                        std::erfc(ErfcArgument(v_plus)), std::exp(ExpArgument(v_minus)),
                        std::exp(ExpArgument(v_plus)));
}

// eq. (12): a (1 - b^2/2) - a^3/6 + C-hat(a, b), unclamped. Same
// requirement.
inline double ClosedForm(double a, double b) {
  return ClosedFormPolynomial(a, b) + ClosedFormCorrection(a, b);
}

}  // namespace dpem::internal

#endif  // DPEM_MECHANISMS_ROBUST_MEAN_CLOSED_FORM_H_
