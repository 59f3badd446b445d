// End-to-end tests of the privacy-budget ledger: dpem budget init / show and
// `dpem fit gmm --budget-file` (and fit kmeans, fit gradient-em): charges add
// up, an exhausted budget refuses a fit before its data is read, concurrent
// fits never overspend, and a fit killed with SIGKILL leaves a consistent file
// with its charge spent.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;

// `n` records of 2-D data in three clusters, deterministic.
std::string MakeData(const std::string& name, int n) {
  const std::string path = Dir() + name;
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) {
    out << (i % 3) - 1 + 0.001 * (i % 17) << "," << (i % 2) + 0.001 * (i % 13) << "\n";
  }
  return path;
}

std::string Fit(const std::string& input, const std::string& output, const std::string& budget,
                double epsilon, int iterations = 3) {
  return "fit gmm --input " + input + " --output " + output + " --components 2 --iterations " +
         std::to_string(iterations) + " --epsilon " + std::to_string(epsilon) +
         " --delta 1e-6 --data-norm 3 --seed 1 --quiet --budget-file " + budget;
}

nlohmann::json Show(const std::string& budget) {
  const RunResult r = RunDpem("budget show --json --budget-file " + budget);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST(BudgetCliTest, FitsDrawFromTheBudgetUntilItIsSpent) {
  const std::string data = MakeData("data.csv", 300), budget = Dir() + "b1.db";
  fs::remove(budget);
  RunResult r = RunDpem("budget init --budget-file " + budget + " --input " + data +
                        " --epsilon 1 --delta 1e-5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunDpem(Fit(data, Dir() + "m1.json", budget, 0.6));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunDpem(Fit(data, Dir() + "m2.json", budget, 0.6));  // 1.2 > 1.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("exceeded"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Dir() + "m2.json"));
  r = RunDpem(Fit(data, Dir() + "m3.json", budget, 0.4));  // Exactly 1.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json shown = Show(budget);
  ASSERT_EQ(shown["datasets"].size(), 1u) << shown.dump();
  EXPECT_DOUBLE_EQ(shown["datasets"][0]["spent_epsilon"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(shown["datasets"][0]["spent_delta"].get<double>(), 2e-6);
  EXPECT_EQ(shown["datasets"][0]["charges"].get<int>(), 2);
  // Totals cannot change; the same total again is accepted.
  EXPECT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 5 --delta 1e-5").exit_code, 2);
  EXPECT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 1 --delta 1e-5").exit_code, 0);
}

// The data-set ID printed by `budget init`'s "data set ID: total ..." line.
std::string InitializedId(const RunResult& r) {
  const std::size_t start = r.out.find("data set "), end = r.out.find(": total");
  return start == std::string::npos || end == std::string::npos
             ? ""
             : r.out.substr(start + 9, end - start - 9);
}

// The default ID is the hash of the file's bytes, so an edited or
// re-serialised file starts a fresh budget: budget init warns (one line, and
// still succeeds) when the new hash's path or shape is already known.
TEST(BudgetCliTest, InitWarnsWhenANewHashHasAKnownPathOrShape) {
  const std::string budget = Dir() + "ident.db", data = MakeData("ident.csv", 300);
  fs::remove(budget);
  const std::string init =
      "budget init --budget-file " + budget + " --epsilon 1 --delta 0 --input ";
  RunResult r = RunDpem(init + data);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const std::string original = InitializedId(r);
  ASSERT_NE(original, "") << r.out;
  r = RunDpem(init + data);  // The same file again: nothing new.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  // One record changed in place: same path, same shape, new hash.
  std::string text = ReadBytes(data);
  text.replace(0, text.find('\n'), "0.5,0.5");
  std::ofstream(data, std::ios::trunc) << text;
  r = RunDpem(init + data);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string edited = InitializedId(r);
  EXPECT_NE(edited, original);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(original), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("same path"), std::string::npos) << r.err;
  // The same records re-serialised elsewhere (with a header line): same shape.
  std::ofstream(Dir() + "ident_copy.csv") << "x,y\n" + text;
  r = RunDpem(init + Dir() + "ident_copy.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("same shape (300 rows, 2 columns)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("same path"), std::string::npos) << r.err;
  // Another data set (another path and shape): no warning.
  r = RunDpem(init + MakeData("other.csv", 120));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(Show(budget)["datasets"].size(), 4u);
}

TEST(BudgetCliTest, RefusedBeforeTheDataIsRead) {
  // The input is not valid CSV: with budget left the fit is charged and then
  // fails on the data; with none left it fails on the budget, without reading.
  const std::string bad = Dir() + "bad.csv", budget = Dir() + "b2.db";
  std::ofstream(bad) << "1,2\nnan,3\n";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget +
                    " --dataset D --epsilon 1 --delta 1e-5").exit_code, 0);
  RunResult r = RunDpem(Fit(bad, Dir() + "o.json", budget, 0.7) + " --dataset D");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.csv:2"), std::string::npos) << r.err;
  r = RunDpem(Fit(bad, Dir() + "o.json", budget, 0.7) + " --dataset D");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exceeded"), std::string::npos) << r.err;
  // No total for the data set, a missing budget file, --dataset alone.
  r = RunDpem(Fit(bad, Dir() + "o.json", budget, 0.1) + " --dataset E");
  EXPECT_NE(r.err.find("no budget"), std::string::npos) << r.err;
  r = RunDpem(Fit(bad, Dir() + "o.json", Dir() + "missing.db", 0.1));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(Dir() + "missing.db"));
  EXPECT_FALSE(fs::exists(Dir() + "o.json"));
}

