#include "dpem/mechanisms/additive_noise.h"

#include <cmath>
#include <string>

#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"

namespace dpem {
namespace {

bool PositiveFinite(double x) { return std::isfinite(x) && x > 0.0; }

std::string Where(const NoiseSpec& spec) {
  return "release '" + spec.label + "'";
}

// Non-empty and all entries finite.
template <typename Derived>
Status CheckFiniteNonEmpty(const Eigen::DenseBase<Derived>& value,
                           const NoiseSpec& spec) {
  if (value.size() == 0) {
    return InvalidArgumentError(Where(spec) +
                                ": the value to release is empty");
  }
  if (!value.allFinite()) {
    return InvalidArgumentError(Where(spec) +
                                ": the value to release has a NaN or "
                                "infinite entry");
  }
  return OkStatus();
}

// `n` i.i.d. draws of the noise `spec` calls for.
StatusOr<Eigen::VectorXd> DrawNoise(const NoiseSpec& spec, Eigen::Index n,
                                    Generator& gen) {
  const double scale = spec.NoiseScale();
  if (spec.mechanism == MechanismKind::kLaplace) {
    return SampleLaplaceVector(gen, n, scale);
  }
  return SampleGaussianVector(gen, n, scale);
}

// The discrete release (see the header): plans the grid, records the charged
// release, then rounds and adds the integer noise.
template <typename RefType>
Status ReleaseDiscrete(RefType& value, const NoiseSpec& spec, Generator& gen,
                       PrivacyLedger& ledger) {
  DPEM_ASSIGN_OR_RETURN(
      const internal::DiscreteGrid grid,
      internal::PlanDiscreteGrid(spec, value.size()));
  DPEM_RETURN_IF_ERROR(ledger.Record(
      Release{spec.mechanism, grid.sensitivity, grid.noise_scale, spec.label}));
  Eigen::VectorXd flat = value.reshaped();
  internal::AddDiscreteNoise(flat, spec.mechanism, grid, gen);
  value = flat.reshaped(value.rows(), value.cols());
  return OkStatus();
}

// Validates, draws, records, and only then adds: a failure at any step
// leaves `value` and `ledger` as they were.
template <typename RefType>
Status ReleaseInPlace(RefType& value, const NoiseSpec& spec, Generator& gen,
                      PrivacyLedger& ledger) {
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(spec));
  DPEM_RETURN_IF_ERROR(CheckFiniteNonEmpty(value, spec));
  if (spec.sampling == NoiseSampling::kDiscrete) {
    return ReleaseDiscrete(value, spec, gen, ledger);
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd noise,
                        DrawNoise(spec, value.size(), gen));
  DPEM_RETURN_IF_ERROR(ledger.Record(Release{spec.mechanism, spec.sensitivity,
                                             spec.NoiseScale(), spec.label,
                                             NoiseSampling::kContinuous}));
  value += noise.reshaped(value.rows(), value.cols());
  return OkStatus();
}

}  // namespace

Status ValidateNoiseSpec(const NoiseSpec& spec) {
  if (spec.mechanism != MechanismKind::kLaplace &&
      spec.mechanism != MechanismKind::kGaussian) {
    return InvalidArgumentError(Where(spec) + ": unknown mechanism kind");
  }
  if (spec.sampling != NoiseSampling::kDiscrete &&
      spec.sampling != NoiseSampling::kContinuous) {
    return InvalidArgumentError(Where(spec) + ": unknown noise sampling");
  }
  if (!PositiveFinite(spec.sensitivity)) {
    return InvalidArgumentError(Where(spec) +
                                ": sensitivity must be finite and > 0");
  }
  if (!PositiveFinite(spec.noise_multiplier)) {
    return InvalidArgumentError(Where(spec) +
                                ": noise multiplier must be finite and > 0");
  }
  if (!PositiveFinite(spec.NoiseScale())) {
    return InvalidArgumentError(
        Where(spec) +
        ": noise scale sensitivity * multiplier overflows or underflows");
  }
  return OkStatus();
}

Status CheckRelease(const NoiseSpec& spec, Eigen::Index coordinates) {
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(spec));
  if (coordinates < 1) return InvalidArgumentError(Where(spec) + ": nothing to release");
  if (spec.sampling == NoiseSampling::kDiscrete) {
    DPEM_RETURN_IF_ERROR(internal::PlanDiscreteGrid(spec, coordinates).status());
  }
  return OkStatus();
}

Status ReleaseVector(Eigen::Ref<Eigen::VectorXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger) {
  return ReleaseInPlace(value, spec, gen, ledger);
}

Status ReleaseMatrix(Eigen::Ref<Eigen::MatrixXd> value, const NoiseSpec& spec,
                     Generator& gen, PrivacyLedger& ledger) {
  return ReleaseInPlace(value, spec, gen, ledger);
}

}  // namespace dpem
