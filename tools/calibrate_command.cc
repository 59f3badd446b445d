// dpem calibrate: the per-release noise of a private EM fit for a target
// (epsilon, delta), J iterations and K components.
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "dpem/accounting/calibration.h"

namespace dpem::cli {
namespace {

struct CalibrateFlags {
  double epsilon = 0.0;
  double delta = 0.0;
  long long iterations = 0;
  long long components = 0;
  std::string scenario = "GGG";
  std::string accountant{AccountantName(kDefaultAccountant)};
  double per_release_delta = kDefaultPerReleaseDelta;
  bool json = false;
};

// Largest J * K the command accepts (ledger entries grow as J (2K + 1)).
constexpr long long kMaxIterationsTimesComponents = 100000;

Status ValidateFlags(const CalibrateFlags& f) {
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--epsilon", f.epsilon));
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--delta", f.delta));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--iterations", f.iterations, 1));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("--components", f.components, 1));
  DPEM_RETURN_IF_ERROR(RequireOpenUnitInterval("--per-release-delta", f.per_release_delta));
  if (f.iterations > kMaxIterationsTimesComponents || f.components > kMaxIterationsTimesComponents ||
      f.iterations * f.components > kMaxIterationsTimesComponents) {
    return InvalidArgumentError("--iterations x --components: must be <= " +
                                std::to_string(kMaxIterationsTimesComponents));
  }
  if (f.scenario != "GGG" && f.scenario != "LLG") {
    return InvalidArgumentError("--scenario: unknown scenario '" + f.scenario +
                                "' (accepted: GGG, LLG)");
  }
  return OkStatus();
}

nlohmann::json ResultJson(const CalibrationOptions& o, const CalibrationResult& r) {
  nlohmann::json releases = nlohmann::json::array();
  for (std::size_t i = 0; i < o.pattern.releases.size(); ++i) {
    const ReleaseSpec& spec = o.pattern.releases[i];
    releases.push_back({{"label", spec.label},
                        {"mechanism", MechanismName(spec.mechanism)},
                        {"count_per_iteration", spec.count_per_iteration},
                        {"noise_multiplier", r.noise_multipliers[i]}});
  }
  return {{"accountant", AccountantName(o.accountant)},
          {"scenario", o.pattern.name},
          {"iterations", o.iterations},
          {"target", {{"epsilon", o.epsilon}, {"delta", o.delta}}},
          {"per_release_epsilon", r.per_release_epsilon},
          {"per_release_delta", o.per_release_delta},
          {"releases", releases},
          {"total_releases", r.ledger.size()},
          {"epsilon", r.epsilon},
          {"delta", r.delta},
          {"neighbour_relation", kNeighbourRelation}};
}

void PrintTable(const std::vector<CalibrationOptions>& options,
                const std::vector<CalibrationResult>& results) {
  const CalibrationOptions& o = options.front();
  std::cout << "Calibration for (epsilon, delta) = (" << FormatNumber(o.epsilon) << ", "
            << FormatNumber(o.delta) << "), J = " << o.iterations << ", scenario "
            << o.pattern.name << " (" << results.front().ledger.size()
            << " releases), per-release delta_i = " << FormatNumber(o.per_release_delta)
            << "\n";
  std::cout << std::left << std::setw(12) << "accountant" << std::setw(14) << "epsilon_i";
  for (const ReleaseSpec& spec : o.pattern.releases) {
    std::cout << std::setw(16) << ("z(" + spec.label + ")");
  }
  std::cout << "re-accounted epsilon\n";
  for (std::size_t a = 0; a < results.size(); ++a) {
    std::cout << std::setw(12) << AccountantName(options[a].accountant) << std::setw(14)
              << std::setprecision(6) << results[a].per_release_epsilon;
    for (double z : results[a].noise_multipliers) std::cout << std::setw(16) << z;
    std::cout << std::setprecision(8) << results[a].epsilon << "\n";
  }
  std::cout << "z = noise scale / sensitivity; neighbours: " << kNeighbourRelation << "\n";
}

Status RunCalibrate(const CalibrateFlags& f) {
  DPEM_RETURN_IF_ERROR(ValidateFlags(f));
  std::vector<AccountantKind> kinds;
  if (f.accountant == "all") {
    kinds = AllAccountants();
  } else {
    DPEM_ASSIGN_OR_RETURN(AccountantKind kind, ParseAccountantFlag("--accountant", f.accountant));
    kinds.push_back(kind);
  }
  std::vector<CalibrationOptions> options;
  std::vector<CalibrationResult> results;
  for (AccountantKind kind : kinds) {
    CalibrationOptions o;
    o.epsilon = f.epsilon;
    o.delta = f.delta;
    o.iterations = static_cast<int>(f.iterations);
    DPEM_ASSIGN_OR_RETURN(o.pattern, ScenarioPattern(f.scenario, static_cast<int>(f.components)));
    o.accountant = kind;
    o.per_release_delta = f.per_release_delta;
    DPEM_ASSIGN_OR_RETURN(CalibrationResult r, Calibrate(o));
    options.push_back(std::move(o));
    results.push_back(std::move(r));
  }
  if (!f.json) {
    PrintTable(options, results);
  } else if (results.size() == 1) {
    PrintJson(ResultJson(options[0], results[0]));
  } else {
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t i = 0; i < results.size(); ++i) all.push_back(ResultJson(options[i], results[i]));
    PrintJson({{"calibrations", all}});
  }
  return OkStatus();
}

}  // namespace

Command AddCalibrateCommand(CLI::App& root) {
  const auto add_options = [](CLI::App* app, CalibrateFlags& f) {
    app->add_option("--epsilon", f.epsilon, "Target total epsilon (> 0)")->required();
    app->add_option("--delta", f.delta, "Target total delta, in (0, 1)")->required();
    app->add_option("--iterations", f.iterations, "Number of EM iterations J (>= 1)")->required();
    app->add_option("--components", f.components, "Number of mixture components K (>= 1)")
        ->required();
    app->add_option("--scenario", f.scenario,
                    "Mechanisms for (weights, means, covariances): GGG = Gaussian, Gaussian, "
                    "Gaussian; LLG = Laplace, Laplace, Gaussian (park2017; default GGG)");
    app->add_option("--accountant", f.accountant,
                    "Composition method: " + AccountantNameList() +
                        ", or all to compare them (default: rdp, the tightest)");
    app->add_option("--per-release-delta", f.per_release_delta,
                    "delta_i of park2017's parametrisation sigma = sqrt(2 ln(1.25/delta_i)) / "
                    "epsilon_i of Gaussian noise; sets the Laplace/Gaussian noise ratio in LLG "
                    "and how epsilon_i is reported (default 1e-6)");
    app->add_flag("--json", f.json, "Print JSON instead of a table");
  };
  return AddSubcommand<CalibrateFlags>(
      root, "calibrate",
      "Find the per-release noise of a J-iteration private EM fit that meets a total "
      "(epsilon, delta), and re-account it.",
      add_options, RunCalibrate);
}

}  // namespace dpem::cli
