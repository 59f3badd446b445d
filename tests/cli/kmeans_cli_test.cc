// End-to-end tests of `dpem fit kmeans`, and of `score` and `predict` on
// k-means model files: happy paths checked against values computed here from
// the model file, and bad input that must end in exit code 2, one stderr line
// and no output file.
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kN = 300, kK = 3, kJ = 5;

// Three 2-D clusters around (10, -20), inside the ball of radius 3 there.
std::vector<std::array<double, 2>> MakeData() {
  const double centres[kK][2] = {{8.5, -20.0}, {11.0, -19.0}, {10.0, -22.0}};
  return ThreeClusters(centres, 0.2, 7, kN);
}

// Brute-force nearest centre and NICV from the model file's centres.
int Nearest(const json& centres, const std::array<double, 2>& r, double* dist) {
  int best = 0;
  double best_d = INFINITY;
  for (size_t k = 0; k < centres.size(); ++k) {
    const double dx = r[0] - centres[k][0].get<double>();
    const double dy = r[1] - centres[k][1].get<double>();
    if (dx * dx + dy * dy < best_d) {
      best_d = dx * dx + dy * dy;
      best = static_cast<int>(k);
    }
  }
  if (dist) *dist = best_d;
  return best;
}

class KmeansCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::create_directories(Dir());
    std::string csv = "x,y\n";
    for (const auto& r : MakeData()) csv += Num(r[0]) + "," + Num(r[1]) + "\n";
    std::ofstream(Dir() + "data.csv") << csv;
  }
  static void TearDownTestSuite() { fs::remove_all(Dir()); }

  static RunResult Fit(const std::string& name, const std::string& extra) {
    return RunDpem("fit kmeans --input " + Dir() + "data.csv --output " + Dir() + name +
                   " --components 3 --iterations 5 " + extra);
  }
  static json Model(const std::string& name) { return json::parse(ReadBytes(Dir() + name)); }

  const std::string domain_ = "--data-norm 3 --data-center 10,-20 --seed 5 --quiet ";
};

TEST_F(KmeansCliTest, EveryMethodWritesAPrivateModel) {
  // Releases per iteration, and of the start: the private start (two
  // releases) is the default of cdp-gauss and cdp-laplace; the DPLloyd
  // baselines start at random.
  struct Method {
    const char* name;
    size_t per_iteration;
    size_t start;
  };
  const Method methods[] = {
      {"cdp-gauss", 1, 2}, {"cdp-laplace", 2, 2}, {"dplloyd", 1, 0}, {"dplloyd-zcdp", 1, 0}};
  for (const auto& [method, per_iteration, start] : methods) {
    const std::string name = std::string(method) + ".json";
    const RunResult r = Fit(name, domain_ + "--epsilon 1 --delta 1e-4 --method " + method);
    ASSERT_EQ(r.exit_code, 0) << method << ": " << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_TRUE(r.err.empty()) << r.err;
    const json m = Model(name);
    EXPECT_EQ(m.at("format"), "dpem-kmeans");
    EXPECT_EQ(m.at("method"), method);
    EXPECT_EQ(m.at("centres").size(), static_cast<size_t>(kK));
    const json& p = m.at("privacy");
    EXPECT_TRUE(p.at("private").get<bool>());
    EXPECT_EQ(p.at("neighbour_relation"), "replace-one");
    EXPECT_LE(p.at("epsilon").get<double>(), 1.0);
    EXPECT_EQ(p.at("releases").size(), start + per_iteration * kJ) << method;
    EXPECT_EQ(m.at("init"), start ? "private" : "random") << method;
    EXPECT_EQ(m.at("data_transform").at("data_norm"), 3.0);
    // Centres in original units, inside the public domain.
    for (const json& c : m.at("centres")) {
      EXPECT_LE(std::hypot(c[0].get<double>() - 10, c[1].get<double>() + 20), 3 + 1e-9);
    }
  }
  EXPECT_EQ(Model("dplloyd.json").at("privacy").at("accountant"), "linear");
  EXPECT_EQ(Model("dplloyd.json").at("privacy").at("delta"), 0.0);
  EXPECT_EQ(Model("dplloyd-zcdp.json").at("privacy").at("accountant"), "zcdp");
}

