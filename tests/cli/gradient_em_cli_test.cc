// End-to-end tests of `dpem generate`, `dpem fit gradient-em` and `dpem
// score` of its model files: the files and JSON they produce, checked
// against what they must contain (scores against the models' densities
// written out), and bad flags, input or model files that must end in exit
// code 2 with one line on stderr.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "testing/gradient_em_data.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int CsvColumns(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  int commas = 0;
  for (char c : line) commas += c == ',';
  return commas + 1;
}

std::string Generate(const std::string& model, int n, int d, const std::string& extra = "") {
  const std::string data = Dir() + model + ".csv";
  const std::string truth = Dir() + model + ".json";
  const RunResult r = RunDpem("generate --model " + model + " --n " + std::to_string(n) +
                              " --d " + std::to_string(d) + " --snr 3 --seed 7 --output " +
                              data + " --truth " + truth + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return data;
}

TEST(GenerateCliTest, WritesDataInTheDocumentedLayoutAndTheTruth) {
  const std::string gmm = Generate("gmm", 50, 3);
  EXPECT_EQ(CsvColumns(gmm), 3);
  const std::string mrm = Generate("mrm", 50, 3);
  EXPECT_EQ(CsvColumns(mrm), 4);
  const std::string rmc = Generate("rmc", 50, 3, "--missing-prob 0.2");
  EXPECT_EQ(CsvColumns(rmc), 7);
  const json truth = json::parse(ReadBytes(Dir() + "rmc.json"));
  ASSERT_EQ(truth["beta"].size(), 3u);
  double norm2 = 0.0;
  for (double b : truth["beta"]) norm2 += b * b;
  EXPECT_NEAR(std::sqrt(norm2), 3.0 * truth["sigma"].get<double>(), 1e-12);
  // Same seed, same bytes.
  const std::string first = ReadBytes(gmm);
  Generate("gmm", 50, 3);
  EXPECT_EQ(ReadBytes(gmm), first);
}

TEST(FitGradientEmCliTest, PrivateFitPrintsBetaAndItsLedger) {
  const std::string data = Generate("gmm", 400, 2);
  const RunResult r = RunDpem("fit gradient-em --model gmm --method dp --input " + data +
                              " --epsilon 0.5 --delta 1e-3 --iterations 4 --sigma 1 --tau 10 "
                              "--seed 3 --json --trajectory");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["beta"].size(), 2u);
  EXPECT_EQ(j["trajectory"].size(), 5u);
  const json& g = j["privacy"];
  EXPECT_EQ(g["neighbour_relation"], "replace-one");
  EXPECT_EQ(g["releases"].size(), 4u);
  EXPECT_LE(g["epsilon"].get<double>(), 0.5);
  // L2 sensitivity sqrt(d) (4 sqrt 2 / 3) s / n, s from the printed scale.
  const double s = g["robust_scale"];
  const double sens = std::sqrt(2.0) * 4.0 * std::sqrt(2.0) / 3.0 * s / 400.0;
  EXPECT_GE(g["releases"][0]["sensitivity"].get<double>(), sens);
  EXPECT_LE(g["releases"][0]["sensitivity"].get<double>(), sens * 1.0001);
  // Reproducible with the seed.
  const RunResult again = RunDpem("fit gradient-em --model gmm --method dp --input " + data +
                                  " --epsilon 0.5 --delta 1e-3 --iterations 4 --sigma 1 "
                                  "--tau 10 --seed 3 --json --trajectory");
  EXPECT_EQ(again.out, r.out);
}

TEST(FitGradientEmCliTest, EveryMethodRuns) {
  const std::string gmm = Generate("gmm", 300, 2);
  const std::string common = " --epsilon 1 --delta 1e-3 --iterations 3 --sigma 1 --seed 1 --json";
  for (const std::string m : {"dp --tau 10", "clipped --clip 1", "dp-em --tau 10"}) {
    const RunResult r =
        RunDpem("fit gradient-em --model gmm --input " + gmm + " --method " + m + common);
    EXPECT_EQ(r.exit_code, 0) << m << ": " << r.err;
  }
  const RunResult np = RunDpem("fit gradient-em --model gmm --method nonprivate --input " + gmm +
                               " --iterations 3 --sigma 1 --json");
  ASSERT_EQ(np.exit_code, 0) << np.err;
  EXPECT_FALSE(json::parse(np.out)["privacy"]["private"].get<bool>());
  const std::string rmc = Generate("rmc", 300, 2, "--missing-prob 0.1");
  const RunResult r = RunDpem("fit gradient-em --model rmc --method dp --tau 20 --input " + rmc +
                              common);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string mrm = Generate("mrm", 300, 2);
  const RunResult p = RunDpem("fit gradient-em --model mrm --method clipped --clip 1 "
                              "--calibration paper --accountant zcdp --input " + mrm + common);
  EXPECT_EQ(p.exit_code, 0) << p.err;
}