// The other fit commands charge the budget as fit gmm does: with none left, a
// second fit is refused on the budget before its (invalid) data is read.
void ExpectSecondFitRefusedBeforeReading(const std::string& name, const std::string& fit) {
  const std::string bad = Dir() + name + ".csv", budget = Dir() + name + ".db";
  std::ofstream(bad) << "1,2\nnan,3\n";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget +
                    " --dataset D --epsilon 1 --delta 1e-5").exit_code, 0);
  const std::string args = fit + " --input " + bad + " --budget-file " + budget + " --dataset D";
  RunResult r = RunDpem(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(name + ".csv:2"), std::string::npos) << r.err;
  r = RunDpem(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("exceeded"), std::string::npos) << r.err;
  const nlohmann::json shown = Show(budget);
  ASSERT_EQ(shown["datasets"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["datasets"][0]["charges"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(shown["datasets"][0]["spent_epsilon"].get<double>(), 0.7);
}

TEST(BudgetCliTest, FitKmeansIsChargedBeforeReading) {
  ExpectSecondFitRefusedBeforeReading(
      "kmeans_bad", "fit kmeans --method cdp-gauss --output " + Dir() + "k.json" +
                        " --components 2 --iterations 2 --epsilon 0.7 --delta 1e-6"
                        " --data-norm 3 --seed 1 --quiet");
  EXPECT_FALSE(fs::exists(Dir() + "k.json"));
}

TEST(BudgetCliTest, FitKmeansDplloydSpendsNoDelta) {
  const std::string data = MakeData("kmeans.csv", 300), budget = Dir() + "kmeans.db";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 1 --delta 1e-5").exit_code, 0);
  const RunResult r = RunDpem("fit kmeans --method dplloyd --input " + data + " --output " +
                              Dir() + "dplloyd.json --components 2 --iterations 2 --epsilon "
                              "0.5 --delta 1e-6 --data-norm 3 --seed 1 --quiet --budget-file " +
                              budget);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json shown = Show(budget);
  EXPECT_DOUBLE_EQ(shown["datasets"][0]["spent_epsilon"].get<double>(), 0.5);
  EXPECT_EQ(shown["datasets"][0]["spent_delta"].get<double>(), 0.0);
}

TEST(BudgetCliTest, FitGradientEmIsChargedBeforeReading) {
  ExpectSecondFitRefusedBeforeReading(
      "gradient_em_bad", "fit gradient-em --model gmm --method dp --iterations 2 --sigma 1"
                         " --epsilon 0.7 --delta 1e-6 --tau 1 --seed 1");
}

// fit gradient-em is charged what its accountant certifies, never less. The
// paper's noise is exactly the target in zCDP, and the zCDP accountant rounds
// up, so the charge is a hair above the target (it used to be the target).
TEST(BudgetCliTest, FitGradientEmIsChargedWhatItCertifies) {
  const std::string data = Dir() + "gem.csv", budget = Dir() + "gem.db";
  ASSERT_EQ(RunDpem("generate --model gmm --n 300 --d 2 --snr 3 --seed 7 --output " + data +
                    " --truth " + Dir() + "gem.json").exit_code, 0);
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget +
                    " --dataset D --epsilon 2 --delta 1e-5").exit_code, 0);
  const std::string fit = "fit gradient-em --model gmm --method dp --tau 10 --input " + data +
                          " --iterations 3 --sigma 1 --epsilon 0.5 --delta 1e-6 --json "
                          "--calibration paper --budget-file " + budget + " --dataset D";
  RunResult r = RunDpem(fit + " --accountant zcdp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double certified = nlohmann::json::parse(r.out)["privacy"]["epsilon"].get<double>();
  nlohmann::json shown = Show(budget);
  const double spent = shown["datasets"][0]["spent_epsilon"].get<double>();
  EXPECT_GE(spent, certified);
  EXPECT_GT(spent, 0.5);
  EXPECT_LE(spent, 0.5 * (1 + 1e-9));
  // Linear composition certifies far more for the paper's noise: refused
  // before the charge (it used to be charged, then refused after the fit).
  r = RunDpem(fit + " --accountant linear");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("above the target"), std::string::npos) << r.err;
  shown = Show(budget);
  EXPECT_EQ(shown["datasets"][0]["charges"].get<int>(), 1);
  EXPECT_EQ(shown["datasets"][0]["spent_epsilon"].get<double>(), spent);
}

