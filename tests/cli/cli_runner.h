// Test support for the CLI tests: run the dpem binary, capture its exit code,
// stdout and stderr. Header-only; DPEM_CLI_PATH is set by CMake.
#ifndef DPEM_TESTS_CLI_CLI_RUNNER_H_
#define DPEM_TESTS_CLI_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace dpem::cli_testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory private to this process (CTest runs each case in its
// own process, in parallel), ending in '/'.
inline const std::string& ProcessScratchDir() {
  static const std::string dir = [] {
    const std::string d =
        ::testing::TempDir() + "dpem_cli_test." + std::to_string(::getpid()) + "/";
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Runs the dpem binary with `args` (already shell-quoted where needed).
inline RunResult RunDpem(const std::string& args) {
  const std::string err_path = ProcessScratchDir() + "stderr.txt";
  const std::string command = std::string(DPEM_CLI_PATH) + " " + args + " 2>" + err_path;
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = ReadFile(err_path);
  return result;
}

inline int CountLines(const std::string& s) {
  int lines = 0;
  for (char c : s) lines += c == '\n';
  return lines;
}

}  // namespace dpem::cli_testing

#endif  // DPEM_TESTS_CLI_CLI_RUNNER_H_
