// End-to-end tests of `--init` on `dpem fit gmm` and `dpem fit kmeans`: the
// default start by privacy, the start recorded in the model file, and the
// refusal of a data-dependent start for a private fit before any data is read.

#include <cstdio>
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

class InitCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::create_directories(Dir());
    // Three clusters of 40 records on a fixed grid.
    std::ofstream csv(Dir() + "data.csv");
    const double centre[3][2] = {{-1.0, 0.0}, {0.8, 0.6}, {0.2, -1.0}};
    for (int i = 0; i < 120; ++i) {
      const double dx = 0.01 * (i % 7) - 0.03, dy = 0.01 * (i % 5) - 0.02;
      csv << centre[i % 3][0] + dx << "," << centre[i % 3][1] + dy << "\n";
    }
  }
  static void TearDownTestSuite() { fs::remove_all(Dir()); }

  // Runs `fit <model>` with K = 3, J = 5 into Dir()/out.json.
  static RunResult Fit(const std::string& model, const std::string& extra,
                       const std::string& input = Dir() + "data.csv") {
    fs::remove(Dir() + "out.json");
    return RunDpem("fit " + model + " --input " + input + " --output " + Dir() +
                   "out.json --components 3 --iterations 5 --seed 3 --quiet " + extra);
  }
  static std::string RecordedInit() {
    return json::parse(ReadBytes(Dir() + "out.json")).at("init").get<std::string>();
  }
  // A user error (ExpectUserError) mentioning `mentions`, no model written.
  static void ExpectRefused(const RunResult& r, const std::string& mentions) {
    ExpectUserError(r, "the fit", mentions, Dir() + "out.json");
  }

  const std::string private_ = "--epsilon 1 --delta 1e-5 --data-norm 2 ";
};

TEST_F(InitCliTest, GmmDefaultStartFollowsPrivacyAndIsRecorded) {
  ASSERT_EQ(Fit("gmm", "--epsilon inf").exit_code, 0);
  EXPECT_EQ(RecordedInit(), "kmeans++");
  ASSERT_EQ(Fit("gmm", "--epsilon inf --init random").exit_code, 0);
  EXPECT_EQ(RecordedInit(), "random");
  ASSERT_EQ(Fit("gmm", private_).exit_code, 0);
  EXPECT_EQ(RecordedInit(), "private");
  ASSERT_EQ(Fit("gmm", private_ + "--init random").exit_code, 0);
  EXPECT_EQ(RecordedInit(), "random");
}

TEST_F(InitCliTest, IterationsDefaultByTheStart) {
  // Fit() passes --iterations 5; these runs leave it out.
  const auto run = [](const std::string& model, const std::string& extra) {
    fs::remove(Dir() + "out.json");
    return RunDpem("fit " + model + " --input " + Dir() + "data.csv --output " + Dir() +
                   "out.json --components 3 --seed 3 --quiet " + extra);
  };
  const auto iterations = [] {
    return json::parse(ReadBytes(Dir() + "out.json")).at("iterations").get<int>();
  };
  for (const std::string model : {"gmm", "kmeans --method cdp-gauss"}) {
    ASSERT_EQ(run(model, private_).exit_code, 0) << model;
    // k-means: 120 records at epsilon 1 make noisy centres (r >= 0.02,
    // fit_defaults.h): one iteration; at epsilon 1000, three. A mixture:
    // three at epsilon 1 (r >= kQuietCentreRatio), at 1000 quiet (r below
    // it): ten. At epsilon 1 a mixture runs the adaptive schedule's six
    // releases, three with --adaptive-iterations off.
    EXPECT_EQ(iterations(), model == "gmm" ? 6 : 1) << model;
    if (model == "gmm") {
      ASSERT_EQ(run(model, private_ + "--adaptive-iterations off").exit_code, 0);
      EXPECT_EQ(iterations(), 3);
      const RunResult bad = run(model, private_ + "--adaptive-iterations maybe");
      EXPECT_EQ(bad.exit_code, 2);
    }
    ASSERT_EQ(run(model, "--epsilon 1000 --delta 1e-5 --data-norm 2").exit_code, 0) << model;
    EXPECT_EQ(iterations(), model == "gmm" ? 10 : 3) << model;
    ASSERT_EQ(run(model, private_ + "--init random").exit_code, 0) << model;
    EXPECT_EQ(iterations(), 10) << model;
    ASSERT_EQ(run(model, "--epsilon inf").exit_code, 0) << model;
    EXPECT_EQ(iterations(), 100) << model;
  }
}

TEST_F(InitCliTest, GmmPrivateFitRefusesKmeansPlusPlusBeforeReadingData) {
  // The input does not exist: the refusal comes from the options alone.
  ExpectRefused(Fit("gmm", private_ + "--init kmeans++", Dir() + "missing.csv"), "k-means++");
  ExpectRefused(Fit("gmm", "--epsilon inf --init private", Dir() + "missing.csv"),
                "private start needs a private fit");
  ExpectRefused(Fit("gmm", "--epsilon inf --init kmeans"), "--init");
}

TEST_F(InitCliTest, KmeansDefaultSeedingFollowsPrivacy) {
  const std::string method = "--method cdp-gauss ";
  ASSERT_EQ(Fit("kmeans", method + "--epsilon inf").exit_code, 0);
  EXPECT_EQ(RecordedInit(), "kmeans++");
  ASSERT_EQ(Fit("kmeans", method + private_).exit_code, 0);
  EXPECT_EQ(RecordedInit(), "private");
  ASSERT_EQ(Fit("kmeans", "--method cdp-laplace " + private_).exit_code, 0);
  EXPECT_EQ(RecordedInit(), "private");
  // The published DPLloyd baseline keeps its random start, and refuses the
  // private one; plain Lloyd refuses it too.
  ASSERT_EQ(Fit("kmeans", "--method dplloyd " + private_).exit_code, 0);
  EXPECT_EQ(RecordedInit(), "random");
  ExpectRefused(Fit("kmeans", "--method dplloyd " + private_ + "--init private",
                    Dir() + "missing.csv"),
                "DPLloyd");
  ExpectRefused(Fit("kmeans", method + "--epsilon inf --init private", Dir() + "missing.csv"),
                "private start needs a private fit");
  ExpectRefused(Fit("kmeans", method + private_ + "--init kmeans++", Dir() + "missing.csv"),
                "k-means++");
}

}  // namespace
}  // namespace dpem::cli_testing
