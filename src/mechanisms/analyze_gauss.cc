#include "dpem/mechanisms/analyze_gauss.h"

#include <cmath>
#include <limits>
#include <string>

#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"
#include "internal/linear_algebra.h"

namespace dpem {
namespace {

// (A + A^T) / 2, exactly symmetric: entry (i, j) and (j, i) are computed by
// the same floating-point sum.
Eigen::MatrixXd Symmetrised(const Eigen::Ref<const Eigen::MatrixXd>& a) {
  Eigen::MatrixXd out(a.rows(), a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) {
      out(i, j) = 0.5 * (a(i, j) + a(j, i));
      out(j, i) = out(i, j);
    }
  }
  return out;
}

// The discrete Analyze Gauss (additive_noise.h, "Discrete noise"): the upper
// triangle u(A) (m = d(d+1)/2 coordinates) rounded to the grid, plus discrete
// Gaussian noise, mirrored. Records the charged release first.
Status ReleaseSymmetricDiscrete(Eigen::Ref<Eigen::MatrixXd> value, const NoiseSpec& spec,
                                Generator& gen, PrivacyLedger& ledger) {
  const Eigen::MatrixXd sym = Symmetrised(value);
  const Eigen::Index d = sym.rows();
  Eigen::VectorXd upper(d * (d + 1) / 2);
  for (Eigen::Index j = 0, k = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) upper[k++] = sym(i, j);
  }
  DPEM_ASSIGN_OR_RETURN(
      const internal::DiscreteGrid grid,
      internal::PlanDiscreteGrid(spec, upper.size()));
  DPEM_RETURN_IF_ERROR(ledger.Record(
      Release{MechanismKind::kGaussian, grid.sensitivity, grid.noise_scale, spec.label}));
  internal::AddDiscreteNoise(upper, MechanismKind::kGaussian, grid, gen);
  for (Eigen::Index j = 0, k = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i <= j; ++i, ++k) value(i, j) = value(j, i) = upper[k];
  }
  return OkStatus();
}

}  // namespace

Status ValidateSymmetricMatrix(const Eigen::Ref<const Eigen::MatrixXd>& matrix,
                               std::string_view what) {
  const std::string name(what);
  if (matrix.size() == 0) return InvalidArgumentError(name + " is empty");
  if (matrix.rows() != matrix.cols()) {
    return InvalidArgumentError(name + " is not square (" +
                                std::to_string(matrix.rows()) + " x " +
                                std::to_string(matrix.cols()) + ")");
  }
  if (!matrix.allFinite()) {
    return InvalidArgumentError(name + " has a NaN or infinite entry");
  }
  const double max_abs = matrix.cwiseAbs().maxCoeff();
  const double asymmetry = (matrix - matrix.transpose()).cwiseAbs().maxCoeff();
  if (asymmetry > kSymmetryRelativeTolerance * max_abs) {
    return InvalidArgumentError(name + " is not symmetric (max |A - A^T| = " +
                                std::to_string(asymmetry) + ")");
  }
  return OkStatus();
}

Status ReleaseSymmetric(Eigen::Ref<Eigen::MatrixXd> value,
                        const NoiseSpec& spec, Generator& gen,
                        PrivacyLedger& ledger) {
  DPEM_RETURN_IF_ERROR(ValidateNoiseSpec(spec));
  if (spec.mechanism != MechanismKind::kGaussian) {
    return InvalidArgumentError("release '" + spec.label +
                                "': Analyze Gauss needs a Gaussian spec");
  }
  DPEM_RETURN_IF_ERROR(
      ValidateSymmetricMatrix(value, "release '" + spec.label + "': matrix"));
  if (spec.sampling == NoiseSampling::kDiscrete) {
    return ReleaseSymmetricDiscrete(value, spec, gen, ledger);
  }
  DPEM_ASSIGN_OR_RETURN(
      Eigen::MatrixXd noise,
      SampleSymmetricGaussianMatrix(gen, value.rows(), spec.NoiseScale()));
  Eigen::MatrixXd released = Symmetrised(value) + noise;
  DPEM_RETURN_IF_ERROR(
      ledger.Record(Release{MechanismKind::kGaussian, spec.sensitivity,
                            spec.NoiseScale(), spec.label, NoiseSampling::kContinuous}));
  value = released;
  return OkStatus();
}

StatusOr<Eigen::MatrixXd> ProjectToEigenvalueFloor(const Eigen::MatrixXd& sym,
                                                   double floor) {
  if (!(std::isfinite(floor) && floor > 0.0)) {
    return InvalidArgumentError(
        "ProjectToEigenvalueFloor: floor must be finite and > 0");
  }
  DPEM_RETURN_IF_ERROR(
      ValidateSymmetricMatrix(sym, "ProjectToEigenvalueFloor: matrix"));
  return internal::ClampEigenvalues(sym, floor, std::numeric_limits<double>::infinity());
}

}  // namespace dpem
