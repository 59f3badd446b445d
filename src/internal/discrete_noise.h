// The floating-point-safe (discrete) additive noise shared by the mechanisms
// (additive_noise.h, analyze_gauss.h): the grid rule, the sensitivity charge
// of the rounding, and the noise itself. Private: a caller must record the
// Release that PlanDiscreteGrid describes (sensitivity, noise_scale) in the
// same call that adds the noise.
#ifndef DPEM_INTERNAL_DISCRETE_NOISE_H_
#define DPEM_INTERNAL_DISCRETE_NOISE_H_

#include <Eigen/Core>
#include <cstdint>
#include <functional>

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

// g (round(clamp(x / g, +-2^kDiscreteValueBits)) + N), N discrete Laplace
// (kLaplace) or discrete Gaussian (kGaussian) with scale grid.scale_units,
// drawn from `gen`: one coordinate of AddDiscreteNoise.
double WithDiscreteNoise(double x, MechanismKind mechanism, const DiscreteGrid& grid,
                         Generator& gen);

// Coordinates per noise stream of a chunked release (ForEachNoiseChunk): a
// constant, so that the chunks, and the noise a seeded generator gives, do not
// depend on the number of threads.
inline constexpr Eigen::Index kNoiseChunkCoordinates = Eigen::Index{1} << 16;

// What a chunked release does with one chunk: the chunk's own stream, and its
// coordinates [begin, end).
using NoiseChunkFunction = std::function<void(Generator& stream, Eigen::Index begin,
                                              Eigen::Index end)>;

// Calls fn once per chunk [c C, min((c + 1) C, coordinates)), C =
// kNoiseChunkCoordinates, on up to `threads` threads (>= 1; the chunks run in
// parallel, in any order). Chunk c draws from release.Split(c), where
// release = gen.Fork() is made once per call: a call advances `gen` by the
// four words of the fork, so every call (every release) has fresh streams,
// distinct from each other, from every other call's and from gen's later
// words, and a seeded generator gives the same noise for any thread count.
// fn must write only its own chunk's coordinates.
void ForEachNoiseChunk(Eigen::Index coordinates, int threads, Generator& gen,
                       const NoiseChunkFunction& fn);

// x_i <- g (round(clamp(x_i / g, +-2^kDiscreteValueBits)) + N_i), N_i i.i.d. discrete Laplace (kLaplace) or
// discrete Gaussian (kGaussian) with scale grid.scale_units. Cannot fail for
// a grid from PlanDiscreteGrid on the same values.
void AddDiscreteNoise(Eigen::Ref<Eigen::VectorXd> x, MechanismKind mechanism,
                      const DiscreteGrid& grid, Generator& gen);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_DISCRETE_NOISE_H_
