// End-to-end tests of `dpem fit gmm`, `score`, `predict` and `sample`: happy
// paths checked against values computed here from the model file, and bad
// input that must end in exit code 2, one stderr line and no output file.

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}
std::vector<std::string> Lines(const std::string& s) { return Split(s, '\n'); }

std::vector<double> Fields(const std::string& line) {
  std::vector<double> out;
  // strtod, not stod: a tiny probability may print as a subnormal.
  for (const std::string& f : Split(line, ',')) out.push_back(std::strtod(f.c_str(), nullptr));
  return out;
}

constexpr int kN = 300, kK = 3, kJ = 5;

// Test data: three 2-D clusters inside the ball of radius 2.
std::vector<std::array<double, 2>> MakeData() {
  const double centres[kK][2] = {{-1.0, 0.0}, {0.8, 0.6}, {0.2, -1.0}};
  return ThreeClusters(centres, 0.15, 20240611, kN);
}

std::string NpyBytes(const std::vector<std::array<double, 2>>& x, bool fortran, size_t keep) {
  std::string header = "{'descr': '<f8', 'fortran_order': " +
                       std::string(fortran ? "True" : "False") + ", 'shape': (" +
                       std::to_string(x.size()) + ", 2), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  for (const auto& row : x) bytes.append(reinterpret_cast<const char*>(row.data()), 16);
  return bytes.substr(0, keep);
}

// Mean log-likelihood of `x` under the model's 2-D mixture, computed by hand.
double MeanLogLikelihood(const json& model, const std::vector<std::array<double, 2>>& x) {
  const json& p = model.at("parameters");
  const size_t k = p.at("weights").size();
  double total = 0;
  for (const auto& row : x) {
    std::vector<double> terms;
    for (size_t c = 0; c < k; ++c) {
      const json& s = p.at("covariances")[c];
      const double a = s[0][0], b = s[0][1], cc = s[1][0], d = s[1][1];
      const double det = a * d - b * cc;
      const double dx = row[0] - p.at("means")[c][0].get<double>();
      const double dy = row[1] - p.at("means")[c][1].get<double>();
      const double quad = (d * dx * dx - (b + cc) * dx * dy + a * dy * dy) / det;
      terms.push_back(std::log(p.at("weights")[c].get<double>()) - std::log(2 * M_PI) -
                      0.5 * std::log(det) - 0.5 * quad);
    }
    double m = terms[0];
    for (double t : terms) m = std::max(m, t);
    double sum = 0;
    for (double t : terms) sum += std::exp(t - m);
    total += m + std::log(sum);
  }
  return total / static_cast<double>(x.size());
}

class GmmCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::create_directories(Dir());  // Again after TearDownTestSuite under --gtest_repeat.
    const auto x = MakeData();
    std::string csv = "x,y\n", csv3;
    for (const auto& r : x) {
      csv += Num(r[0]) + "," + Num(r[1]) + "\n";
      csv3 += Num(r[0]) + "," + Num(r[1]) + ",0.5\n";
    }
    WriteBytes(Dir() + "data.csv", csv);
    WriteBytes(Dir() + "data3.csv", csv3);
    WriteBytes(Dir() + "data.npy", NpyBytes(x, false, std::string::npos));
  }

  static void TearDownTestSuite() { fs::remove_all(Dir()); }

  static std::string Data() { return Dir() + "data.csv"; }

  // Fits K = 3, J = 5 on `input` into Dir()/name; returns the run.
  static RunResult Fit(const std::string& name, const std::string& extra,
                       const std::string& input = Data()) {
    return RunDpem("fit gmm --input " + input + " --output " + Dir() + name +
                   " --components 3 --iterations 5 " + extra);
  }

  static json Model(const std::string& name) { return json::parse(ReadBytes(Dir() + name)); }

  // `score --json` on the fit data equals the hand-computed mean log-likelihood.
  static void ExpectScoreMatches(const std::string& name, const std::string& input) {
    const RunResult r = RunDpem("score --json --model " + Dir() + name + " --input " + input);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double ll = json::parse(r.out).at("mean_log_likelihood").get<double>();
    ASSERT_TRUE(std::isfinite(ll)) << name;
    const double expected = MeanLogLikelihood(Model(name), MakeData());
    EXPECT_NEAR(ll, expected, 1e-9 * std::abs(expected)) << name;
  }

  const std::string private_ = "--epsilon 1 --delta 1e-5 --data-norm 2 --seed 5 --quiet ";
};

