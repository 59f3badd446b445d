// Samplers for the noise distributions of dpem's mechanisms.
//
// Each takes the Generator to draw from; none keeps state between calls. These
// are continuous (floating-point) samplers: the floating-point-safe discrete
// samplers that defend against Mironov's (2012) attack are separate.
//
// Preconditions are checked: a sampler whose parameters are invalid (a
// non-positive or non-finite scale, a dimension mismatch, a non-positive
// definite scale matrix) returns an InvalidArgument status rather than a
// value. The scalar samplers that cannot fail once their parameters are valid
// come in two forms: a checked one returning StatusOr<double>, and an unchecked
// inline-able `...Unchecked` one for inner loops whose caller has validated.
//
// Thread safety: as safe as the Generator passed in (one per thread).
#ifndef DPEM_RANDOM_SAMPLERS_H_
#define DPEM_RANDOM_SAMPLERS_H_

#include <Eigen/Core>

#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// A standard normal N(0, 1) draw (Marsaglia's polar method on UniformOpen01).
double SampleStandardNormal(Generator& gen);

// N(0, stddev^2). Requires stddev > 0 and finite.
StatusOr<double> SampleGaussian(Generator& gen, double stddev);

// Laplace(0, scale): density exp(-|x|/scale) / (2 scale). Requires scale > 0
// and finite. Inverse-CDF method on UniformOpen01.
StatusOr<double> SampleLaplace(Generator& gen, double scale);
double SampleLaplaceUnchecked(Generator& gen, double scale);

// Gamma(shape, scale): density x^(shape-1) exp(-x/scale) / (Gamma(shape)
// scale^shape), mean shape*scale. Requires shape > 0 and scale > 0, both
// finite. Marsaglia and Tsang (2000), with the shape < 1 boost.
StatusOr<double> SampleGamma(Generator& gen, double shape, double scale);

// A vector of `n` i.i.d. N(0, stddev^2) draws. Requires n >= 0, stddev > 0.
StatusOr<Eigen::VectorXd> SampleGaussianVector(Generator& gen, Eigen::Index n,
                                               double stddev);

// A vector of `n` i.i.d. Laplace(0, scale) draws. Requires n >= 0, scale > 0.
StatusOr<Eigen::VectorXd> SampleLaplaceVector(Generator& gen, Eigen::Index n,
                                              double scale);

// A symmetric d x d matrix whose entries on and above the diagonal are i.i.d.
// N(0, stddev^2) and whose lower triangle mirrors the upper one: the noise of
// the Analyze Gauss mechanism (Dwork, Talwar, Thakurta, Zhang, STOC 2014).
// Requires d >= 1, stddev > 0.
StatusOr<Eigen::MatrixXd> SampleSymmetricGaussianMatrix(Generator& gen,
                                                        Eigen::Index d,
                                                        double stddev);

// A draw from the Wishart distribution W_d(dof, scale): the law of
// sum_{i<dof} z_i z_i^T with z_i ~ N(0, scale), generalised to real
// dof > d - 1 by the Bartlett decomposition (Gamma-distributed diagonal).
// Requires `scale` symmetric positive definite (checked by Cholesky) and
// dof > d - 1. Used only by the park2016 Wishart mechanism, which is not
// differentially private (see docs/privacy.md); kept for reproduction.
StatusOr<Eigen::MatrixXd> SampleWishart(Generator& gen, double dof,
                                        const Eigen::MatrixXd& scale);

}  // namespace dpem

#endif  // DPEM_RANDOM_SAMPLERS_H_