TEST_F(KmeansCliTest, ScoreAndPredictMatchTheCentres) {
  ASSERT_EQ(Fit("plain.json", domain_ + "--epsilon inf --method cdp-gauss").exit_code, 0);
  const json m = Model("plain.json");
  EXPECT_FALSE(m.at("privacy").at("private").get<bool>());
  const auto x = MakeData();
  double sse = 0;
  std::string labels;
  for (const auto& r : x) {
    double d = 0;
    labels += std::to_string(Nearest(m.at("centres"), r, &d)) + "\n";
    sse += d;
  }
  const RunResult s = RunDpem("score --json --model " + Dir() + "plain.json --input " + Dir() +
                              "data.csv");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NEAR(json::parse(s.out).at("nicv").get<double>(), sse / kN, 1e-9);
  const RunResult p = RunDpem("predict --model " + Dir() + "plain.json --input " + Dir() +
                              "data.csv");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out, labels);
  // Plain Lloyd from a start drawn in the domain (seed 5) on three clean
  // blobs: NICV near the within-blob variance 2 * 0.2^2 = 0.08.
  EXPECT_LT(sse / kN, 0.5);
}

TEST_F(KmeansCliTest, BadInputIsOneLineAndExitTwo) {
  const std::string out = Dir() + "bad.json";
  const std::string base = "fit kmeans --input " + Dir() + "data.csv --output " + out +
                           " --iterations 5 --seed 1 ";
  ExpectBadInput(base + "--components 301 --epsilon 1 --delta 1e-4 --data-norm 3 "
                        "--method cdp-gauss",
                 "exceeds the number of records", out);
  ExpectBadInput(base + "--components 0 --epsilon 1 --method dplloyd --data-norm 3",
                 "--components", out);
  ExpectBadInput(base + "--components 3 --epsilon 1 --method cdp-gauss --data-norm 3",
                 "--delta", out);
  ExpectBadInput(base + "--components 3 --epsilon 1 --delta 1e-4 --method cdp-gauss",
                 "--data-norm", out);
  ExpectBadInput(base + "--components 3 --epsilon -1 --delta 1e-4 --data-norm 3 "
                        "--method cdp-gauss",
                 "--epsilon", out);
  ExpectBadInput(base + "--components 3 --epsilon 1 --delta 1e-4 --data-norm 3 "
                        "--method lloyd",
                 "--method", out);
  ExpectBadInput(base + "--components 3 --epsilon 1 --delta 1e-4 --data-norm 3 "
                        "--method dplloyd --accountant rdp",
                 "--accountant", out);
  ExpectBadInput(base + "--components 3 --epsilon 1 --delta 1e-4 --data-norm 3 "
                        "--data-center 1,2,3 --method cdp-gauss",
                 "centre", out);
  // dplloyd needs no delta.
  const RunResult ok = RunDpem(base + "--components 3 --epsilon 1 --data-norm 3 "
                                      "--data-center 10,-20 --method dplloyd --quiet");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ExpectBadInput("score --model " + Dir() + "missing.json --input " + Dir() + "data.csv",
                 "missing.json");
  std::ofstream(Dir() + "data3.csv") << "1,2,3\n4,5,6\n";
  ASSERT_EQ(Fit("m.json", "--epsilon inf --method cdp-gauss --quiet").exit_code, 0);
  ExpectBadInput("score --model " + Dir() + "m.json --input " + Dir() + "data3.csv",
                 "columns");
  ExpectBadInput("predict --proba --model " + Dir() + "m.json --input " + Dir() + "data.csv",
                 "--proba");
}

}  // namespace
}  // namespace dpem::cli_testing