TEST_F(GmmCliTest, PrivateFitEveryCovarianceAndInputFormat) {
  for (const char* cov : {"full", "diag", "spherical"}) {
    for (const char* ext : {"csv", "npy"}) {
      const std::string name = std::string("private_") + cov + "_" + ext + ".json";
      const std::string input = Dir() + "data." + ext;
      const RunResult r = Fit(name, private_ + "--covariance " + cov, input);
      ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      EXPECT_TRUE(r.err.empty()) << "--quiet printed: " << r.err;
      const json m = Model(name);
      EXPECT_EQ(m.at("covariance_type"), cov);
      EXPECT_EQ(m.at("components"), kK);
      EXPECT_EQ(m.at("dimension"), 2);
      const json& p = m.at("privacy");
      EXPECT_TRUE(p.at("private").get<bool>());
      EXPECT_LE(p.at("epsilon").get<double>(), 1.0);
      EXPECT_EQ(p.at("neighbour_relation"), "replace-one");
      // The default private start (two releases, listed first), then the
      // default joint mechanism: one release per iteration.
      EXPECT_EQ(m.at("init"), "private");
      EXPECT_EQ(p.at("mechanisms"), "joint");
      ASSERT_EQ(p.at("releases").size(), static_cast<size_t>(2 + kJ)) << name;
      EXPECT_EQ(p.at("releases")[0].at("label"), "start / coarse counts and sums");
      // d = 2, below kSphericalFirstIterationMinDimension: equal iterations.
      EXPECT_FALSE(p.at("spherical_first_iteration").get<bool>());
      EXPECT_FALSE(p.at("diagonal_first_iteration").get<bool>());
      EXPECT_TRUE(p.at("iteration_weights").empty());
      EXPECT_TRUE(p.at("start_cell_frames").get<bool>());  // The default.
      EXPECT_EQ(p.at("seed"), 5);
      EXPECT_TRUE(p.at("seeded").get<bool>());
      // --seed: the noise is reproducible, so the guarantee is void, for that only.
      EXPECT_TRUE(p.at("guarantee_void").get<bool>());
      EXPECT_EQ(p.at("void_reasons").size(), 1u);
      ExpectScoreMatches(name, input);
    }
  }
}

TEST_F(GmmCliTest, TheStartsCellFramesCanBeTurnedOff) {
  for (const char* value : {"on", "off"}) {
    SCOPED_TRACE(value);
    const RunResult r = Fit("frames.json", private_ + "--start-cell-frames " + value);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json p = Model("frames.json").at("privacy");
    EXPECT_EQ(p.at("start_cell_frames").get<bool>(), std::string(value) == "on");
    ASSERT_EQ(p.at("releases").size(), static_cast<size_t>(2 + kJ));
    EXPECT_EQ(p.at("releases")[1].at("label"), "start / counts and sums");
    EXPECT_LE(p.at("epsilon").get<double>(), 1.0);
  }
  // Without the private start there is nothing to frame: recorded as off.
  const RunResult random =
      Fit("random.json", private_ + "--start-cell-frames on --init random");
  ASSERT_EQ(random.exit_code, 0) << random.err;
  EXPECT_FALSE(Model("random.json").at("privacy").at("start_cell_frames").get<bool>());
}

TEST_F(GmmCliTest, IterateAveragingByDefaultAndOff) {
  // N = 300 at epsilon 1 is noisy for the data (docs/gmm.md, "Averaging the
  // last iterates"): J = 5 from the private start averages its last 2.
  for (const char* value : {"", "--iterate-averaging on", "--iterate-averaging off"}) {
    SCOPED_TRACE(value);
    const RunResult r = Fit("averaged.json", private_ + value);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json m = Model("averaged.json");
    EXPECT_EQ(m.at("iterations"), kJ);
    const bool off = std::string(value).find("off") != std::string::npos;
    EXPECT_EQ(m.at("privacy").at("averaged_iterations"), off ? 1 : kJ / 2);
  }
  const RunResult bad = Fit("bad.json", private_ + "--iterate-averaging maybe");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--iterate-averaging"), std::string::npos) << bad.err;
}

TEST_F(GmmCliTest, NonPrivateFitEveryCovariance) {
  for (const char* cov : {"full", "diag", "spherical"}) {
    const std::string name = std::string("plain_") + cov + ".json";
    const RunResult r =
        Fit(name, std::string("--epsilon inf --seed 5 --covariance ") + cov, Dir() + "data.npy");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const json p = Model(name).at("privacy");
    EXPECT_FALSE(p.at("private").get<bool>());
    EXPECT_FALSE(p.contains("releases"));
    ExpectScoreMatches(name, Data());
  }
}

