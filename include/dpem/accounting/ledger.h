// The privacy ledger: the record of every noisy release a computation made.
//
// Mechanisms calibrate and release; each release is recorded here with its
// mechanism, its sensitivity (in the norm the mechanism needs) and the scale
// of the noise actually added. Accountants (accountant.h) read a ledger and
// turn it into an (epsilon, delta) guarantee; nothing else decides what a
// computation cost. Counting happens where releases happen: a release that is
// not in the ledger was not charged, so code that releases must record.
//
// Neighbouring data sets: replace one record (the data set size N is public),
// as in the papers. All sensitivities in a ledger are for that relation.
//
// Thread safety: a ledger is a value; concurrent Record() calls on one ledger
// need external synchronisation.
#ifndef DPEM_ACCOUNTING_LEDGER_H_
#define DPEM_ACCOUNTING_LEDGER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dpem/status.h"

namespace dpem {

// The additive noise mechanisms whose privacy dpem's accountants know.
enum class MechanismKind {
  kLaplace,   // i.i.d. Laplace(0, b) per coordinate; L1 sensitivity.
  kGaussian,  // i.i.d. N(0, sigma^2) per coordinate; L2 sensitivity.
};

// "laplace" or "gaussian".
std::string_view MechanismName(MechanismKind kind);
// Parses "laplace" / "gaussian"; InvalidArgument otherwise.
StatusOr<MechanismKind> ParseMechanismKind(std::string_view name);

// How a release's noise was sampled. The accountants treat the two
// differently (docs/accounting.md, "Discrete noise"): a discrete Gaussian has
// the continuous Gaussian's Renyi / zCDP / mCDP bounds but no proven exact
// (epsilon, delta) curve, and a discrete Laplace is pure DP but has a larger
// Renyi divergence than the continuous Laplace.
enum class NoiseSampling {
  kDiscrete,    // Exact integer noise on a grid: floating-point safe (default).
  kContinuous,  // Floating-point Laplace / Gaussian samples (samplers.h).
};

// "discrete" or "continuous".
std::string_view NoiseSamplingName(NoiseSampling sampling);
// Parses "discrete" / "continuous"; InvalidArgument otherwise.
StatusOr<NoiseSampling> ParseNoiseSampling(std::string_view name);

// The neighbour relation every sensitivity in dpem is computed for.
inline constexpr std::string_view kNeighbourRelation = "replace-one";

// One noisy release.
struct Release {
  MechanismKind mechanism = MechanismKind::kGaussian;
  // Sensitivity of the released quantity under kNeighbourRelation: in the L1
  // norm for Laplace, in the L2 norm for Gaussian (Frobenius for matrices).
  double sensitivity = 0.0;
  // Laplace scale b, or Gaussian standard deviation sigma, of the noise added
  // to each coordinate.
  double noise_scale = 0.0;
  // What was released, e.g. "iteration 3 / means[1]". Free text.
  std::string label;
  // How the noise was sampled. The default, kDiscrete, is also the
  // conservative choice: every accountant's bound for discrete noise holds
  // for continuous noise too.
  NoiseSampling sampling = NoiseSampling::kDiscrete;

  // noise_scale / sensitivity: what the accountants need.
  double NoiseMultiplier() const { return noise_scale / sensitivity; }
  // "L1" for Laplace, "L2" for Gaussian.
  std::string_view SensitivityNorm() const;
};

// Checks a release: finite sensitivity > 0 and noise_scale > 0.
Status ValidateRelease(const Release& release);

// Releases that share a mechanism, sampling and noise multiplier, with their
// count: the compact form the accountants work on.
struct ReleaseGroup {
  MechanismKind mechanism = MechanismKind::kGaussian;
  double noise_multiplier = 0.0;
  std::size_t count = 0;
  NoiseSampling sampling = NoiseSampling::kDiscrete;
};

// An append-only list of releases.
class PrivacyLedger {
 public:
  // Appends `release` after validating it; on error, nothing is recorded.
  Status Record(Release release);
  // Appends `count` copies of `release` (count >= 0).
  Status RecordRepeated(const Release& release, std::size_t count);

  const std::vector<Release>& releases() const { return releases_; }
  std::size_t size() const { return releases_.size(); }
  bool empty() const { return releases_.empty(); }

  // The releases grouped by (mechanism, sampling, exact noise multiplier), in order of
  // first appearance. Accountants are invariant to the order of releases.
  std::vector<ReleaseGroup> Groups() const;

 private:
  std::vector<Release> releases_;
};

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_LEDGER_H_
