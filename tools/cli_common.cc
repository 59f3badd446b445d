#include "cli_common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "internal/text.h"

namespace dpem::cli {

std::string FormatNumber(double value) { return internal::FormatShortest(value); }

Status RequirePositiveFinite(std::string_view flag, double value) {
  if (std::isfinite(value) && value > 0.0) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": must be a finite number > 0, got " +
                              FormatNumber(value));
}

Status RequireOpenUnitInterval(std::string_view flag, double value) {
  if (value > 0.0 && value < 1.0) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": must be in the open interval (0, 1), got " +
                              FormatNumber(value));
}

Status RequireAtLeast(std::string_view flag, long long value, long long minimum) {
  if (value >= minimum) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": must be an integer >= " +
                              std::to_string(minimum) + ", got " + std::to_string(value));
}

Status RequireNonNegativeFinite(std::string_view flag, double value) {
  if (value >= 0.0 && std::isfinite(value)) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": must be finite and >= 0, got " +
                              std::to_string(value));
}

StatusOr<bool> OnOff(std::string_view flag, const std::string& value) {
  if (value != "on" && value != "off") {
    return InvalidArgumentError(std::string(flag) + " must be on or off");
  }
  return value == "on";
}

Status RequireAtMost(std::string_view flag, long long value, long long maximum) {
  if (value <= maximum) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": must be <= " + std::to_string(maximum));
}

void AddThreadsOption(CLI::App* app, int* threads) {
  app->add_option("--threads", *threads,
                  "Worker threads of the fitting engine (default 0: all hardware threads; "
                  "released statistics are exact sums, the same for any count)");
}

StatusOr<EngineOptions> EngineFromThreadsFlag(int threads) {
  EngineOptions engine;
  engine.threads = threads;
  if (const Status s = engine.Validate(); !s.ok()) {
    return InvalidArgumentError("--threads: " + s.message());
  }
  return engine;
}

StatusOr<AccountantKind> ParseAccountantFlag(std::string_view flag, std::string_view value) {
  StatusOr<AccountantKind> kind = ParseAccountantKind(value);
  if (kind.ok()) return kind;
  return InvalidArgumentError(std::string(flag) + ": unknown accountant '" +
                              std::string(value) + "' (accepted: " +
                              AccountantNameList() + ")");
}

Status RequireUsableEpsilon(std::string_view flag, double value) {
  DPEM_RETURN_IF_ERROR(RequirePositiveFinite(flag, value));
  if (value >= kMinEpsilon) return OkStatus();
  return InvalidArgumentError(std::string(flag) + ": " + FormatNumber(value) +
                              " is below the smallest usable epsilon " +
                              FormatNumber(kMinEpsilon) +
                              " (the fit would be pure noise)");
}

StatusOr<double> ParseEpsilonFlag(std::string_view flag, const std::string& text) {
  if (text == "inf" || text == "infinity") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) ||
      value <= 0.0) {
    return InvalidArgumentError(std::string(flag) + ": must be a finite number > 0, or inf "
                                "for a non-private fit, got '" + text + "'");
  }
  DPEM_RETURN_IF_ERROR(RequireUsableEpsilon(flag, value));
  return value;
}

StatusOr<std::optional<std::uint64_t>> ParseSeedFlag(const std::optional<std::string>& seed_flag) {
  if (!seed_flag) return std::optional<std::uint64_t>();
  const std::string& text = *seed_flag;
  std::uint64_t seed = 0;
  const std::from_chars_result r = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return InvalidArgumentError("--seed: must be a whole number from 0 to "
                                "18446744073709551615, got '" + text + "'");
  }
  return std::optional<std::uint64_t>(seed);
}

StatusOr<Generator> MakeGenerator(const std::optional<std::string>& seed_flag) {
  DPEM_ASSIGN_OR_RETURN(const std::optional<std::uint64_t> seed, ParseSeedFlag(seed_flag));
  if (!seed) return Generator::FromOsEntropy();
  return Generator::FromSeed(*seed);
}

void PrintJson(const nlohmann::json& json) { std::cout << json.dump(2) << "\n"; }

void PrintError(std::string_view command, std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::cerr << "dpem";
  if (!command.empty()) std::cerr << " " << command;
  std::cerr << ": " << line << std::endl;
}

}  // namespace dpem::cli