TEST_F(GmmCliTest, MapEstimatorAndLaplaceMechanisms) {
  for (const char* extra : {"--estimator map --mechanisms GGG", "--mechanisms LLG"}) {
    const RunResult r = Fit("variant.json", private_ + extra);
    ASSERT_EQ(r.exit_code, 0) << extra << ": " << r.err;
    const json p = Model("variant.json").at("privacy");
    EXPECT_LE(p.at("epsilon").get<double>(), 1.0) << extra;
    // The private start's two releases, then the papers' scenarios: 2K + 1
    // releases per iteration.
    EXPECT_EQ(p.at("releases").size(), static_cast<size_t>(2 + kJ * (2 * kK + 1))) << extra;
    ExpectScoreMatches("variant.json", Data());
  }
  EXPECT_EQ(Model("variant.json").at("privacy").at("mechanisms"), "LLG");
}

TEST_F(GmmCliTest, PredictLabelsAndProbabilities) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  const std::string base = "predict --model " + Dir() + "m.json --input " + Data();
  const RunResult labels = RunDpem(base);
  ASSERT_EQ(labels.exit_code, 0) << labels.err;
  const auto label_lines = Lines(labels.out);
  ASSERT_EQ(label_lines.size(), static_cast<size_t>(kN));
  for (const std::string& line : label_lines) {
    const int label = std::stoi(line);
    EXPECT_TRUE(label >= 0 && label < kK && line == std::to_string(label)) << line;
  }
  const RunResult proba = RunDpem(base + " --proba");
  ASSERT_EQ(proba.exit_code, 0) << proba.err;
  const auto proba_lines = Lines(proba.out);
  ASSERT_EQ(proba_lines.size(), static_cast<size_t>(kN));
  for (const std::string& line : proba_lines) {
    const std::vector<double> p = Fields(line);
    ASSERT_EQ(p.size(), static_cast<size_t>(kK)) << line;
    double sum = 0;
    for (double v : p) {
      sum += v;
      EXPECT_TRUE(v >= 0 && v <= 1) << line;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9) << line;
  }
  const RunResult to_file = RunDpem(base + " --output " + Dir() + "labels.csv");
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_TRUE(to_file.out.empty());
  EXPECT_EQ(Lines(ReadBytes(Dir() + "labels.csv")), label_lines);
}

TEST_F(GmmCliTest, SampleIsReproducibleWithASeed) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  for (const char* out : {"synth1.csv", "synth2.csv"}) {
    const RunResult r = RunDpem("sample --model " + Dir() + "m.json -n 1000 --seed 3 --output " +
                                Dir() + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string synth = ReadBytes(Dir() + "synth1.csv");
  const auto rows = Lines(synth);
  ASSERT_EQ(rows.size(), 1000u);
  for (const std::string& row : rows) ASSERT_EQ(Fields(row).size(), 2u) << row;
  EXPECT_EQ(synth, ReadBytes(Dir() + "synth2.csv"));
  ASSERT_EQ(RunDpem("sample --model " + Dir() + "m.json -n 1000 --seed 4 --output " + Dir() +
                    "synth3.csv").exit_code, 0);
  EXPECT_NE(synth, ReadBytes(Dir() + "synth3.csv"));
}

// A void guarantee: exit 0, a warning line on stderr, guarantee_void in the model.
void ExpectVoidFit(const RunResult& r, const json& model) {
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("guarantee is VOID"), std::string::npos) << r.err;
  EXPECT_TRUE(model.at("privacy").at("guarantee_void").get<bool>());
}

TEST_F(GmmCliTest, DataNormFromDataVoidsTheGuarantee) {
  // Regression: this used to exit 2 ("data_norm ... got nan"): the CLI never set
  // DataDomain::from_data, so R was never computed from the data.

  const RunResult r = Fit("void1.json", "--epsilon 1 --delta 1e-5 --data-norm-from-data");
  ExpectVoidFit(r, r.exit_code == 0 ? Model("void1.json") : json::object());
}

