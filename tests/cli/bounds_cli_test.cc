// End-to-end tests of `dpem bounds` and `dpem fit gmm --data-norm auto`
// (docs/bounds.md): a domain released from data far from the origin, read
// back by fit --bounds, composed into a fit's ledger, charged to a budget.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// 2000 deterministic records in a 0.2 x 0.2 square around (100, -50): far
// from the origin, as in the issue.
std::string FarData() {
  const std::string path = Dir() + "far.csv";
  std::ofstream out(path);
  for (int i = 0; i < 2000; ++i) {
    out << 100.0 + 0.1 * ((i % 41) / 20.0 - 1) << "," << -50.0 + 0.1 * ((i % 37) / 18.0 - 1)
        << "\n";
  }
  return path;
}

double MeanLogLikelihood(const std::string& model, const std::string& data) {
  const RunResult r = RunDpem("score --json --model " + model + " --input " + data);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out).at("mean_log_likelihood").get<double>();
}

TEST(BoundsCliTest, ReleasesADomainThatFitReads) {
  const std::string data = FarData(), out = Dir() + "bounds.json";
  fs::remove(out);
  const RunResult r =
      RunDpem("bounds --input " + data + " --epsilon 4 --seed 1 --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--data-norm "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("guarantee is VOID"), std::string::npos) << r.err;  // Seeded.
  const json b = json::parse(ReadBytes(out));
  EXPECT_NEAR(b.at("data_center")[0].get<double>(), 100.0, 0.05);
  EXPECT_NEAR(b.at("data_center")[1].get<double>(), -50.0, 0.05);
  EXPECT_GT(b.at("data_norm").get<double>(), 0.05);
  EXPECT_LT(b.at("data_norm").get<double>(), 0.5);
  EXPECT_EQ(b.at("privacy").at("releases").size(), 7u);
  EXPECT_TRUE(b.at("privacy").at("guarantee_void").get<bool>());
  const std::string fit = "fit gmm --input " + data + " --output " + Dir() +
                          "fromfile.json --components 2 --iterations 3 --epsilon 1 "
                          "--delta 1e-5 --quiet --bounds ";
  // A seeded (void) domain is refused: the fit could not claim a guarantee.
  const RunResult refused = RunDpem(fit + out);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("void"), std::string::npos) << refused.err;
  const std::string keyed = Dir() + "bounds_keyed.json";
  fs::remove(keyed);
  ASSERT_EQ(RunDpem("bounds --input " + data + " --epsilon 4 --output " + keyed).exit_code, 0);
  const RunResult accepted = RunDpem(fit + keyed);
  ASSERT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_FALSE(json::parse(ReadBytes(Dir() + "fromfile.json"))
                   .at("privacy").at("guarantee_void").get<bool>());
}

