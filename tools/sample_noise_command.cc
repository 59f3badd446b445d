// dpem sample-noise: draws from dpem's noise samplers with its CSPRNG, so the
// distributions and the seeding can be inspected from the command line.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace dpem::cli {
namespace {

constexpr long long kMaxSamples = 10000000;

struct SampleNoiseFlags {
  std::string distribution;
  double scale = 0.0;
  double shape = 1.0;
  long long count = 0;
  std::optional<std::string> seed;
  bool json = false;
};

StatusOr<double> Draw(const SampleNoiseFlags& f, Generator& gen) {
  if (f.distribution == "gaussian") return SampleGaussian(gen, f.scale);
  if (f.distribution == "laplace") return SampleLaplace(gen, f.scale);
  return SampleGamma(gen, f.shape, f.scale);
}

Status RunSampleNoise(const SampleNoiseFlags& f) {
  if (f.distribution != "gaussian" && f.distribution != "laplace" && f.distribution != "gamma") {
    return InvalidArgumentError("--distribution: unknown distribution '" + f.distribution +
                                "' (accepted: gaussian, laplace, gamma)");
  }
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--scale", f.scale));
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite("--shape", f.shape));
  DPEM_RETURN_IF_ERROR(RequireAtLeast("-n", f.count, 1));
  DPEM_RETURN_IF_ERROR(RequireAtMost("-n", f.count, kMaxSamples));
  DPEM_ASSIGN_OR_RETURN(Generator gen, MakeGenerator(f.seed));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(f.count));
  for (long long i = 0; i < f.count; ++i) {
    DPEM_ASSIGN_OR_RETURN(const double x, Draw(f, gen));
    samples.push_back(x);
  }
  if (f.json) {
    nlohmann::json out = {{"distribution", f.distribution}, {"scale", f.scale},
                          {"n", f.count}, {"seeded", gen.seeded()}, {"samples", samples}};
    if (f.distribution == "gamma") out["shape"] = f.shape;
    if (gen.seeded()) {
      out["seed"] = *gen.seed();
      out["warning"] = kSeededGeneratorWarning;
    }
    PrintJson(out);
    return OkStatus();
  }
  if (gen.seeded()) std::cerr << "dpem sample-noise: " << kSeededGeneratorWarning << "\n";
  for (double x : samples) std::cout << FormatNumber(x) << "\n";
  return OkStatus();
}

}  // namespace

Command AddSampleNoiseCommand(CLI::App& root) {
  const auto add_options = [](CLI::App* app, SampleNoiseFlags& f) {
    app->add_option("--distribution", f.distribution, "gaussian, laplace or gamma")->required();
    app->add_option("--scale", f.scale,
                    "Gaussian standard deviation, Laplace scale b, or Gamma scale (> 0)")
        ->required();
    app->add_option("--shape", f.shape, "Gamma shape (> 0; default 1)");
    app->add_option("-n", f.count, "Number of draws (1 to 10000000)")->required();
    app->add_option("--seed", f.seed,
                    "Seed a reproducible stream (for tests and experiments only; the default "
                    "is a CSPRNG keyed by the operating system)");
    app->add_flag("--json", f.json, "Print one JSON object instead of one number per line");
  };
  return AddSubcommand<SampleNoiseFlags>(
      root, "sample-noise", "Draw i.i.d. noise from one of dpem's samplers (for inspection).",
      add_options, RunSampleNoise);
}

}  // namespace dpem::cli
