// Test support: the exact privacy profile of the Gaussian mechanism, written
// from the formula independently of src/accounting (plain erfc and plain
// bisection), as the ground truth no sound accountant may go under.
// Not part of the library.
#ifndef DPEM_TESTING_EXACT_PRIVACY_H_
#define DPEM_TESTING_EXACT_PRIVACY_H_

namespace dpem::test_support {

// Standard normal CDF.
double Phi(double x);

// Balle and Wang 2018, Thm 8: the smallest delta for which the Gaussian
// mechanism with noise multiplier z is (eps, delta)-DP.
double ExactGaussianDelta(double z, double eps);

// The exact epsilon at delta, from below: the largest value found by 200
// bisection steps with ExactGaussianDelta still above delta (0 if delta is
// met at eps = 0). J Gaussian releases with multiplier z compose to one with
// multiplier z / sqrt(J).
double ExactGaussianEpsilon(double z, double delta);

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_EXACT_PRIVACY_H_
