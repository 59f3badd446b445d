// Test support for the CLI tests: run the dpem binary, capture its exit code,
// stdout and stderr, and check the shape of a user error; the test data the
// CLI tests share. Header-only; DPEM_CLI_PATH is set by CMake. The tests
// live in this namespace (dpem::cli_testing), so they use these names as
// they are.
#ifndef DPEM_TESTS_CLI_CLI_RUNNER_H_
#define DPEM_TESTS_CLI_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/temp_files.h"

namespace dpem::cli_testing {

using test_support::ReadBytes;
using test_support::WriteBytes;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A scratch directory private to this process (CTest runs each case in its
// own process, in parallel), ending in '/'. Emptied when first used: a
// directory of that name left by an earlier, dead process of the same pid
// would otherwise hand this one its files (a stale race3.json failed
// BudgetCliTest.ConcurrentFitsNeverOverspend once pids had wrapped).
inline const std::string& Dir() {
  static const std::string dir = [] {
    const std::string d =
        ::testing::TempDir() + "dpem_cli_test." + std::to_string(::getpid()) + "/";
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Runs the dpem binary with `args` (already shell-quoted where needed).
inline RunResult RunDpem(const std::string& args) {
  const std::string err_path = Dir() + "stderr.txt";
  const std::string command = std::string(DPEM_CLI_PATH) + " " + args + " 2>" + err_path;
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = ReadBytes(err_path);
  return result;
}

inline int CountLines(const std::string& s) {
  int lines = 0;
  for (char c : s) lines += c == '\n';
  return lines;
}

// Names of leftover temporary files ("<path>.tmp.<pid>") under Dir().
inline std::string StrayTemporaries() {
  std::string found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(Dir())) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) found += name + " ";
  }
  return found;
}

// A user error from the run `r` of `what`: exit code 2, nothing on stdout,
// exactly one line on stderr containing `mentions`, no file at `output` (if
// given) and no temporary left behind.
inline void ExpectUserError(const RunResult& r, const std::string& what,
                            const std::string& mentions, const std::string& output = "") {
  EXPECT_EQ(r.exit_code, 2) << what << " stderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << what << " printed: " << r.out;
  EXPECT_EQ(CountLines(r.err), 1) << what << " stderr: " << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos)
      << what << "\n stderr: " << r.err << " should mention: " << mentions;
  if (!output.empty()) EXPECT_FALSE(std::filesystem::exists(output)) << what << " wrote " << output;
  EXPECT_EQ(StrayTemporaries(), "") << what;
}

// Runs `args` (`output`, if given, removed first) and expects a user error
// (ExpectUserError).
inline void ExpectBadInput(const std::string& args, const std::string& mentions,
                           const std::string& output = "") {
  if (!output.empty()) std::filesystem::remove(output);
  ExpectUserError(RunDpem(args), args, mentions, output);
}

// A bad invocation: its arguments after a common prefix, and what its one
// stderr line must mention.
struct BadArgs {
  std::string args;
  std::string mentions;
};

// ExpectBadInput(prefix + c.args, c.mentions, output) for every case.
inline void ExpectBadInputs(const std::string& prefix, std::initializer_list<BadArgs> cases,
                            const std::string& output = "") {
  for (const BadArgs& c : cases) ExpectBadInput(prefix + c.args, c.mentions, output);
}

// `v` with 17 significant digits (the double again when read back).
inline std::string Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// `n` 2-D records, record i from cluster i % 3: its centre plus N(0, sd^2)
// noise per coordinate from a std::mt19937_64 seeded with `seed` (test data,
// not noise of the library).
inline std::vector<std::array<double, 2>> ThreeClusters(const double (&centres)[3][2], double sd,
                                                        std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, sd);
  std::vector<std::array<double, 2>> x(n);
  for (int i = 0; i < n; ++i) {
    x[i] = {centres[i % 3][0] + noise(rng), centres[i % 3][1] + noise(rng)};
  }
  return x;
}

}  // namespace dpem::cli_testing

#endif  // DPEM_TESTS_CLI_CLI_RUNNER_H_