TEST_F(GmmCliTest, UnsafePaperMechanismsVoidTheGuarantee) {
  const RunResult r = Fit("void2.json", "--epsilon 1 --delta 1e-5 --data-norm 2 "
                                        "--unsafe-paper-mechanisms --mechanisms GGG "
                                        "--covariance spherical");
  ExpectVoidFit(r, r.exit_code == 0 ? Model("void2.json") : json::object());
}

TEST_F(GmmCliTest, UnseededNonPrivateFitIsSilent) {
  const RunResult r = Fit("silent.json", "--epsilon inf");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(Model("silent.json").at("privacy").at("seeded").get<bool>());
}

TEST_F(GmmCliTest, InvalidDataFilesNameTheFile) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  std::string good;
  for (int i = 0; i < 10; ++i) good += std::to_string(i) + ".5," + std::to_string(-i) + "\n";
  const auto x = MakeData();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ragged.csv", good + "1,2,3\n"},
      {"word.csv", good + "1,abc\n"},
      {"nan.csv", good + "nan,1\n"},
      {"inf.csv", good + "1,inf\n"},
      {"empty.csv", ""},
      {"header.csv", "x,y\n"},
      {"binary.csv", good + std::string("1,\0\0\x01\x02", 6) + "\n"},
      {"truncated.npy", NpyBytes(x, false, 128 + 16 * kN - 24)},
      {"fortran.npy", NpyBytes(x, true, std::string::npos)},
      {"data.txt", good}};
  for (const auto& [name, bytes] : cases) {
    const std::string input = Dir() + name;
    WriteBytes(input, bytes);
    const std::string out = Dir() + "bad_model.json";
    ExpectBadInput("fit gmm --input " + input + " --output " + out +
                       " --components 1 --iterations 2 --epsilon inf", input, out);
    ExpectBadInput("score --model " + Dir() + "m.json --input " + input, input);
    ExpectBadInput("predict --model " + Dir() + "m.json --input " + input + " --output " + Dir() +
                   "bad_labels.csv", input, Dir() + "bad_labels.csv");
  }
}

TEST_F(GmmCliTest, DimensionMismatchBetweenModelAndData) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  const std::string args = " --model " + Dir() + "m.json --input " + Dir() + "data3.csv";
  ExpectBadInput("score" + args, "data3.csv");
  ExpectBadInput("predict" + args + " --output " + Dir() + "p.csv", "data3.csv", Dir() + "p.csv");
}

TEST_F(GmmCliTest, BadComponentsAndIterations) {
  const std::string out = Dir() + "bad.json";
  const std::string base = "fit gmm --input " + Data() + " --output " + out + " --epsilon inf ";
  // K > N is found after reading the data: the line names the file and K.
  ExpectBadInput(base + "--components 400 --iterations 2", Data(), out);
  ExpectBadInput(base + "--components 400 --iterations 2", "components K = 400", out);
  ExpectBadInput(base + "--components 0 --iterations 2", "--components", out);
  ExpectBadInput(base + "--components -1 --iterations 2", "--components", out);
  ExpectBadInput(base + "--components 2 --iterations 0", "--iterations", out);
}

TEST_F(GmmCliTest, BadPrivacyFlagsNameTheFlag) {
  const std::string out = Dir() + "bad.json";
  const std::string base =
      "fit gmm --input " + Data() + " --output " + out + " --components 3 --iterations 2 ";
  const std::string ok = "--epsilon 1 --delta 1e-5 --data-norm 2 ";
  for (const char* eps : {"0", "-1", "nan", "abc"}) {
    ExpectBadInput(base + "--delta 1e-5 --data-norm 2 --epsilon " + eps, "--epsilon", out);
  }
  for (const char* delta : {"--delta 0", "--delta 1", ""}) {
    ExpectBadInput(base + "--epsilon 1 --data-norm 2 " + delta, "--delta", out);
  }
  for (const char* norm : {"", "--data-norm 0", "--data-norm -1"}) {
    ExpectBadInput(base + "--epsilon 1 --delta 1e-5 " + norm, "--data-norm", out);
  }
  ExpectBadInput(base + ok + "--covariance cubic", "--covariance", out);
  ExpectBadInput(base + ok + "--estimator bayes", "--estimator", out);
  ExpectBadInput(base + ok + "--mechanisms GLG", "--mechanisms", out);
  ExpectBadInput(base + ok + "--spherical-first-iteration maybe", "--spherical-first-iteration",
                 out);
  ExpectBadInput(base + ok + "--budget-schedule 1", "--budget-schedule", out);
  ExpectBadInput(base + ok + "--start-cell-frames yes", "--start-cell-frames", out);
  ExpectBadInput(base + ok + "--diagonal-first-iteration yes", "--diagonal-first-iteration",
                 out);
}

