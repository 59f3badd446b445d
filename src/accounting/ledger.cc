#include "dpem/accounting/ledger.h"

#include <cmath>
#include <string>

#include "internal/enum_names.h"
#include "internal/numeric.h"

namespace dpem {
namespace {

constexpr internal::EnumName<MechanismKind> kMechanismNames[] = {
    {MechanismKind::kLaplace, "laplace"}, {MechanismKind::kGaussian, "gaussian"}};
constexpr internal::EnumName<NoiseSampling> kSamplingNames[] = {
    {NoiseSampling::kDiscrete, "discrete"}, {NoiseSampling::kContinuous, "continuous"}};

}  // namespace

std::string_view MechanismName(MechanismKind kind) {
  return internal::NameOf(kMechanismNames, kind);
}

StatusOr<MechanismKind> ParseMechanismKind(std::string_view name) {
  return internal::ParseName(kMechanismNames, name, "mechanism");
}

std::string_view NoiseSamplingName(NoiseSampling sampling) {
  return internal::NameOf(kSamplingNames, sampling);
}

StatusOr<NoiseSampling> ParseNoiseSampling(std::string_view name) {
  return internal::ParseName(kSamplingNames, name, "noise sampling");
}

std::string_view Release::SensitivityNorm() const {
  return mechanism == MechanismKind::kLaplace ? "L1" : "L2";
}

Status ValidateRelease(const Release& release) {
  const std::string where = "release '" + release.label + "': ";
  DPEM_RETURN_IF_ERROR(internal::CheckFinitePositive(release.sensitivity, where + "sensitivity"));
  return internal::CheckFinitePositive(release.noise_scale, where + "noise scale");
}

Status PrivacyLedger::Record(Release release) {
  DPEM_RETURN_IF_ERROR(ValidateRelease(release));
  releases_.push_back(std::move(release));
  return OkStatus();
}

Status PrivacyLedger::RecordRepeated(const Release& release, std::size_t count) {
  DPEM_RETURN_IF_ERROR(ValidateRelease(release));
  releases_.insert(releases_.end(), count, release);
  return OkStatus();
}

std::vector<ReleaseGroup> PrivacyLedger::Groups() const {
  std::vector<ReleaseGroup> groups;
  for (const Release& r : releases_) {
    const double z = r.NoiseMultiplier();
    bool found = false;
    for (ReleaseGroup& g : groups) {
      if (g.mechanism == r.mechanism && g.sampling == r.sampling && g.noise_multiplier == z) {
        ++g.count;
        found = true;
        break;
      }
    }
    if (!found) groups.push_back({r.mechanism, z, 1, r.sampling});
  }
  return groups;
}

}  // namespace dpem