// 8 processes race for a budget that admits exactly 3 of their fits.
TEST(BudgetCliTest, ConcurrentFitsNeverOverspend) {
  const std::string data = MakeData("race.csv", 300), budget = Dir() + "race.db";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 3 --delta 1e-5").exit_code, 0);
  std::string script;
  for (int i = 0; i < 8; ++i) {
    const std::string tag = Dir() + "race" + std::to_string(i);
    script += "(" + std::string(DPEM_CLI_PATH) + " " + Fit(data, tag + ".json", budget, 1.0) +
              " 2>" + tag + ".err; echo $? >" + tag + ".rc) & ";
  }
  script += "wait";
  ASSERT_EQ(std::system(script.c_str()), 0);
  int ok = 0, refused = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string tag = Dir() + "race" + std::to_string(i);
    const std::string rc = ReadBytes(tag + ".rc");
    const std::string err = ReadBytes(tag + ".err");
    if (rc == "0\n") ++ok;
    if (rc == "2\n" && err.find("exceeded") != std::string::npos) ++refused;
    EXPECT_EQ(fs::exists(tag + ".json"), rc == "0\n") << i;
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(refused, 5);
  const nlohmann::json shown = Show(budget);
  EXPECT_EQ(shown["datasets"][0]["charges"].get<int>(), 3);
  EXPECT_LE(shown["datasets"][0]["spent_epsilon"].get<double>(), 3.0);
}

// A long fit killed with SIGKILL after its charge: the file stays valid (show
// runs PRAGMA integrity_check) and the charge stays spent.
TEST(BudgetCliTest, KilledFitKeepsItsChargeAndTheFileStaysValid) {
  const std::string data = MakeData("long.csv", 20000), budget = Dir() + "kill.db";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 2 --delta 1e-5").exit_code, 0);
  const std::string out = Dir() + "killed.json";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string args = Fit(data, out, budget, 0.5, 100000);
    ::execl("/bin/sh", "sh", "-c", ("exec " + std::string(DPEM_CLI_PATH) + " " + args +
                                    " 2>/dev/null").c_str(), nullptr);
    ::_exit(127);
  }
  // Wait until the charge is committed (the fit then runs for a long time).
  int charges = 0;
  for (int i = 0; i < 2000 && charges == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const nlohmann::json shown = Show(budget);
    charges = shown.is_object() ? shown["datasets"][0]["charges"].get<int>() : 0;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the fit ended before it was killed";
  EXPECT_FALSE(fs::exists(out));
  const RunResult r = RunDpem("budget show --json --budget-file " + budget);
  ASSERT_EQ(r.exit_code, 0) << r.err;  // Includes PRAGMA integrity_check.
  const nlohmann::json shown = nlohmann::json::parse(r.out);
  EXPECT_EQ(shown["datasets"][0]["charges"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(shown["datasets"][0]["spent_epsilon"].get<double>(), 0.5);
  EXPECT_EQ(RunDpem(Fit(data, Dir() + "after.json", budget, 1.5)).exit_code, 0);
}

TEST(BudgetCliTest, BadBudgetCommands) {
  const std::string budget = Dir() + "b3.db";
  std::ofstream(Dir() + "text.db") << "not an SQLite file, some text of a certain length.....\n";
  for (const std::string& args :
       {"budget init --budget-file " + budget + " --dataset D --epsilon -1 --delta 0",
        "budget init --budget-file " + budget + " --dataset D --epsilon 1 --delta 1.5",
        "budget init --budget-file " + budget + " --epsilon 1 --delta 0",
        "budget init --budget-file " + Dir() + "nowhere/b.db --dataset D --epsilon 1 --delta 0",
        "budget init --budget-file " + Dir() + " --dataset D --epsilon 1 --delta 0",
        "budget show --budget-file " + Dir() + "missing.db",
        "budget show --budget-file " + Dir() + "text.db", std::string("budget")}) {
    const RunResult r = RunDpem(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  EXPECT_FALSE(fs::exists(budget));
}

}  // namespace
}  // namespace dpem::cli_testing
