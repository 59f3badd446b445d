// Discrete (floating-point-safe) additive noise. See internal/discrete_noise.h
// and the "Discrete noise" section of dpem/mechanisms/additive_noise.h.
#include "internal/discrete_noise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "dpem/mechanisms/additive_noise.h"
#include "dpem/random/discrete_samplers.h"
#include "internal/parallel_for.h"

namespace dpem::internal {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The largest power of two <= x (x > 0, finite).
double PowerOfTwoFloor(double x) {
  int exponent = 0;
  std::frexp(x, &exponent);  // x = m 2^exponent, m in [0.5, 1).
  return std::ldexp(1.0, exponent - 1);
}

}  // namespace

StatusOr<DiscreteGrid> PlanDiscreteGrid(MechanismKind mechanism, double sensitivity,
                                        double noise_multiplier, Eigen::Index coordinates,
                                        double input_quantum) {
  // The grid depends on the public sensitivity and multiplier only, never on
  // the values released (a data-dependent grid would make the recorded
  // sensitivity, and so the noise, depend on the data).
  DiscreteGrid grid;
  const double nominal = sensitivity * noise_multiplier;
  grid.granularity = std::ldexp(PowerOfTwoFloor(nominal), -kDiscreteGridBits);
  if (!(grid.granularity >= std::numeric_limits<double>::min())) {
    return InvalidArgumentError("discrete noise: the grid granularity underflows");
  }
  const double m = static_cast<double>(coordinates);
  const double per_norm = mechanism == MechanismKind::kLaplace ? m : std::sqrt(m);
  if (!(input_quantum >= 0.0 && std::isfinite(input_quantum))) {
    return InvalidArgumentError("discrete noise: the input quantum must be finite and >= 0");
  }
  const double computed = sensitivity * (1.0 + kComputedSumMargin);
  const double charge = (input_quantum + kRoundingChargeFactor * grid.granularity) * per_norm;
  // Two roundings up cover the two additions' own rounding.
  grid.sensitivity = std::nextafter(std::nextafter(computed + charge, kInfinity), kInfinity);
  const double units =
      std::ceil(std::nextafter(noise_multiplier * grid.sensitivity / grid.granularity, kInfinity));
  if (!(units <= static_cast<double>(kMaxDiscreteNoiseScale))) {
    return InvalidArgumentError(
        "discrete noise: the rounding charge is too large for the grid (" +
        std::to_string(coordinates) + " coordinates); raise the noise multiplier or release fewer "
        "coordinates at once");
  }
  grid.scale_units = static_cast<std::uint64_t>(units);
  grid.noise_scale = units * grid.granularity;
  return grid;
}

StatusOr<DiscreteGrid> PlanDiscreteGrid(const NoiseSpec& spec, Eigen::Index coordinates) {
  return PlanDiscreteGrid(spec.mechanism, spec.sensitivity, spec.noise_multiplier, coordinates,
                          kExactSumQuantum);
}

double WithDiscreteNoise(double x, MechanismKind mechanism, const DiscreteGrid& grid,
                         Generator& gen) {
  const double limit = std::ldexp(1.0, kDiscreteValueBits);
  // Clamping to +-2^kDiscreteValueBits grid units is a contraction of each
  // coordinate, so it cannot raise the sensitivity; it keeps every sum
  // below exactly representable integers.
  const double scaled = std::clamp(x / grid.granularity, -limit, limit);
  const StatusOr<std::int64_t> noise = mechanism == MechanismKind::kLaplace
                                           ? SampleDiscreteLaplace(gen, grid.scale_units)
                                           : SampleDiscreteGaussian(gen, grid.scale_units);
  const double units = std::nearbyint(scaled) + static_cast<double>(*noise);
  return units * grid.granularity;
}

void ForEachNoiseChunk(Eigen::Index coordinates, int threads, Generator& gen,
                       const NoiseChunkFunction& fn) {
  // One fork per release: splitting gen itself would give the next release
  // the same streams (Split does not advance gen).
  const Generator release = gen.Fork();
  const Eigen::Index chunks = (coordinates + kNoiseChunkCoordinates - 1) / kNoiseChunkCoordinates;
  // Chunk c's noise is a function of (release, c) alone, so the schedule
  // does not matter; dynamic scheduling evens out the chunks' random costs.
  ParallelFor(chunks, threads, [&](Eigen::Index c) {
    Generator stream = release.Split(static_cast<std::uint64_t>(c));
    const Eigen::Index begin = c * kNoiseChunkCoordinates;
    fn(stream, begin, std::min(begin + kNoiseChunkCoordinates, coordinates));
  });
}

void AddDiscreteNoise(Eigen::Ref<Eigen::VectorXd> x, MechanismKind mechanism,
                      const DiscreteGrid& grid, Generator& gen) {
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = WithDiscreteNoise(x[i], mechanism, grid, gen);
}

}  // namespace dpem::internal
