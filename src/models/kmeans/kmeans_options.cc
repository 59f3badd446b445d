// The options of a k-means fit: their names, parsers, resolved defaults and
// checks, and the sensitivities of its releases (see
// dpem/models/kmeans/kmeans.h).
#include <cmath>
#include <string>

#include "dpem/models/kmeans/kmeans.h"
#include "internal/enum_names.h"
#include "pipeline/fit_options.h"

namespace dpem {

// The methods' names, in the order ParseKmeansMethod lists them.
constexpr internal::EnumName<KmeansMethod> kMethodNames[] = {
    {KmeansMethod::kCdpLaplace, "cdp-laplace"}, {KmeansMethod::kCdpGauss, "cdp-gauss"},
    {KmeansMethod::kDplloyd, "dplloyd"}, {KmeansMethod::kDplloydZcdp, "dplloyd-zcdp"}};

std::string_view KmeansMethodName(KmeansMethod method) {
  return internal::NameOf(kMethodNames, method);
}

StatusOr<KmeansMethod> ParseKmeansMethod(std::string_view name) {
  return internal::ParseName(kMethodNames, name, "k-means method");
}

bool KmeansMethodNeedsDelta(KmeansMethod method) { return method != KmeansMethod::kDplloyd; }

double KmeansSumsL1Sensitivity(Eigen::Index dimension) {
  return 2.0 * std::sqrt(static_cast<double>(dimension));
}

double KmeansJointL1Sensitivity(Eigen::Index dimension) {
  return kKmeansCountsL1Sensitivity + KmeansSumsL1Sensitivity(dimension);
}

AccountantKind KmeansFitOptions::EffectiveAccountant() const {
  if (method == KmeansMethod::kDplloyd) return AccountantKind::kLinear;
  if (method == KmeansMethod::kDplloydZcdp) return AccountantKind::kZcdp;
  return accountant;
}

std::string_view KmeansInitName(KmeansInit init) {
  return internal::NameOf(internal::kStartNames<KmeansInit>, init);
}

StatusOr<KmeansInit> ParseKmeansInit(std::string_view name) {
  return internal::ParseName(internal::kStartNames<KmeansInit>, name, "seeding");
}

bool KmeansMethodHasPrivateStart(KmeansMethod method) {
  return method == KmeansMethod::kCdpGauss || method == KmeansMethod::kCdpLaplace;
}

int KmeansFitOptions::ResolvedIterations() const {
  if (iterations > 0) return iterations;
  return DefaultIterations(IsPrivate(), StartsPrivately());
}

bool KmeansFitOptions::StartsPrivately() const {
  return initial_centres.size() == 0 && ResolvedInit() == KmeansInit::kPrivate;
}

KmeansInit KmeansFitOptions::ResolvedInit() const {
  if (init) return *init;
  if (!IsPrivate()) return KmeansInit::kKmeansPlusPlus;
  return KmeansMethodHasPrivateStart(method) && PrivateStartByDefault(components)
             ? KmeansInit::kPrivate
             : KmeansInit::kRandom;
}

namespace {

// The model's options and the public centres, for any fit.
Status ValidateModel(const KmeansFitOptions& o) {
  DPEM_RETURN_IF_ERROR(
      internal::ValidateCommonFitOptions(o.components, o.iterations, o.epsilon, "Lloyd"));
  if (!(o.min_cluster_count > 0.0 && std::isfinite(o.min_cluster_count))) {
    return InvalidArgumentError("minimum cluster count must be finite and > 0");
  }
  if (o.initial_centres.size() != 0 &&
      (o.initial_centres.rows() != o.components || !o.initial_centres.allFinite())) {
    return InvalidArgumentError("initial centres must be K finite rows");
  }
  return OkStatus();
}

// The seeding of a private fit: the private start for the methods that have
// it, without public centres, for at most kMaxPrivateStartComponents; never
// k-means++.
Status ValidatePrivateSeeding(const KmeansFitOptions& o) {
  if (o.init == KmeansInit::kPrivate && !KmeansMethodHasPrivateStart(o.method)) {
    return InvalidArgumentError("method " + std::string(KmeansMethodName(o.method)) +
                                " is the published DPLloyd baseline, which starts at random: "
                                "the private start is for cdp-gauss and cdp-laplace");
  }
  if (o.init == KmeansInit::kPrivate && o.initial_centres.size() != 0) {
    return InvalidArgumentError("give either initial centres or the private start, not both");
  }
  if (o.init == KmeansInit::kPrivate && o.components > kMaxPrivateStartComponents) {
    return InvalidArgumentError("the private start serves at most " +
                                std::to_string(kMaxPrivateStartComponents) +
                                " components (use the random start)");
  }
  if (o.init == KmeansInit::kKmeansPlusPlus) {
    return InvalidArgumentError(
        "a private fit cannot seed by k-means++: it reads the data without noise (use the "
        "random seeding)");
  }
  return OkStatus();
}

}  // namespace

Status KmeansFitOptions::Validate() const {
  DPEM_RETURN_IF_ERROR(ValidateModel(*this));
  if (init == KmeansInit::kPrivate && !IsPrivate()) {
    return InvalidArgumentError(
        "the private start needs a private fit (a finite epsilon); plain Lloyd seeds by "
        "k-means++");
  }
  if (!IsPrivate()) return OkStatus();
  DPEM_RETURN_IF_ERROR(ValidatePrivateSeeding(*this));
  if (KmeansMethodNeedsDelta(method) && !(delta > 0.0 && delta < 1.0)) {
    return InvalidArgumentError("delta must be in (0, 1) for method " +
                                std::string(KmeansMethodName(method)));
  }
  if (domain.from_data && !std::isfinite(domain.data_norm)) return OkStatus();
  return ValidateModelDomain(domain);
}

}  // namespace dpem
