// Test support: fixed symmetric test matrices written by their upper
// triangle, so that a test's matrix cannot be asymmetric by a typo. Not part
// of the library.
#ifndef DPEM_TESTING_SYMMETRIC_MATRIX_H_
#define DPEM_TESTING_SYMMETRIC_MATRIX_H_

#include <Eigen/Core>

namespace dpem::test_support {

// The symmetric 3 x 3 matrix with upper triangle (a11 a12 a13; a22 a23; a33).
inline Eigen::Matrix3d Symmetric3(double a11, double a12, double a13, double a22, double a23,
                                  double a33) {
  Eigen::Matrix3d s;
  s << a11, a12, a13,  //
      a12, a22, a23,   //
      a13, a23, a33;
  return s;
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_SYMMETRIC_MATRIX_H_