TEST(BoundsCliTest, AutoDomainFitBeatsAWrongDomainAndCertifiesTheTotal) {
  const std::string data = FarData(), model = Dir() + "auto.json", bad = Dir() + "bad.json";
  fs::remove(model);
  fs::remove(bad);
  const std::string common = " --input " + data + " --components 2 --iterations 5 "
                             "--delta 1e-5 --seed 3 --quiet --epsilon 2";
  RunResult r = RunDpem("fit gmm --output " + model + common +
                        " --data-norm auto --bounds-epsilon 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunDpem("fit gmm --output " + bad + common + " --data-norm 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(ReadBytes(model)).at("privacy");
  // Bounds, the private start, then one per iteration.
  EXPECT_EQ(p.at("releases").size(), 7u + 2u + 5u);
  EXPECT_NEAR(p.at("target_epsilon").get<double>(), 2.0, 2e-3);
  EXPECT_LE(p.at("epsilon").get<double>(), p.at("target_epsilon").get<double>());
  EXPECT_GT(MeanLogLikelihood(model, data), MeanLogLikelihood(bad, data) + 100.0);
}

// fit kmeans takes the same domain flags (tools/domain_flags.h): with the
// domain released inside the fit, the centres land on the far data (a domain
// around the origin would clip every record onto its boundary), and the
// model's ledger and epsilon cover the bounds too.
TEST(BoundsCliTest, AutoDomainKmeansFitLandsOnTheDataAndCertifiesTheTotal) {
  const std::string data = FarData(), model = Dir() + "auto_kmeans.json";
  fs::remove(model);
  const RunResult r = RunDpem("fit kmeans --method cdp-gauss --input " + data + " --output " +
                              model + " --components 2 --iterations 3 --delta 1e-5 --seed 3 "
                              "--quiet --epsilon 2 --data-norm auto --bounds-epsilon 0.5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = json::parse(ReadBytes(model));
  const json& p = m.at("privacy");
  // Bounds, the private start, then one per iteration.
  EXPECT_EQ(p.at("releases").size(), 7u + 2u + 3u);
  EXPECT_NEAR(p.at("target_epsilon").get<double>(), 2.0, 2e-3);
  EXPECT_LE(p.at("epsilon").get<double>(), p.at("target_epsilon").get<double>());
  // The records lie within 0.15 of (100, -50).
  for (const json& c : m.at("centres")) {
    EXPECT_LT(std::hypot(c[0].get<double>() - 100.0, c[1].get<double>() + 50.0), 1.0) << c;
  }
  const RunResult score = RunDpem("score --model " + model + " --input " + data);
  EXPECT_EQ(score.exit_code, 0) << score.err;  // The model file reads back.
  EXPECT_EQ(RunDpem("fit kmeans --method cdp-gauss --input " + data + " --output " + model +
                    " --components 2 --epsilon inf --data-norm auto --bounds-epsilon 0.5")
                .exit_code,
            2);  // auto needs a private fit.
}

TEST(BoundsCliTest, RefusesInconsistentFlags) {
  const std::string data = FarData(), base = "fit gmm --input " + data + " --output " + Dir() +
                                             "never.json --components 2 --iterations 2 "
                                             "--delta 1e-5 --epsilon 1";
  EXPECT_EQ(RunDpem(base + " --data-norm auto").exit_code, 2);
  EXPECT_EQ(RunDpem(base + " --data-norm auto --bounds-epsilon 1").exit_code, 2);
  EXPECT_EQ(RunDpem(base + " --data-norm 1 --bounds-epsilon 0.1").exit_code, 2);
  EXPECT_EQ(RunDpem(base + " --data-norm auto --bounds-epsilon 0.1 --data-center 1,2").exit_code,
            2);
  // Flags that were silently dropped before (review finding): --bounds-epsilon
  // beside --bounds (no release happened), --data-norm-from-data beside auto.
  const std::string keyed = Dir() + "bounds_for_flags.json";
  fs::remove(keyed);
  ASSERT_EQ(RunDpem("bounds --input " + data + " --epsilon 1 --output " + keyed).exit_code, 0);
  EXPECT_EQ(RunDpem(base + " --bounds " + keyed + " --bounds-epsilon 0.1").exit_code, 2);
  EXPECT_EQ(RunDpem(base + " --data-norm auto --bounds-epsilon 0.1 --data-norm-from-data")
                .exit_code, 2);
  EXPECT_EQ(RunDpem("bounds --input " + data).exit_code, 2);  // No --epsilon.
  EXPECT_EQ(RunDpem("bounds --input " + data + " --epsilon 1 --quantile 1").exit_code, 2);
  EXPECT_FALSE(fs::exists(Dir() + "never.json"));
}

TEST(BoundsCliTest, ChargesTheBudgetBeforeReadingTheData) {
  const std::string data = FarData(), budget = Dir() + "bounds_budget.db";
  fs::remove(budget);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 1 --delta 1e-5").exit_code, 0);
  const std::string bounds = "bounds --input " + data + " --budget-file " + budget +
                             " --epsilon 0.6 --json";
  EXPECT_EQ(RunDpem(bounds).exit_code, 0);
  const RunResult r = RunDpem(bounds);  // 1.2 > 1.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exceeded"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpem::cli_testing
