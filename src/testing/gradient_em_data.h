// Test support for the gradient EM tests: data of a model from
// GenerateGradientEmData at SNR 3 with sigma = 1, and the log-likelihood of
// a record written out from the model's densities. Not part of the library.
#ifndef DPEM_TESTING_GRADIENT_EM_DATA_H_
#define DPEM_TESTING_GRADIENT_EM_DATA_H_

#include <cmath>
#include <cstdint>
#include <numbers>

#include "dpem/data/generators.h"
#include "dpem/random/generator.h"

namespace dpem::test_support {

// `n` records in `d` dimensions of `model` (covariates missing with
// probability `pm`, rmc) from a generator seeded with `seed`.
inline GeneratedData MakeGradientEmData(GradientEmModel model, Eigen::Index n, Eigen::Index d,
                                        double pm, std::uint64_t seed) {
  GeneratorOptions o;
  o.model = model;
  o.n = n;
  o.d = d;
  o.snr = 3.0;
  o.sigma = 1.0;
  o.missing_prob = pm;
  Generator gen = Generator::FromSeed(seed);
  return *GenerateGradientEmData(o, gen);
}

// The normal density N(y; mean, variance).
inline double NormalDensity(double y, double mean, double variance) {
  return std::exp(-(y - mean) * (y - mean) / (2 * variance)) /
         std::sqrt(2 * std::numbers::pi * variance);
}

// The log-likelihood of `record`, laid out as the fit reads it (gmm
// y_1..y_d; mrm y, x_1..x_d; rmc y, x_1..x_d, z_1..z_d), under beta and
// sigma: the model's density written out term by term, the reference of
// the library's GradientEmLogLikelihoods. Moderate values only (far from
// the means it underflows to -inf).
inline double NaiveGradientEmLogLikelihood(GradientEmModel model, const Eigen::VectorXd& record,
                                           const Eigen::VectorXd& beta, double sigma) {
  const double s2 = sigma * sigma;
  const Eigen::Index d = beta.size();
  if (model == GradientEmModel::kGmm) {
    double plus = 0.5, minus = 0.5;
    for (Eigen::Index j = 0; j < d; ++j) {
      plus *= NormalDensity(record(j), beta(j), s2);
      minus *= NormalDensity(record(j), -beta(j), s2);
    }
    return std::log(plus + minus);
  }
  const double y = record(0);
  double mean = 0.0, variance = s2;
  for (Eigen::Index j = 0; j < d; ++j) {
    const bool observed = model == GradientEmModel::kMrm || record(1 + d + j) == 1.0;
    mean += observed ? record(1 + j) * beta(j) : 0.0;
    variance += observed ? 0.0 : beta(j) * beta(j);
  }
  if (model == GradientEmModel::kRmc) return std::log(NormalDensity(y, mean, variance));
  return std::log(0.5 * NormalDensity(y, mean, s2) + 0.5 * NormalDensity(y, -mean, s2));
}

}  // namespace dpem::test_support

#endif  // DPEM_TESTING_GRADIENT_EM_DATA_H_
