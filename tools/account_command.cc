// dpem account: the (epsilon, delta) that an accountant certifies for J
// releases of one mechanism with a given noise multiplier.
#include <iostream>
#include <string>

#include "commands.h"
#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"

namespace dpem::cli {
namespace {

// Largest --compositions accepted (the ledger holds one entry per release).
constexpr long long kMaxCompositions = 1000000;

struct AccountFlags {
  std::string mechanism;
  double noise_multiplier = 0.0;
  long long compositions = 0;
  double delta = 0.0;
  std::string accountant{AccountantName(kDefaultAccountant)};
  std::string noise{NoiseSamplingName(Release{}.sampling)};
  bool json = false;
};

Status RunAccount(const AccountFlags& f) {
  StatusOr<MechanismKind> mechanism = ParseMechanismKind(f.mechanism);
  if (!mechanism.ok()) {
    return InvalidArgumentError("--mechanism: unknown mechanism '" + f.mechanism +
                                "' (accepted: gaussian, laplace)");
  }
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--noise-multiplier", f.noise_multiplier));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--compositions", f.compositions, 1));
  DPEM_RETURN_IF_ERROR(RequireAtMost("--compositions", f.compositions, kMaxCompositions));
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", f.delta));
  DPEM_ASSIGN_OR_RETURN(const AccountantKind kind,
                        ParseAccountantFlag("--accountant", f.accountant));
  StatusOr<NoiseSampling> sampling = ParseNoiseSampling(f.noise);
  if (!sampling.ok()) return InvalidArgumentError("--noise: " + sampling.status().message());
  PrivacyLedger ledger;
  DPEM_RETURN_IF_ERROR(ledger.RecordRepeated(
      Release{*mechanism, 1.0, f.noise_multiplier, "release", *sampling},
      static_cast<std::size_t>(f.compositions)));
  DPEM_ASSIGN_OR_RETURN(const double epsilon, ComputeEpsilon(ledger, f.delta, kind));
  if (f.json) {
    PrintJson({{"epsilon", epsilon},
               {"delta", f.delta},
               {"accountant", AccountantName(kind)},
               {"mechanism", MechanismName(*mechanism)},
               {"noise", NoiseSamplingName(*sampling)},
               {"noise_multiplier", f.noise_multiplier},
               {"compositions", f.compositions},
               {"neighbour_relation", kNeighbourRelation}});
  } else {
    std::cout << "epsilon = " << FormatNumber(epsilon) << " at delta = "
              << FormatNumber(f.delta) << " (" << AccountantName(kind) << " accountant; "
              << f.compositions << " " << NoiseSamplingName(*sampling) << " "
              << MechanismName(*mechanism)
              << " releases with noise multiplier " << FormatNumber(f.noise_multiplier)
              << "; " << kNeighbourRelation << " neighbours)\n";
  }
  return OkStatus();
}

}  // namespace

Command AddAccountCommand(CLI::App& root) {
  const auto add_options = [](CLI::App* app, AccountFlags& f) {
    app->add_option("--mechanism", f.mechanism,
                    "Noise mechanism: gaussian (L2 sensitivity) or laplace (L1 sensitivity)")
        ->required();
    app->add_option("--noise-multiplier", f.noise_multiplier,
                    "Noise scale / sensitivity: the Gaussian's standard deviation or the "
                    "Laplace's scale b, per unit of sensitivity (> 0)")
        ->required();
    app->add_option("--compositions", f.compositions,
                    "Number of releases J composed (1 to 1000000)")
        ->required();
    app->add_option("--delta", f.delta, "Target delta of the guarantee, in (0, 1)")->required();
    app->add_option(
        "--accountant", f.accountant,
        "Composition method: " + AccountantNameList() + " (default: rdp, the tightest)");
    app->add_option("--noise", f.noise,
                    "How the noise is sampled: discrete (default, as every dpem fit releases; "
                    "accounted soundly for discrete noise) or continuous (floating-point "
                    "samples, which the curve accountants then take at their exact profile)");
    app->add_flag("--json", f.json, "Print one JSON object instead of a sentence");
  };
  return AddSubcommand<AccountFlags>(
      root, "account", "Print the epsilon an accountant certifies for J releases of one mechanism.",
      add_options, RunAccount);
}

}  // namespace dpem::cli
