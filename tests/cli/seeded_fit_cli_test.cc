// End-to-end tests of seeded fits: every fit command's private fit with
// --seed writes or prints guarantee_void true with the seeded generator's
// reason (its noise is reproducible from the seed, so the release is not
// differentially private) and says so on stderr exactly once; without --seed
// the guarantee stands; a non-private fit claims none. A seeded private fit
// with --budget-file is still charged.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "testing/void_reasons.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;
using test_support::IsSeededGeneratorReason;
using nlohmann::json;

// 300 deterministic 2-D records in three clusters, inside the ball of radius 3.
std::string Data() {
  const std::string path = Dir() + "seeded_data.csv";
  std::ofstream out(path);
  for (int i = 0; i < 300; ++i) {
    out << (i % 3) - 1 + 0.01 * (i % 17) << "," << (i % 2) + 0.01 * (i % 13) << "\n";
  }
  return path;
}

int Occurrences(const std::string& text, const std::string& needle) {
  int count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// A seeded private fit: exit 0, one stderr line (the void reason), and a
// guarantee that is void for exactly that reason, the seed kept.
void ExpectVoidBySeed(const std::string& what, const RunResult& r, const json& privacy) {
  ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << what << ": " << r.err;
  EXPECT_EQ(Occurrences(r.err, "guarantee is VOID"), 1) << what << ": " << r.err;
  EXPECT_TRUE(IsSeededGeneratorReason(r.err)) << what << ": " << r.err;
  EXPECT_TRUE(privacy.at("private").get<bool>()) << what;
  EXPECT_TRUE(privacy.at("guarantee_void").get<bool>()) << what;
  ASSERT_EQ(privacy.at("void_reasons").size(), 1u) << what;
  EXPECT_TRUE(IsSeededGeneratorReason(privacy.at("void_reasons")[0].get<std::string>())) << what;
}

// The same fit without --seed: the guarantee stands and nothing is printed.
void ExpectNotVoid(const std::string& what, const RunResult& r, const json& privacy) {
  ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
  EXPECT_TRUE(r.err.empty()) << what << ": " << r.err;
  EXPECT_TRUE(privacy.at("private").get<bool>()) << what;
  EXPECT_FALSE(privacy.at("guarantee_void").get<bool>()) << what;
  EXPECT_TRUE(privacy.at("void_reasons").empty()) << what;
}

// A model file's privacy block ({} if it was not written).
json Privacy(const std::string& model) {
  const json m = json::parse(ReadBytes(model), nullptr, false);
  return m.is_object() && m.contains("privacy") ? m.at("privacy") : json::object();
}

// Runs `fit` (a model-file fit command, without --input and --output) with
// --seed 5 and without; then non-privately (`plain`) with --seed 5.
void CheckModelFileFit(const std::string& name, const std::string& fit,
                       const std::string& plain) {
  const std::string io = " --input " + Data() + " --output " + Dir() + name;
  RunResult r = RunDpem(fit + io + "_seeded.json --seed 5");
  ExpectVoidBySeed(name, r, Privacy(Dir() + name + "_seeded.json"));
  EXPECT_EQ(Privacy(Dir() + name + "_seeded.json").value("seed", -1), 5) << name;
  r = RunDpem(fit + io + "_keyed.json");
  ExpectNotVoid(name, r, Privacy(Dir() + name + "_keyed.json"));
  r = RunDpem(plain + io + "_plain.json --seed 5");
  ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  EXPECT_TRUE(r.err.empty()) << name << ": " << r.err;
  const json p = Privacy(Dir() + name + "_plain.json");
  EXPECT_FALSE(p.at("private").get<bool>()) << name;
  EXPECT_FALSE(p.at("guarantee_void").get<bool>()) << name;
}

TEST(SeededFitCliTest, FitGmmEveryMechanism) {
  const std::string base = "fit gmm --components 2 --iterations 2 --data-norm 3 ";
  for (const std::string m : {"joint", "GGG", "LLG"}) {
    CheckModelFileFit("gmm_" + m, base + "--epsilon 1 --delta 1e-5 --mechanisms " + m,
                      base + "--epsilon inf");
  }
}

TEST(SeededFitCliTest, FitFa) {
  const std::string base = "fit fa --factors 1 --iterations 5 --data-norm 3 ";
  CheckModelFileFit("fa", base + "--epsilon 1 --delta 1e-5", base + "--epsilon inf");
}

TEST(SeededFitCliTest, FitKmeansEveryMethod) {
  const std::string base = "fit kmeans --components 3 --iterations 2 --data-norm 3 --method ";
  for (const std::string m : {"cdp-gauss", "cdp-laplace", "dplloyd", "dplloyd-zcdp"}) {
    const std::string delta = m == "dplloyd" ? "" : " --delta 1e-5";
    CheckModelFileFit("kmeans_" + m, base + m + " --epsilon 1" + delta,
                      base + m + " --epsilon inf");
  }
}

TEST(SeededFitCliTest, FitGradientEmEveryPrivateMethod) {
  const std::string base = "fit gradient-em --model gmm --iterations 3 --sigma 1 --method ";
  for (const std::string m : {"dp --tau 10", "clipped --clip 1", "dp-em --tau 10"}) {
    CheckModelFileFit("gradient_em_" + m.substr(0, m.find(' ')),
                      base + m + " --epsilon 1 --delta 1e-3", base + "nonprivate");
  }
}

// A seeded private fit with --budget-file is charged like any other: its
// release still used the data, so the budget counts it (its loss is in fact
// unbounded, which the void model file says).
TEST(SeededFitCliTest, ASeededPrivateFitIsStillCharged) {
  const std::string budget = Dir() + "seeded.db";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --dataset D --epsilon 1 "
                    "--delta 1e-5").exit_code, 0);
  const std::string model = Dir() + "charged.json";
  const RunResult r = RunDpem("fit gmm --input " + Data() + " --output " + model +
                              " --components 2 --iterations 2 --data-norm 3 --epsilon 0.75 "
                              "--delta 1e-6 --seed 5 --budget-file " + budget + " --dataset D");
  ExpectVoidBySeed("budget", r, Privacy(model));
  const RunResult shown = RunDpem("budget show --json --budget-file " + budget);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const json account = json::parse(shown.out).at("datasets").at(0);
  EXPECT_EQ(account.at("charges").get<int>(), 1);
  EXPECT_DOUBLE_EQ(account.at("spent_epsilon").get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(account.at("spent_delta").get<double>(), 1e-6);
}

}  // namespace
}  // namespace dpem::cli_testing