// Writes `rows` (each in the model's layout) as a CSV file at `path`.
void WriteCsv(const std::string& path, const std::vector<std::vector<double>>& rows) {
  std::ofstream out(path);
  for (const std::vector<double>& row : rows) {
    for (std::size_t j = 0; j < row.size(); ++j) out << (j ? "," : "") << Num(row[j]);
    out << "\n";
  }
}

// The mean of NaiveGradientEmLogLikelihood over `rows` under the model file
// `model` (its beta and sigma).
double NaiveMeanLogLikelihood(const json& model, const std::vector<std::vector<double>>& rows) {
  const std::vector<double> b = model.at("beta");
  const Eigen::VectorXd beta = Eigen::Map<const Eigen::VectorXd>(b.data(), b.size());
  const GradientEmModel kind = *ParseGradientEmModel(model.at("gradient_em_model").get<std::string>());
  double total = 0;
  for (const std::vector<double>& row : rows) {
    const Eigen::VectorXd record = Eigen::Map<const Eigen::VectorXd>(row.data(), row.size());
    total += test_support::NaiveGradientEmLogLikelihood(kind, record, beta,
                                                        model.at("sigma").get<double>());
  }
  return total / static_cast<double>(rows.size());
}

// Records to score, in each model's layout, with beta of 2 coordinates.
std::vector<std::vector<double>> ScoreRecords(const std::string& model) {
  if (model == "gmm") return {{1.0, -0.5}, {-2.0, 0.25}, {0.0, 3.0}};
  if (model == "mrm") return {{0.5, 1.0, -0.5}, {-1.0, -2.0, 0.25}, {2.5, 0.0, 3.0}};
  return {{0.5, 1.0, -0.5, 1, 1}, {-1.0, 0.0, 0.25, 0, 1}, {2.5, 0.0, 0.0, 0, 0}};
}

