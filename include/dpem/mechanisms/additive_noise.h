// Additive noise mechanisms: Laplace and Gaussian noise on vectors and
// matrices of statistics, recorded in a PrivacyLedger in the same call.
//
// Principle of the whole mechanisms layer: a mechanism calibrates, draws its
// noise from the injected Generator, adds it AND records the release; there is
// no way to obtain noise that is not in the ledger. A call that fails records
// nothing and leaves its input unchanged.
//
// Calibration (park2016 Sec. 4.2, eq. 13 and 15; park2017 Sec. 4.2, eq. 13-15):
//   Laplace:  Y_i ~ i.i.d. Lap(b),        b = Delta_1 * noise_multiplier
//             (noise_multiplier = 1/epsilon gives the epsilon-DP Laplace
//              mechanism, Dwork and Roth 2014, Thm. 3.6);
//   Gaussian: Y_i ~ i.i.d. N(0, sigma^2), sigma = Delta_2 * noise_multiplier
//             (park2017 sets sigma^2 >= 2 log(1.25/delta) Delta_2^2 / eps^2,
//              i.e. noise_multiplier = sqrt(2 log(1.25/delta)) / eps; dpem's
//              accountants derive (eps, delta) from the multiplier instead).
// Sensitivities are for the replace-one neighbour relation (ledger.h).
//
// These are continuous floating-point samplers (see samplers.h on Mironov's
// 2012 attack).
//
// Thread safety: as safe as the Generator and ledger passed in.
#ifndef DPEM_MECHANISMS_ADDITIVE_NOISE_H_
#define DPEM_MECHANISMS_ADDITIVE_NOISE_H_

#include <Eigen/Core>
#include <string>

#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// What to release and how much noise to add.
struct NoiseSpec {
  MechanismKind mechanism = MechanismKind::kGaussian;
  // Sensitivity of the WHOLE released quantity under replace-one, in the
  // mechanism's norm: L1 for Laplace, L2 (Frobenius for matrices) for
  // Gaussian.
  double sensitivity = 0.0;
  // Noise scale per unit of sensitivity (1/epsilon for epsilon-DP Laplace).
  double noise_multiplier = 0.0;
  // What is released, e.g. "iteration 3 / means"; copied into the ledger.
  std::string label;

  // Laplace scale b or Gaussian standard deviation sigma of every coordinate's
  // noise: sensitivity * noise_multiplier (park2016 eq. 13/15).
  double NoiseScale() const { return sensitivity * noise_multiplier; }
};

// Checks `spec`: a known mechanism, finite sensitivity > 0, finite
// noise_multiplier > 0, and a finite NoiseScale() > 0 (the product can
// overflow or underflow). InvalidArgument otherwise.
Status ValidateNoiseSpec(const NoiseSpec& spec);

// Adds i.i.d. Laplace(0, b) (spec.mechanism == kLaplace) or N(0, sigma^2)
// (kGaussian) noise, scale spec.NoiseScale(), to every coordinate of `value`
// in place, and records ONE Release{mechanism, sensitivity, NoiseScale(),
// label} in `ledger` (park2016 eq. 13, 15; park2017 eq. 13-15). `value` must
// be non-empty and finite. On error nothing is recorded and `value` is
// unchanged; a validation error also draws nothing from `gen`.
Status ReleaseVector(Eigen::Ref<Eigen::VectorXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger);

// As ReleaseVector, for every entry of a matrix released as ONE mechanism
// (e.g. the K x d block of weighted sums of all components): spec.sensitivity
// must bound the change of the whole block (L1 over all entries for Laplace,
// Frobenius for Gaussian). Same calibration, recording and error behaviour.
Status ReleaseMatrix(Eigen::Ref<Eigen::MatrixXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_ADDITIVE_NOISE_H_
