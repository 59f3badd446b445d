// Shared plumbing of the dpem command-line tool: how subcommands register,
// how flags are validated, and how a Status becomes one line and exit code 2.
#ifndef DPEM_TOOLS_CLI_COMMON_H_
#define DPEM_TOOLS_CLI_COMMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dpem/accounting/accountant.h"
#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::cli {

// Exit code for every error the user can fix: bad flags, bad input files.
inline constexpr int kUsageErrorExitCode = 2;

// A registered subcommand: its CLI11 node and the action run when it was
// selected. The action returns a Status; the caller reports errors.
struct Command {
  CLI::App* app = nullptr;
  std::function<Status()> run;
};

// Adds the subcommand `name` of `parent` with one Flags, which
// `add_options` (called as add_options(app, flags)) declares as the
// subcommand's options and `run` (called as run(flags)) reads once the
// subcommand was selected. The Flags live as
// long as the returned Command.
template <typename Flags, typename AddOptions, typename Run>
Command AddSubcommand(CLI::App& parent, const std::string& name, const std::string& description,
                      AddOptions add_options, Run run) {
  auto flags = std::make_shared<Flags>();
  CLI::App* app = parent.add_subcommand(name, description);
  add_options(app, *flags);
  return {app, [flags, run] { return run(*flags); }};
}

// Flag checks: each returns InvalidArgument "--flag: must be ..., got X".
Status RequirePositiveFinite(std::string_view flag, double value);
Status RequireOpenUnitInterval(std::string_view flag, double value);
Status RequireAtLeast(std::string_view flag, long long value, long long minimum);
Status RequireNonNegativeFinite(std::string_view flag, double value);
// The value of an on/off flag: true for "on", false for "off", InvalidArgument
// "--flag must be on or off" otherwise.
StatusOr<bool> OnOff(std::string_view flag, const std::string& value);
// InvalidArgument "--flag: must be <= MAXIMUM" (the bound of a size flag).
Status RequireAtMost(std::string_view flag, long long value, long long maximum);
StatusOr<AccountantKind> ParseAccountantFlag(std::string_view flag,
                                             std::string_view value);

// The text of flag `flag` parsed by `parse`, one of the library's Parse*
// functions (e.g. ParseCovarianceType): its StatusOr, with a refusal
// reported as InvalidArgument "<flag>: <parse's message>".
template <typename Parse>
auto ParseFlag(std::string_view flag, std::string_view text, Parse parse) -> decltype(parse(text)) {
  auto value = parse(text);
  if (!value.ok()) return InvalidArgumentError(std::string(flag) + ": " + value.status().message());
  return value;
}

// Smallest total epsilon a private fit accepts. Below it the noise scale is
// over a million times the sensitivity, so the released statistics carry no
// information about the data, and splitting such a budget over components,
// statistics and iterations drives the per-release epsilons towards
// underflow, where the calibration fails with a confusing message (e.g.
// `--epsilon 1e-300` reported as "got 0"). A usage error, not a privacy
// limit: any epsilon >= kMinEpsilon is honoured exactly.
inline constexpr double kMinEpsilon = 1e-6;

// InvalidArgument "--flag: ..." unless kMinEpsilon <= value < inf.
Status RequireUsableEpsilon(std::string_view flag, double value);

// An --epsilon flag's text: a finite number >= kMinEpsilon, or "inf" /
// "infinity" for a non-private fit (returned as +infinity).
StatusOr<double> ParseEpsilonFlag(std::string_view flag, const std::string& text);

// Adds --threads (the fitting engine's worker threads) to a fit command.
void AddThreadsOption(CLI::App* app, int* threads);
// Engine options for the value of --threads (0: all hardware threads).
StatusOr<EngineOptions> EngineFromThreadsFlag(int threads);

// The generator behind --seed: seeded (reproducible, not for production) if
// a seed was given, else keyed by the operating system's CSPRNG. The flag's
// text must be a whole number in [0, 2^64 - 1]; anything else (a sign, a
// fraction, trailing characters) is an InvalidArgument naming --seed.
StatusOr<Generator> MakeGenerator(const std::optional<std::string>& seed_flag);
// The seed of --seed's text (checked as MakeGenerator does); nullopt when the
// flag was not given.
StatusOr<std::optional<std::uint64_t>> ParseSeedFlag(const std::optional<std::string>& seed_flag);

// Formats a double for messages: shortest round-trip text, "nan", "inf".
std::string FormatNumber(double value);

// Writes `json` to stdout, indented, with a trailing newline.
void PrintJson(const nlohmann::json& json);

// How a command failed: its status and the line printed for it.
struct CliFailure {
  Status status;
  std::string line;
};

// The CLI: parses argv, runs the command, and returns the exit code (0, or
// kUsageErrorExitCode after one line on stderr). main() of dpem and of
// dpem-mpi. If the command itself failed and `failure` is not null, it
// receives how.
int RunCli(int argc, char** argv, CliFailure* failure = nullptr);

// One line on stderr: "dpem <command>: <message>" (newlines folded).
void PrintError(std::string_view command, std::string_view message);

}  // namespace dpem::cli

#endif  // DPEM_TOOLS_CLI_COMMON_H_
