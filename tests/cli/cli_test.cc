// End-to-end tests of the dpem binary: exit codes, one-line errors naming the
// flag, and JSON outputs checked against closed forms computed here.

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

const char* kAccount = "account --mechanism gaussian --compositions 10 --delta 1e-5 ";
const char* kCalibrate = "calibrate --iterations 10 --components 3 --delta 1e-4 ";

TEST(CliTest, AccountPrintsZcdpClosedForm) {
  const RunResult r =
      RunDpem(std::string(kAccount) + "--noise-multiplier 4 --accountant zcdp --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double rho = 10 / (2.0 * 16.0);  // J / (2 z^2).
  const double expected = rho + 2 * std::sqrt(rho * std::log(1e5));
  EXPECT_NEAR(j.at("epsilon").get<double>(), expected, 1e-9);
  EXPECT_EQ(j.at("accountant"), "zcdp");
  EXPECT_EQ(j.at("neighbour_relation"), "replace-one");
}

TEST(CliTest, AccountAcceptsEveryAccountantAndBothMechanisms) {
  for (const char* mech : {"gaussian", "laplace"}) {
    for (const char* acc : {"linear", "advanced", "kov", "mcdp", "zcdp", "zcdp-tight", "ma",
                            "rdp"}) {
      const RunResult r = RunDpem(std::string("account --mechanism ") + mech +
                                  " --noise-multiplier 3 --compositions 5 --delta 1e-6"
                                  " --json --accountant " + acc);
      ASSERT_EQ(r.exit_code, 0) << mech << " " << acc << ": " << r.err;
      const double eps = nlohmann::json::parse(r.out).at("epsilon").get<double>();
      EXPECT_TRUE(std::isfinite(eps) && eps > 0) << mech << " " << acc;
    }
  }
}

TEST(CliTest, LaplaceLinearIsJOverZ) {
  const RunResult r = RunDpem(
      "account --mechanism laplace --noise-multiplier 4 --compositions 8 --delta 1e-6 "
      "--accountant linear --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(nlohmann::json::parse(r.out).at("epsilon").get<double>(), 2.0, 1e-9);
}

// Discrete noise (the default of --noise, as every fit releases) is taken at
// its Renyi curve by the (eps, delta)-composition accountants, continuous
// noise at the exact analytic profile; the Renyi accountants agree.
TEST(CliTest, AccountTakesDiscreteGaussiansAtTheirRenyiCurve) {
  const auto epsilon = [](const std::string& flags) {
    const RunResult r = RunDpem(std::string(kAccount) + "--noise-multiplier 4 --json " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("epsilon").get<double>();
  };
  for (const char* acc : {"linear", "advanced", "kov"}) {
    const std::string a = std::string("--accountant ") + acc;
    EXPECT_EQ(epsilon(a), epsilon(a + " --noise discrete")) << acc;
    EXPECT_GT(epsilon(a), epsilon(a + " --noise continuous")) << acc;
  }
  EXPECT_EQ(epsilon("--accountant rdp"), epsilon("--accountant rdp --noise continuous"));
  const RunResult bad = RunDpem(std::string(kAccount) + "--noise-multiplier 4 --noise fuzzy");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--noise"), std::string::npos) << bad.err;
}

TEST(CliTest, CalibrateReaccountsWithinTarget) {
  const RunResult r = RunDpem(std::string(kCalibrate) + "--epsilon 1 --scenario GGG --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_LE(j.at("epsilon").get<double>(), 1.0);
  EXPECT_GE(j.at("epsilon").get<double>(), 0.99);
  EXPECT_EQ(j.at("total_releases"), 70);
  EXPECT_EQ(j.at("accountant"), "rdp");  // The documented default.
  ASSERT_EQ(j.at("releases").size(), 3u);
  for (const auto& release : j.at("releases")) EXPECT_EQ(release.at("mechanism"), "gaussian");
}

TEST(CliTest, CalibrateAllComparesEveryAccountant) {
  const RunResult r = RunDpem(std::string(kCalibrate) + "--epsilon 2 --scenario LLG "
                              "--accountant all --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("calibrations").size(), 8u);
  const RunResult table = RunDpem(std::string(kCalibrate) + "--epsilon 2 --accountant all");
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("zcdp-tight"), std::string::npos);
}

TEST(CliTest, BadNumbersNameTheFlag) {
  ExpectBadInput(std::string(kCalibrate) + "--epsilon 0", "--epsilon");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon -1", "--epsilon");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon nan", "--epsilon");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon inf", "--epsilon");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon abc", "--epsilon");
  ExpectBadInput("calibrate --epsilon 1 --iterations 10 --components 3 --delta 0", "--delta");
  ExpectBadInput("calibrate --epsilon 1 --iterations 10 --components 3 --delta 1", "--delta");
  ExpectBadInput("calibrate --epsilon 1 --iterations 10 --components 3 --delta 1.5",
                   "--delta");
  ExpectBadInput("calibrate --epsilon 1 --iterations 0 --components 3 --delta 1e-5",
                   "--iterations");
  ExpectBadInput("calibrate --epsilon 1 --iterations 10 --components 0 --delta 1e-5",
                   "--components");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon 1 --scenario GLG", "--scenario");
  ExpectBadInput(std::string(kAccount) + "--noise-multiplier 0", "--noise-multiplier");
  ExpectBadInput(std::string(kAccount) + "--noise-multiplier nan", "--noise-multiplier");
  ExpectBadInput("account --mechanism gaussian --noise-multiplier 1 --compositions 0 "
                   "--delta 1e-5", "--compositions");
}

TEST(CliTest, UnknownNamesListWhatIsAccepted) {
  ExpectBadInput(std::string(kAccount) + "--noise-multiplier 2 --accountant moments",
                   "accepted: linear, advanced, kov, mcdp, zcdp, zcdp-tight, ma, rdp");
  ExpectBadInput("account --mechanism cauchy --noise-multiplier 1 --compositions 1 "
                   "--delta 1e-5", "--mechanism");
  ExpectBadInput(std::string(kCalibrate) + "--epsilon 1 --accountant bogus", "--accountant");
}

TEST(CliTest, MissingFlagsAndUnknownCommandsAreUsageErrors) {
  ExpectBadInput("calibrate --epsilon 1 --iterations 10 --components 3", "--delta");
  ExpectBadInput("account --mechanism gaussian --compositions 3 --delta 1e-5",
                   "--noise-multiplier");
  ExpectBadInput("frobnicate", "frobnicate");
  ExpectBadInput("", "subcommand");
}

TEST(CliTest, HelpExplainsEveryFlag) {
  const RunResult r = RunDpem("calibrate --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--epsilon", "--delta", "--iterations", "--components",
                           "--scenario", "--accountant", "--per-release-delta", "--json"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
  const RunResult account = RunDpem("account --help");
  for (const char* flag : {"--mechanism", "--noise-multiplier", "--compositions", "--delta",
                           "--accountant", "--json"}) {
    EXPECT_NE(account.out.find(flag), std::string::npos) << flag;
  }
}

TEST(CliTest, SeededNoiseIsReproducibleAndSaysSo) {
  const std::string args = "sample-noise --distribution laplace --scale 2 -n 5 --seed 42 --json";
  const RunResult a = RunDpem(args), b = RunDpem(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const nlohmann::json ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja.at("samples"), jb.at("samples"));
  EXPECT_EQ(ja.at("seed"), 42);
  EXPECT_TRUE(ja.at("seeded").get<bool>());
  EXPECT_NE(ja.at("warning").get<std::string>().find("not for production"), std::string::npos);
  const RunResult os1 = RunDpem("sample-noise --distribution gaussian --scale 1 -n 3 --json");
  const RunResult os2 = RunDpem("sample-noise --distribution gaussian --scale 1 -n 3 --json");
  const nlohmann::json j1 = nlohmann::json::parse(os1.out), j2 = nlohmann::json::parse(os2.out);
  EXPECT_FALSE(j1.at("seeded").get<bool>());
  EXPECT_FALSE(j1.contains("seed"));
  EXPECT_NE(j1.at("samples"), j2.at("samples"));  // OS-keyed streams differ.
}

}  // namespace
}  // namespace dpem::cli_testing
