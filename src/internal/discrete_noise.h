// The floating-point-safe (discrete) additive noise shared by the mechanisms
// (additive_noise.h, analyze_gauss.h): the grid rule, the sensitivity charge
// of the rounding, and the noise itself. Private: a caller must record the
// Release that PlanDiscreteGrid describes (sensitivity, noise_scale) in the
// same call that adds the noise.
#ifndef DPEM_INTERNAL_DISCRETE_NOISE_H_
#define DPEM_INTERNAL_DISCRETE_NOISE_H_

#include <Eigen/Core>
#include <cstdint>

#include "dpem/accounting/ledger.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"
#include "engine/exact_sum.h"

namespace dpem::internal {

// The grid of one discrete release (see additive_noise.h, "Discrete noise").
struct DiscreteGrid {
  double granularity = 0.0;        // g, a power of two.
  double sensitivity = 0.0;        // Delta' = the charged sensitivity (rounded up).
  std::uint64_t scale_units = 0;   // Noise scale in units of g.
  double noise_scale = 0.0;        // scale_units * g (exact).
};

// Plans a release of `coordinates` values with `mechanism`, `sensitivity`
// and `noise_multiplier` already validated (> 0, finite). `input_quantum`
// bounds, per coordinate of the released vector, the rounding of the exact
// sums the values come from (engine/exact_sum.h: kExactSumQuantum times the
// coordinate's scale factor; >= 0). The charged sensitivity is
//   Delta' = Delta (1 + kComputedSumMargin) + (input_quantum +
//            kRoundingChargeFactor g) n(m),
// n(m) = sqrt(m) (L2) or m (L1): see additive_noise.h, "Discrete noise". The
// plan depends on these public quantities only, never on the values.
// InvalidArgument if the grid would underflow or the scale in grid units
// exceed kMaxDiscreteNoiseScale.
StatusOr<DiscreteGrid> PlanDiscreteGrid(MechanismKind mechanism, double sensitivity,
                                        double noise_multiplier, Eigen::Index coordinates,
                                        double input_quantum);

// The grid of a release of `coordinates` values by `spec` (already
// validated) whose values are exact sums (engine/exact_sum.h): the plan
// above with the sums' quantum kExactSumQuantum. What ReleaseVector,
// ReleaseMatrix and ReleaseSymmetric use.
StatusOr<DiscreteGrid> PlanDiscreteGrid(const NoiseSpec& spec, Eigen::Index coordinates);

// x_i <- g (round(clamp(x_i / g, +-2^kDiscreteValueBits)) + N_i), N_i i.i.d. discrete Laplace (kLaplace) or
// discrete Gaussian (kGaussian) with scale grid.scale_units. Cannot fail for
// a grid from PlanDiscreteGrid on the same values.
void AddDiscreteNoise(Eigen::Ref<Eigen::VectorXd> x, MechanismKind mechanism,
                      const DiscreteGrid& grid, Generator& gen);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_DISCRETE_NOISE_H_
