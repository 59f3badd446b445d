// Test support: the options of the models' fits as the tests build them, so
// that a test states a fit's size and privacy in one call and then sets only
// what it is about. Not part of the library.
#ifndef DPEM_TESTING_FIT_OPTIONS_H_
#define DPEM_TESTING_FIT_OPTIONS_H_

#include "dpem/models/gmm/private_gmm.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/models/kmeans/kmeans.h"

namespace dpem::test_support {

// Every k-means method.
inline constexpr KmeansMethod kAllKmeansMethods[] = {
    KmeansMethod::kCdpGauss, KmeansMethod::kCdpLaplace, KmeansMethod::kDplloyd,
    KmeansMethod::kDplloydZcdp};

// `o` with the fields every model's options share set: the iterations and
// the privacy (epsilon, delta).
template <typename Options>
Options WithIterationsAndPrivacy(Options o, int iterations, double epsilon, double delta) {
  o.iterations = iterations;
  o.epsilon = epsilon;
  o.delta = delta;
  return o;
}

// A GMM fit of `components` components in `iterations` iterations at
// (epsilon, delta), in the ball of radius `data_norm` about the origin; the
// rest at the library's defaults.
inline GmmFitOptions MakeGmmOptions(int components, int iterations, double epsilon,
                                    double delta, double data_norm) {
  GmmFitOptions o;
  o.components = components;
  o.domain.data_norm = data_norm;
  return WithIterationsAndPrivacy(o, iterations, epsilon, delta);
}

// A k-means fit by `method` of `components` centres in `iterations`
// iterations at (epsilon, delta); the domain is left to the test.
inline KmeansFitOptions MakeKmeansOptions(KmeansMethod method, int components, int iterations,
                                          double epsilon, double delta) {
  KmeansFitOptions o;
  o.components = components;
  o.method = method;
  return WithIterationsAndPrivacy(o, iterations, epsilon, delta);
}

// A gradient EM fit by `method` in `iterations` iterations with the model's
// sigma = 1, at (epsilon, delta), with the robust mean's bound `tau` (kDp,
// kDpEm) and the clipping threshold `clip` (kClipped).
inline GradientEmOptions MakeGradientEmOptions(GradientEmMethod method, int iterations,
                                               double epsilon, double delta, double tau,
                                               double clip) {
  GradientEmOptions o;
  o.method = method;
  o.sigma = 1.0;
  o.tau = tau;
  o.clip = clip;
  return WithIterationsAndPrivacy(o, iterations, epsilon, delta);
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_FIT_OPTIONS_H_
