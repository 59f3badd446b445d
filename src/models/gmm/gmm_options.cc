// The options of a Gaussian-mixture fit: their names, parsers and checks
// (see dpem/models/gmm/private_gmm.h).
#include <cmath>
#include <string>

#include "dpem/models/gmm/private_gmm.h"
#include "internal/enum_names.h"
#include "pipeline/fit_options.h"

namespace dpem {

// The mechanisms' names, in the order ParseGmmMechanisms lists them.
constexpr internal::EnumName<GmmMechanisms> kMechanismsNames[] = {
    {GmmMechanisms::kJoint, "joint"}, {GmmMechanisms::kGgg, "GGG"}, {GmmMechanisms::kLlg, "LLG"}};

std::string_view GmmMechanismsName(GmmMechanisms m) {
  return internal::NameOf(kMechanismsNames, m);
}

StatusOr<GmmMechanisms> ParseGmmMechanisms(std::string_view name) {
  return internal::ParseName(kMechanismsNames, name, "mechanisms");
}

std::string_view GmmInitName(GmmInit init) {
  return internal::NameOf(internal::kStartNames<GmmInit>, init);
}

StatusOr<GmmInit> ParseGmmInit(std::string_view name) {
  return internal::ParseName(internal::kStartNames<GmmInit>, name, "start");
}

double SumsL1Sensitivity(Eigen::Index dimension) {
  return 2.0 * std::sqrt(static_cast<double>(dimension));
}

namespace {

// The conditions of a lighter first iteration (spherical or diagonal), bar
// the option asking for it: both starts give isotropic covariances
// (models/gmm/gmm_init.h), which a spherical or diagonal iteration reads
// without loss.
bool LighterFirstIterationApplies(const GmmFitOptions& o, Eigen::Index dimension) {
  const GmmInit start = o.ResolvedInit();
  return dimension >= kSphericalFirstIterationMinDimension && o.IsPrivate() &&
         o.mechanisms == GmmMechanisms::kJoint && o.component_frames &&
         !o.unsafe_paper_mechanisms && o.ResolvedIterations() >= 2 &&
         (start == GmmInit::kPrivate || start == GmmInit::kRandom);
}

}  // namespace

bool GmmFitOptions::SphericalFirstIteration(Eigen::Index dimension) const {
  return spherical_first_iteration && covariance != CovarianceType::kSpherical &&
         LighterFirstIterationApplies(*this, dimension);
}

CovarianceType GmmFitOptions::FirstIterationCovariance(Eigen::Index dimension) const {
  if (SphericalFirstIteration(dimension)) return CovarianceType::kSpherical;
  if (diagonal_first_iteration && covariance == CovarianceType::kFull &&
      LighterFirstIterationApplies(*this, dimension)) {
    return CovarianceType::kDiagonal;
  }
  return covariance;
}

namespace {

// The model's and the numerics' options: public options only.
Status ValidateModel(const GmmFitOptions& o) {
  DPEM_RETURN_IF_ERROR(
      internal::ValidateCommonFitOptions(o.components, o.iterations, o.epsilon, "EM"));
  if (!(o.covariance_floor >= kMinCovarianceFloor && std::isfinite(o.covariance_floor))) {
    return InvalidArgumentError(
        "covariance floor must be finite and >= 1e-10 (kMinCovarianceFloor; below it a far "
        "record's log-density can overflow)");
  }
  if (!(o.frame_radius >= 0.0 && std::isfinite(o.frame_radius))) {
    return InvalidArgumentError("frame radius must be finite and >= 0 (0: the default)");
  }
  if (!(o.min_component_count > 0.0 && std::isfinite(o.min_component_count))) {
    return InvalidArgumentError("minimum component count must be finite and > 0");
  }
  return OkStatus();
}

// The start: public options only, before any data is read.
Status ValidateInit(const GmmFitOptions& o) {
  if (o.init_max_iterations < 1) {
    return InvalidArgumentError("the k-means++ start needs at least 1 Lloyd iteration");
  }
  switch (o.ResolvedInit()) {
    case GmmInit::kRandom: return OkStatus();
    case GmmInit::kPrivate:
      if (!o.IsPrivate()) {
        return InvalidArgumentError(
            "the private start needs a private fit (a finite epsilon); plain EM starts from "
            "k-means++");
      }
      if (o.components > kMaxPrivateStartComponents) {
        return InvalidArgumentError("the private start serves at most " +
                                    std::to_string(kMaxPrivateStartComponents) +
                                    " components (use the random start)");
      }
      return OkStatus();
    case GmmInit::kKmeansPlusPlus:
      if (!o.IsPrivate()) return OkStatus();
      return InvalidArgumentError(
          "a private fit cannot start from k-means++: it reads the data without noise (use "
          "the random start)");
  }
  return InternalError("unhandled GmmInit");
}

// The privacy options of a private fit: delta, the mechanisms and the domain.
Status ValidatePrivacy(const GmmFitOptions& o) {
  if (!(o.delta > 0.0 && o.delta < 1.0)) return InvalidArgumentError("delta must be in (0, 1)");
  if (!(o.per_release_delta > 0.0 && o.per_release_delta < 1.0)) {
    return InvalidArgumentError("per-release delta must be in (0, 1)");
  }
  if (o.unsafe_paper_mechanisms && o.mechanisms == GmmMechanisms::kJoint) {
    return InvalidArgumentError(
        "the unsafe paper mechanisms replace a per-parameter release: use them with GGG or "
        "LLG");
  }
  if (o.unsafe_paper_mechanisms && o.covariance == CovarianceType::kDiagonal) {
    return InvalidArgumentError(
        "the unsafe paper mechanisms exist for full (Wishart) and spherical (Gamma) "
        "covariances only");
  }
  // A data-derived R is computed (and the guarantee voided) by FitGmm.
  if (o.domain.from_data && !std::isfinite(o.domain.data_norm)) return OkStatus();
  return ValidateModelDomain(o.domain);
}

}  // namespace

Status GmmFitOptions::Validate() const {
  DPEM_RETURN_IF_ERROR(ValidateModel(*this));
  DPEM_RETURN_IF_ERROR(ValidateInit(*this));
  if (static_cast<long long>(ResolvedIterations()) * components >
      kMaxIterationsTimesComponents) {
    return InvalidArgumentError("iterations J x components K must be <= " +
                                std::to_string(kMaxIterationsTimesComponents) +
                                " (the ledger holds J (2K + 1) releases)");
  }
  if (!IsPrivate()) return OkStatus();
  return ValidatePrivacy(*this);
}

}  // namespace dpem
