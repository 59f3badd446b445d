// dpem bounds: release a public domain (centre, radius) from the data under
// pure epsilon-DP (dpem/data/private_bounds.h, docs/bounds.md).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bounds_flags.h"
#include "budget_flags.h"
#include "commands.h"
#include "dpem/data/io.h"
#include "internal/file_util.h"
#include "accounting/ledger_json.h"

namespace dpem::cli {
namespace {

using nlohmann::json;

struct BoundsFlags {
  std::string input;
  std::string epsilon_text;
  double quantile = 0.9;
  double radius_inflation = 1.5;
  std::optional<std::string> seed;
  std::string output;
  bool json_output = false;
  BudgetFlags budget;
};

Status RunBounds(const BoundsFlags& f) {
  PrivateBoundsOptions options;
  DPEM_ASSIGN_OR_RETURN(options.epsilon, ParseEpsilonFlag("--epsilon", f.epsilon_text));
  DPEM_RETURN_IF_ERROR(RequireUsableEpsilon("--epsilon", options.epsilon));
  options.quantile = f.quantile;
  options.radius_inflation = f.radius_inflation;
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (!f.output.empty()) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(f.output));
  // Pure DP: delta 0 is charged.
  DPEM_RETURN_IF_ERROR(ChargeBudget(f.budget, f.input, options.epsilon, 0.0, "dpem bounds"));
  DPEM_ASSIGN_OR_RETURN(const std::unique_ptr<RowSource> x, OpenRowSource(f.input));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  StatusOr<PrivateBounds> bounds = ReleasePrivateBounds(*x, options, gen);
  if (!bounds.ok()) return Status(bounds.status().code(), f.input + ": " + bounds.status().message());
  WarnAboutBounds(*bounds, "bounds");
  const json j = BoundsToJson(*bounds, options);
  if (!f.output.empty()) DPEM_RETURN_IF_ERROR(internal::WriteFileAtomically(f.output, j.dump(2) + "\n"));
  if (f.json_output) {
    PrintJson(j);
    return OkStatus();
  }
  std::string center;
  for (Eigen::Index i = 0; i < bounds->domain.center.size(); ++i) {
    center += (i ? "," : "") + FormatNumber(bounds->domain.center(i));
  }
  std::cout << "--data-norm " << FormatNumber(bounds->domain.data_norm) << " --data-center "
            << center << "\n";
  std::cout << "# outside fraction (noisy): " << FormatNumber(bounds->outside_fraction_noisy)
            << "; pure epsilon " << FormatNumber(bounds->epsilon) << " (replace-one)\n";
  return OkStatus();
}

}  // namespace

json BoundsToJson(const PrivateBounds& b, const PrivateBoundsOptions& options) {
  const Eigen::VectorXd& c = b.domain.center;
  json j = {{"data_center", std::vector<double>(c.data(), c.data() + c.size())},
            {"data_norm", b.domain.data_norm},
            {"quantile", options.quantile},
            {"radius_inflation", options.radius_inflation},
            {"outside_count_noisy", b.outside_count_noisy},
            {"outside_fraction_noisy", b.outside_fraction_noisy}};
  j["privacy"] = {{"epsilon", b.epsilon},
                  {"delta", 0.0},
                  {"target_epsilon", options.epsilon},
                  {"composition", "basic (pure DP); split: centre 1/2, radius 7/16, outside count 1/16"},
                  {"neighbour_relation", std::string(kNeighbourRelation)},
                  {"guarantee_void", b.guarantee_void},
                  {"void_reasons", b.void_reasons},
                  {"releases", internal::LedgerToJson(b.ledger)}};
  if (b.seed) j["seed"] = *b.seed;
  return j;
}

StatusOr<DataDomain> ReadBoundsFile(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) { return InvalidArgumentError(path + ": " + why); };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("data_norm") || !j["data_norm"].is_number()) return bad("no number data_norm");
  if (!j.contains("data_center") || !j["data_center"].is_array()) return bad("no array data_center");
  // A domain released without a guarantee (e.g. seeded) would void the fit's
  // silently: refuse it before the data is read (review finding).
  if (!j.contains("privacy") || !j["privacy"].is_object() ||
      !j["privacy"].contains("guarantee_void") || !j["privacy"]["guarantee_void"].is_boolean()) {
    return bad("no privacy.guarantee_void: not a file written by dpem bounds");
  }
  if (j["privacy"]["guarantee_void"].get<bool>()) {
    return bad("its guarantee is void (e.g. it was released with --seed); a fit on that "
               "domain cannot claim one: release the bounds again without a seed");
  }
  DataDomain d;
  d.data_norm = j["data_norm"].get<double>();
  d.center.resize(static_cast<Eigen::Index>(j["data_center"].size()));
  for (std::size_t i = 0; i < j["data_center"].size(); ++i) {
    if (!j["data_center"][i].is_number()) return bad("data_center must hold numbers");
    d.center(static_cast<Eigen::Index>(i)) = j["data_center"][i].get<double>();
  }
  if (Status s = ValidateDomain(d); !s.ok()) return bad(s.message());
  return d;
}

void WarnAboutBounds(const PrivateBounds& b, std::string_view command) {
  for (const std::string& reason : b.void_reasons) {
    std::cerr << "dpem " << command << ": warning: the privacy guarantee is VOID: " << reason
              << "\n";
  }
  WarnIfMostOutside(b, command);
}

void WarnIfMostOutside(const PrivateBounds& b, std::string_view command) {
  const std::string warning = MostOutsideWarning(b);
  if (!warning.empty()) std::cerr << "dpem " << command << ": warning: " << warning << "\n";
}

Command AddBoundsCommand(CLI::App& root) {
  const auto add_options = [](CLI::App* app, BoundsFlags& f) {
    app->add_option("--input", f.input, "Data: .csv or .npy")->required();
    app->add_option("--epsilon", f.epsilon_text, "Pure epsilon of the bounds (> 0)")->required();
    app->add_option("--quantile", f.quantile,
                    "Quantile of ||x - c|| released privately, in (0, 1) (default 0.9)");
    app->add_option("--radius-inflation", f.radius_inflation,
                    "Public factor >= 1: the radius is this times the released quantile "
                    "(default 1.5)");
    app->add_option("--output", f.output, "Write the bounds as JSON (read by fit --bounds)");
    app->add_flag("--json", f.json_output, "Print the JSON on stdout instead of the flags");
    app->add_option("--seed", f.seed,
                    "Seed a reproducible generator (tests only): the guarantee is then VOID");
    AddBudgetFlags(app, &f.budget);
  };
  return AddSubcommand<BoundsFlags>(
      root, "bounds",
      "Release a domain (centre, radius) of the data under pure epsilon-DP, for "
      "--bounds or --data-norm/--data-center of the fit commands (docs/bounds.md).",
      add_options, RunBounds);
}

}  // namespace dpem::cli