TEST_F(GmmCliTest, BadPathsNameThePath) {
  const std::string base = " --components 3 --iterations 2 --epsilon inf";
  const std::string out = Dir() + "bad.json";
  const std::string missing = Dir() + "no_such.csv";
  ExpectBadInput("fit gmm --input " + missing + " --output " + out + base, missing, out);
  fs::create_directories(Dir() + "adir.csv");
  ExpectBadInput("fit gmm --input " + Dir() + "adir.csv --output " + out + base, "adir.csv", out);
  const std::string nowhere = Dir() + "missing_dir/model.json";
  ExpectBadInput("fit gmm --input " + Data() + " --output " + nowhere + base, nowhere, nowhere);
  fs::create_directories(Dir() + "outdir");
  ExpectBadInput("fit gmm --input " + Data() + " --output " + Dir() + "outdir" + base, "outdir");
  EXPECT_TRUE(fs::is_directory(Dir() + "outdir"));
  EXPECT_TRUE(fs::is_empty(Dir() + "outdir"));
}

TEST_F(GmmCliTest, BadModelFilesAreRefused) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  const std::string input = " --input " + Data();
  const std::string missing = Dir() + "absent.json";
  ExpectBadInput("score --model " + missing + input, missing);
  WriteBytes(Dir() + "text.json", "this is not { json");
  ExpectBadInput("score --model " + Dir() + "text.json" + input, "text.json");
  json model = Model("m.json");
  model.at("parameters").erase("weights");
  WriteBytes(Dir() + "noweights.json", model.dump());
  ExpectBadInput("score --model " + Dir() + "noweights.json" + input, "weights");
  ExpectBadInput("predict --model " + Dir() + "noweights.json" + input, "noweights.json");
  model = Model("m.json");
  model.at("parameters").at("covariances")[0] = json::parse("[[1.0, 2.0], [2.0, 1.0]]");
  WriteBytes(Dir() + "notpd.json", model.dump());
  ExpectBadInput("score --model " + Dir() + "notpd.json" + input, "notpd.json");
  ExpectBadInput("sample -n 10 --model " + Dir() + "notpd.json --output " + Dir() + "s.csv",
                 "notpd.json", Dir() + "s.csv");
}

TEST_F(GmmCliTest, SampleNeedsAPositiveCount) {
  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  const std::string out = Dir() + "s.csv";
  ExpectBadInput("sample -n 0 --model " + Dir() + "m.json --output " + out, "-n", out);
  ExpectBadInput("sample -n 5 --model " + Dir() + "m.json --output " + Dir() + "s.txt", "s.txt",
                 Dir() + "s.txt");
}

TEST_F(GmmCliTest, BadSeedAndPerReleaseDeltaNameTheFlag) {
  // Regression: a negative seed used to wrap into the unsigned seed (exit 0, "seed":
  // 18446744073709551615), and the per-release delta error did not name its flag.

  const std::string out = Dir() + "bad.json";
  const std::string base = "fit gmm --input " + Data() + " --output " + out +
                           " --components 3 --iterations 2 --epsilon 1 --delta 1e-5 "
                           "--data-norm 2 ";
  ExpectBadInput(base + "--seed -1", "--seed", out);
  ExpectBadInput(base + "--per-release-delta 0", "--per-release-delta", out);
}

TEST_F(GmmCliTest, ModelWithOverflowingMeansGivesNoNaN) {
  // Regression: means of 1e300 used to give "mean_log_likelihood": null, NaN probabilities
  // and label 0 with exit 0; a record with no finite log-density is now an error.

  ASSERT_EQ(Fit("m.json", private_).exit_code, 0);
  json model = Model("m.json");
  for (json& mean : model.at("parameters").at("means")) mean = json::array({1e300, 1e300});
  WriteBytes(Dir() + "far.json", model.dump());
  const RunResult r = RunDpem("score --json --model " + Dir() + "far.json --input " + Data());
  EXPECT_TRUE(r.exit_code == 2 || json::parse(r.out).at("mean_log_likelihood").is_number())
      << r.out;
  const RunResult p = RunDpem("predict --proba --model " + Dir() + "far.json --input " + Data());
  EXPECT_EQ(p.out.find("nan"), std::string::npos);
}

}  // namespace
}  // namespace dpem::cli_testing
