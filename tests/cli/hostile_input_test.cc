// The hostile-input corpus (tests/hostile/cases.txt, files made by
// scripts/make_hostile_corpus.py) run through the dpem binary: one CTest case
// per table line. A hostile case must exit with code 2, print exactly one
// line on stderr and nothing on stdout, leave no file behind (no output, no
// temporary), and neither crash (signal) nor hang (killed after kTimeout).
// The message text is not checked. See the table's header for its syntax.

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;

// A case still running after this long is a hang (killed, and failed).
constexpr std::chrono::seconds kTimeout{60};
// Address-space limit of each run, so that a runaway allocation fails
// inside dpem instead of exhausting the machine (unset with
// DPEM_HOSTILE_NO_RLIMIT=1, e.g. under AddressSanitizer).
constexpr rlim_t kAddressSpaceLimit = rlim_t{8} << 30;

struct Case {
  std::string name;
  int expected_exit = 2;
  std::vector<std::string> args;  // With @H, @S, @F still to be substituted.
};

std::string HostileDir() { return DPEM_HOSTILE_DIR; }

// "\xNN" escapes become bytes; the token "" becomes the empty string.
std::string Unescape(const std::string& token) {
  if (token == "\"\"") return "";
  std::string out;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token.compare(i, 2, "\\x") == 0 && i + 3 < token.size()) {
      out += static_cast<char>(std::stoi(token.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += token[i];
    }
  }
  return out;
}

std::string SafeName(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// Splits `line` into tokens, expanding @NAME macros from `defines`.
std::vector<std::string> Tokens(const std::string& line,
                                const std::map<std::string, std::vector<std::string>>& defines) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string t; in >> t;) {
    auto it = t.size() > 1 && t[0] == '@' ? defines.find(t.substr(1)) : defines.end();
    if (it != defines.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
    } else {
      out.push_back(t);
    }
  }
  return out;
}

// Files of HostileDir()/dir ending in `suffix`, not starting with "good" or
// "valid" (valid input), sorted.
std::vector<fs::path> CorpusFiles(const std::string& dir, const std::string& suffix) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(HostileDir() + "/" + dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.rfind("good", 0) != 0 &&
        name.rfind("valid", 0) != 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void AddEach(const std::vector<std::string>& t, std::vector<Case>& cases) {
  for (const fs::path& file : CorpusFiles(t[1], t[2])) {
    Case c{t[3] + SafeName(file.stem().string()), std::stoi(t[4]), {}};
    for (std::size_t i = 5; i < t.size(); ++i) {
      c.args.push_back(t[i] == "@F" ? file.string() : t[i]);
    }
    cases.push_back(std::move(c));
  }
}

std::vector<Case> LoadCases() {
  std::vector<Case> cases;
  std::map<std::string, std::vector<std::string>> defines;
  std::ifstream in(HostileDir() + "/cases.txt");
  if (!in) return {{"table_missing", 2, {"<" + HostileDir() + "/cases.txt unreadable>"}}};
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> t = Tokens(line, defines);
    if (t.empty() || t[0][0] == '#') continue;
    if (t[0] == "define" && t.size() >= 2) {
      defines[t[1]] = std::vector<std::string>(t.begin() + 2, t.end());
    } else if (t[0] == "case" && t.size() >= 3) {
      cases.push_back({t[1], std::stoi(t[2]), std::vector<std::string>(t.begin() + 3, t.end())});
    } else if (t[0] == "each" && t.size() >= 5) {
      AddEach(t, cases);
    } else {
      cases.push_back({"bad_table_line", 2, {"<unparsable line: " + line + ">"}});
    }
  }
  return cases;
}

struct Outcome {
  bool timed_out = false;
  int signal = 0;  // Non-zero if killed by a signal.
  int exit_code = -1;
  std::string out, err;
};