// fit gradient-em --output writes the model file that --json prints, and
// dpem score reads it: the mean log-likelihood of records in the fit's
// layout (the response y first), which is the model's density at them.
TEST(FitGradientEmCliTest, TheModelFileIsScoredByItsDensity) {
  for (const std::string model : {"gmm", "mrm", "rmc"}) {
    SCOPED_TRACE(model);
    const std::string data = Generate(model, 300, 2, model == "rmc" ? "--missing-prob 0.2" : "");
    const std::string file = Dir() + model + "_model.json";
    fs::remove(file);
    const RunResult r = RunDpem("fit gradient-em --model " + model + " --method dp --input " +
                                data + " --epsilon 1 --delta 1e-5 --iterations 3 --sigma 0.8 "
                                "--tau 10 --json --output " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(ReadBytes(file), r.out);
    const json m = json::parse(r.out);
    EXPECT_EQ(m.at("format"), "dpem-gradient-em");
    EXPECT_EQ(m.at("gradient_em_model"), model);
    EXPECT_FALSE(m.at("privacy").at("guarantee_void").get<bool>());
    const std::string records = Dir() + model + "_score.csv";
    WriteCsv(records, ScoreRecords(model));
    const RunResult s = RunDpem("score --model " + file + " --input " + records + " --json");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const json scores = json::parse(s.out);
    EXPECT_EQ(scores.at("n"), 3);
    const double expected = NaiveMeanLogLikelihood(m, ScoreRecords(model));
    EXPECT_NEAR(scores.at("mean_log_likelihood").get<double>(), expected,
                1e-12 * std::abs(expected));
  }
}

TEST(FitGradientEmCliTest, ScoreRefusesOtherDataAndDamagedModelFiles) {
  const std::string data = Generate("mrm", 200, 2);
  const std::string file = Dir() + "mrm_refused.json";
  ASSERT_EQ(RunDpem("fit gradient-em --model mrm --method nonprivate --input " + data +
                    " --iterations 2 --sigma 1 --output " + file).exit_code, 0);
  const std::string gmm = Generate("gmm", 20, 2);
  ExpectBadInput("score --model " + file + " --input " + gmm, "reads 3 columns");
  ExpectBadInput("predict --model " + file + " --input " + data,
                 "'predict' does not apply to gradient EM models");
  json damaged = json::parse(ReadBytes(file));
  damaged["beta"].push_back(1.0);
  const std::string bad = Dir() + "mrm_damaged.json";
  std::ofstream(bad) << damaged.dump();
  ExpectBadInput("score --model " + bad + " --input " + data, bad + ": 'beta' must hold");
  // A file fit gradient-em cannot create is refused before the fit.
  ExpectBadInput("fit gradient-em --model mrm --method nonprivate --input " + data +
                     " --iterations 2 --sigma 1 --output " + Dir() + "nodir/m.json",
                 "nodir");
}

TEST(FitGradientEmCliTest, BadFlagsAndInputEndInOneLineAndExitTwo) {
  const std::string gmm = Generate("gmm", 100, 2);
  const std::string fit = "fit gradient-em --model gmm --input " + gmm + " --iterations 3 ";
  ExpectBadInputs(fit, {{"--sigma 1 --epsilon 1 --delta 1e-3", "--tau"},
                        {"--sigma 1 --method clipped --epsilon 1 --delta 1e-3", "--clip"},
                        {"--sigma 1 --tau 1 --delta 1e-3", "--epsilon"},
                        {"--sigma 1 --tau 1 --epsilon 1", "--delta"},
                        {"--sigma 1 --tau 1 --epsilon -1 --delta 1e-3", "--epsilon"},
                        {"--sigma 1 --tau 1 --epsilon 1 --delta 1.5", "--delta"},
                        {"--tau 1 --epsilon 1 --delta 1e-3", "--sigma"},
                        {"--sigma 1 --tau 1 --epsilon 1 --delta 1e-3 --method nope", "--method"},
                        {"--sigma 1 --tau 1 --epsilon 1 --delta 1e-3 --calibration x",
                         "--calibration"},
                        {"--sigma 1 --tau 1 --epsilon 1 --delta 1e-3 --init 1,2,3", "d = 2"},
                        {"--sigma 1 --method nonprivate --epsilon 1", "nonprivate"}});
  ExpectBadInput("fit gradient-em --model xyz --input " + gmm + " --iterations 3 --sigma 1",
                 "--model");
  ExpectBadInput("fit gradient-em --model gmm --method dp-em --input " + gmm +
                     " --iterations 0 --sigma 1 --tau 1 --epsilon 1 --delta 1e-3",
                 "--iterations");
  ExpectBadInput("fit gradient-em --model rmc --input " + gmm +
                     " --iterations 2 --sigma 1 --tau 1 --epsilon 1 --delta 1e-3",
                 "rmc data");
  ExpectBadInput("fit gradient-em --model gmm --input " + Dir() + "missing.csv" +
                     " --iterations 2 --sigma 1 --tau 1 --epsilon 1 --delta 1e-3",
                 "missing.csv");
  const std::string out = " --output " + Dir() + "x.csv --truth " + Dir() + "x.json";
  ExpectBadInput("generate --model gmm --n 0 --d 2 --snr 3" + out, "--n");
  ExpectBadInput("generate --model gmm --n 10 --d 2 --snr -3" + out, "--snr");
  ExpectBadInput("generate --model gmm --n 10 --d 2 --snr 3 --missing-prob 0.2" + out,
                 "--missing-prob");
  ExpectBadInput("generate --model rmc --n 10 --d 2 --snr 3 --missing-prob 1" + out,
                 "--missing-prob");
  ExpectBadInput("generate --model gmm --n 10 --d 2 --snr 3 --seed -4" + out, "--seed");
  ExpectBadInput("generate --model gmm --n ten --d 2 --snr 3" + out, "--n");
  ExpectBadInput("generate --model gmm --n 10 --d 2 --snr 3 --output " + Dir() +
                     "nodir/x.csv --truth " + Dir() + "x.json",
                 "nodir");
  EXPECT_FALSE(fs::exists(Dir() + "x.csv"));
}

}  // namespace
}  // namespace dpem::cli_testing
