// The re-projection of a computed vector into the unit ball, shared by the
// passes that compute a record's contribution themselves and must keep it
// in the ball as computed (the framed GMM pass, factor analysis's second
// moment): a contribution of norm at most 1 is what their sensitivity
// argument needs (docs/privacy.md, sections 2 and 8). Private to the
// library.
#ifndef DPEM_INTERNAL_UNIT_BALL_H_
#define DPEM_INTERNAL_UNIT_BALL_H_

#include <cmath>

namespace dpem::internal {

// The radius a vector with a computed norm above it is scaled to, and the
// largest computed squared norm left alone: both 1 - 1e-12. The computed
// norm's relative error, below (d + 2) 2^-53, and the scaling's 2^-52 stay
// far inside that margin (for d up to about 4000), so every vector that
// leaves ShrinkIntoUnitBall has norm at most 1.
inline constexpr double kShrunkRadius = 1.0 - 1e-12;
inline constexpr double kInsideSquared = kShrunkRadius * kShrunkRadius;

// Given `v` and its computed squared norm: leaves v if squared_norm <=
// kInsideSquared, scales it to norm kShrunkRadius if squared_norm is finite,
// and sets it to 0 if it is not (an overflow: any vector in the ball keeps
// the sensitivity). `v` is an Eigen vector or a row / column expression.
template <typename Vector>
void ShrinkIntoUnitBall(Vector&& v, double squared_norm) {
  if (squared_norm <= kInsideSquared) return;
  if (std::isfinite(squared_norm)) {
    v *= kShrunkRadius / std::sqrt(squared_norm);
  } else {
    v.setZero();
  }
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_UNIT_BALL_H_