// Runs dpem with `args` (no shell), stdout and stderr into files in `dir`.
Outcome RunCase(const std::vector<std::string>& args, const std::string& dir) {
  const std::string out_path = dir + "../stdout.txt", err_path = dir + "../stderr.txt";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(DPEM_CLI_PATH));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const bool limit = std::getenv("DPEM_HOSTILE_NO_RLIMIT") == nullptr;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(out_path.c_str(), "wb", stdout) ||
        !std::freopen(err_path.c_str(), "wb", stderr)) {
      ::_exit(127);
    }
    const struct rlimit as{kAddressSpaceLimit, kAddressSpaceLimit};
    if (limit) ::setrlimit(RLIMIT_AS, &as);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Outcome o;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      o.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  o.out = dpem::cli_testing::ReadBytes(out_path);
  o.err = dpem::cli_testing::ReadBytes(err_path);
  return o;
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(e.path().string());
  return names;
}

// True if the command of `args` (the words before the first flag) says in
// its --help or its error that it is not available yet.
bool IsPlaceholder(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> help;
  for (const std::string& a : args) {
    if (a[0] == '-') break;
    help.push_back(a);
  }
  help.push_back("--help");
  const Outcome o = RunCase(help, dir);
  const std::string text = o.out + o.err;
  return text.find("not yet available") != std::string::npos ||
         text.find("not implemented") != std::string::npos;
}

// The table's arguments with escapes decoded and @H, @S/ replaced; `shown`
// receives them as one line for messages.
std::vector<std::string> Substitute(const std::vector<std::string>& raw,
                                   const std::string& scratch, std::string* shown) {
  std::vector<std::string> args;
  for (const std::string& a : raw) {
    std::string s = Unescape(a);
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"@H", HostileDir()}, {"@S/", scratch}}) {
      for (std::size_t p; (p = s.find(from)) != std::string::npos;) s.replace(p, from.size(), to);
    }
    *shown += " " + (s.empty() ? std::string("''") : s);
    args.push_back(std::move(s));
  }
  return args;
}

class HostileInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(HostileInputTest, RefusedCleanly) {
  const Case& c = GetParam();
  const std::string scratch = dpem::cli_testing::Dir() + SafeName(c.name) + "/";
  fs::remove_all(scratch);
  for (const char* d : {"adir.csv", "adir.npy", "outdir"}) fs::create_directories(scratch + d);
  // Not regular files: endless (/dev/zero) and blocking (a FIFO) inputs.
  fs::create_symlink("/dev/zero", scratch + "zero.csv");
  fs::create_symlink("/dev/zero", scratch + "zero.npy");
  ASSERT_EQ(::mkfifo((scratch + "fifo.csv").c_str(), 0600), 0);
  std::string shown;
  const std::vector<std::string> args = Substitute(c.args, scratch, &shown);
  const std::set<std::string> before = Listing(scratch);
  const Outcome o = RunCase(args, scratch);
  SCOPED_TRACE("dpem" + shown + "\nstderr: " + o.err);
  ASSERT_FALSE(o.timed_out) << "hang: killed after " << kTimeout.count() << " s";
  ASSERT_EQ(o.signal, 0) << "crash: killed by signal " << o.signal;
  if (c.expected_exit == 0) {
    if (o.exit_code != 0 && IsPlaceholder(args, scratch)) {
      GTEST_SKIP() << "placeholder command; its hostile cases are trivially refused for now";
    }
    EXPECT_EQ(o.exit_code, 0) << "baseline failed: fix the table's flags for this command";
    return;
  }
  EXPECT_EQ(o.exit_code, c.expected_exit);
  EXPECT_EQ(dpem::cli_testing::CountLines(o.err), 1) << "not one stderr line";
  EXPECT_TRUE(o.out.empty()) << "stdout: " << o.out.substr(0, 400);
  std::string left;
  for (const std::string& f : Listing(scratch)) left += before.count(f) ? "" : f + " ";
  EXPECT_EQ(left, "") << "files left behind";
  fs::remove_all(scratch);
}

// Case names in test listings, instead of the bytes of the struct.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

INSTANTIATE_TEST_SUITE_P(Corpus, HostileInputTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return SafeName(info.param.name);
                         });

}  // namespace
