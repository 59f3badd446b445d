// CLI tests of dpem fit fa and of score / sample / transform on factor
// analysis model files.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace dpem::cli_testing {
namespace {

using nlohmann::json;

// A deterministic 60 x 4 data set with two factors (no random generator: the
// entries are fixed trigonometric values).
Eigen::MatrixXd TestData() {
  Eigen::MatrixXd x(60, 4);
  for (int i = 0; i < 60; ++i) {
    const double a = std::sin(0.7 * i + 0.3), b = std::cos(1.3 * i);
    x.row(i) << a + 0.1 * std::sin(5.1 * i), 0.5 * a - b + 0.1 * std::cos(3.7 * i),
        b + 0.1 * std::sin(2.9 * i + 1), 0.3 * a + 0.1 * std::cos(7.3 * i);
  }
  return x;
}

std::string WriteCsv(const std::string& name, const Eigen::MatrixXd& x) {
  const std::string path = Dir() + name;
  std::ofstream out(path);
  out.precision(17);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) out << (j ? "," : "") << x(i, j);
    out << "\n";
  }
  return path;
}

std::string Fit(const std::string& flags, const std::string& model_name) {
  const std::string data = WriteCsv("fa_data.csv", TestData());
  const std::string model = Dir() + model_name;
  const RunResult r = RunDpem("fit fa --input " + data + " --output " + model + " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model;
}

// The dense mean log-density of x under the model file's parameters.
double DenseLogLikelihood(const json& model, const Eigen::MatrixXd& x) {
  const json& p = model.at("parameters");
  const Eigen::Index d = x.cols();
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd mu(d);
  for (Eigen::Index i = 0; i < d; ++i) {
    mu(i) = p.at("mean")[i].get<double>();
    c(i, i) = p.at("noise_variances")[i].get<double>();
  }
  const json& w = p.at("loadings");
  for (Eigen::Index i = 0; i < d; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) {
      for (std::size_t k = 0; k < w[i].size(); ++k) {
        c(i, j) += w[i][k].get<double>() * w[j][k].get<double>();
      }
    }
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(c);
  const Eigen::MatrixXd l = llt.matrixL();
  double total = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const Eigen::VectorXd r = x.row(i).transpose() - mu;
    total += -0.5 * (d * std::log(2 * std::numbers::pi) +
                     2.0 * l.diagonal().array().log().sum() + llt.matrixL().solve(r).squaredNorm());
  }
  return total / static_cast<double>(x.rows());
}

TEST(FaCliTest, NonPrivateFitScoresAsTheDenseGaussian) {
  const std::string model = Fit("--factors 2 --epsilon inf --iterations 200", "fa_np.json");
  const json m = json::parse(ReadBytes(model));
  EXPECT_EQ(m.at("format"), "dpem-fa");
  EXPECT_FALSE(m.at("privacy").at("private").get<bool>());
  const RunResult r =
      RunDpem("score --json --model " + model + " --input " + Dir() + "fa_data.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json score = json::parse(r.out);
  EXPECT_EQ(score.at("n"), 60);
  EXPECT_NEAR(score.at("mean_log_likelihood").get<double>(), DenseLogLikelihood(m, TestData()),
              1e-9);
}

TEST(FaCliTest, PrivateFitRecordsOneReleaseWithinTheBudget) {
  const std::string model = Fit(
      "--factors 1 --epsilon 0.5 --delta 1e-5 --data-norm 3 --data-center 0,0,0,0 --seed 4 "
      "--quiet",
      "fa_p.json");
  const json privacy = json::parse(ReadBytes(model)).at("privacy");
  EXPECT_TRUE(privacy.at("private").get<bool>());
  EXPECT_LE(privacy.at("epsilon").get<double>(), 0.5);
  EXPECT_EQ(privacy.at("releases").size(), 1u);
  EXPECT_EQ(privacy.at("neighbour_relation"), "replace-one");
}

// Factor analysis takes the shared domain flags since the pipeline: a domain
// released from the data (--data-norm auto) is paid out of the total once,
// listed first in the ledger and composed back once; the model file is
// private, not void (no seed), and score / transform / sample read it.
TEST(FaCliTest, AReleasedDomainIsComposedIntoTheGuaranteeAndTheModelIsUsable) {
  const std::string data = WriteCsv("fa_auto.csv", TestData());
  const std::string budget = Dir() + "fa_auto_budget.db", model = Dir() + "fa_auto.json";
  std::filesystem::remove(budget);
  std::filesystem::remove(model);
  ASSERT_EQ(RunDpem("budget init --budget-file " + budget + " --input " + data +
                    " --epsilon 5 --delta 1e-3").exit_code, 0);
  RunResult r = RunDpem("fit fa --input " + data + " --output " + model +
                        " --factors 1 --epsilon 2 --delta 1e-5 --data-norm auto "
                        "--bounds-epsilon 0.5 --budget-file " + budget);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = json::parse(ReadBytes(model));
  const json& p = m.at("privacy");
  EXPECT_TRUE(p.at("private").get<bool>());
  EXPECT_FALSE(p.at("guarantee_void").get<bool>());
  EXPECT_FALSE(m.at("data_transform").at("from_data").get<bool>());
  EXPECT_DOUBLE_EQ(p.at("target_epsilon").get<double>(), 2.0);  // (2 - bounds) + bounds.
  EXPECT_LE(p.at("epsilon").get<double>(), 2.0);
  const json& releases = p.at("releases");
  ASSERT_GT(releases.size(), 1u);
  double bounds_epsilon = 0.0;
  for (std::size_t i = 0; i + 1 < releases.size(); ++i) {  // The bounds first, pure.
    EXPECT_EQ(releases[i].at("label").get<std::string>().rfind("bounds / ", 0), 0u) << i;
    bounds_epsilon += releases[i].at("sensitivity").get<double>() /
                      releases[i].at("noise_scale").get<double>();
  }
  EXPECT_LE(bounds_epsilon, 0.5);
  EXPECT_EQ(releases.back().at("label"), "second moment sum_i u_i u_i^T");  // The one fit release.
  // The budget was charged the total once, (2, 1e-5).
  r = RunDpem("budget show --budget-file " + budget);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("spent epsilon 2 of 5, delta 1e-05"), std::string::npos) << r.out;
  // The model file is usable.
  EXPECT_EQ(RunDpem("score --model " + model + " --input " + data).exit_code, 0);
  EXPECT_EQ(RunDpem("transform --model " + model + " --input " + data + " --output " + Dir() +
                    "fa_auto_z.csv").exit_code, 0);
  EXPECT_EQ(RunDpem("sample --model " + model + " -n 3 --output " + Dir() + "fa_auto_s.csv")
                .exit_code, 0);
}

// The same release (same seed) repaired three ways: at epsilon 0.5 with 60
// records in d = 4 the noisy second moment has a negative eigenvalue, so the
// shift and the floor give different models from one ledger; shift-back (the
// default) is the shift's model with the shift taken out of Psi: the same
// loadings, and each noise variance either the shift's less one common c > 0
// or the floor psi_min = (noise scale / N) R^2, read from the file's ledger.
TEST(FaCliTest, TheEigenvalueRepairIsAnOption) {
  const std::string flags =
      "--factors 1 --epsilon 0.5 --delta 1e-5 --data-norm 3 --seed 4 --quiet";
  const json shift =
      json::parse(ReadBytes(Fit(flags + " --eigenvalue-repair shift", "fa_shift.json")));
  const json floor =
      json::parse(ReadBytes(Fit(flags + " --eigenvalue-repair floor", "fa_floor.json")));
  const json back =
      json::parse(ReadBytes(Fit(flags + " --eigenvalue-repair shift-back", "fa_back.json")));
  const json by_default = json::parse(ReadBytes(Fit(flags, "fa_default.json")));
  EXPECT_EQ(shift.at("privacy").at("releases"), floor.at("privacy").at("releases"));
  EXPECT_EQ(shift.at("privacy").at("releases"), back.at("privacy").at("releases"));
  EXPECT_NE(shift.at("parameters").at("noise_variances"),
            floor.at("parameters").at("noise_variances"));
  EXPECT_EQ(back.at("parameters"), by_default.at("parameters"));
  EXPECT_EQ(back.at("parameters").at("loadings"), shift.at("parameters").at("loadings"));
  const std::vector<double> psi_back = back.at("parameters").at("noise_variances");
  const std::vector<double> psi_shift = shift.at("parameters").at("noise_variances");
  ASSERT_EQ(psi_back.size(), psi_shift.size());
  const double r = back.at("data_transform").at("data_norm").get<double>();
  const double psi_min = back.at("privacy").at("releases").at(0).at("noise_scale").get<double>() /
                         back.at("n").get<double>() * r * r;
  std::vector<double> differences;  // psi_shift - psi_back where not floored.
  int floored = 0;
  for (std::size_t j = 0; j < psi_back.size(); ++j) {
    if (std::abs(psi_back[j] - psi_min) <= 1e-12 * psi_min) {
      ++floored;
    } else {
      EXPECT_GT(psi_back[j], psi_min) << j;
      differences.push_back(psi_shift[j] - psi_back[j]);
    }
  }
  ASSERT_FALSE(differences.empty());
  EXPECT_GT(floored, 0);  // This release has both kinds.
  EXPECT_GT(differences[0], 0.0);
  for (double c : differences) EXPECT_NEAR(c, differences[0], 1e-9 * differences[0]);
  EXPECT_LE(back.at("iterations_run").get<int>(), back.at("iterations").get<int>());
  EXPECT_EQ(back.at("tolerance").get<double>(), 1e-2);
}

// The flags of EM's tolerance, the noise floor and the start reach the fit:
// --tolerance 0 runs all J and is written; --variance-noise-floor 2 floors
// Psi at twice the default's psi_min; --approximate-start changes the start
// for d > 128 only.
TEST(FaCliTest, TheToleranceNoiseFloorAndStartFlagsReachTheFit) {
  const std::string flags =
      "--factors 1 --epsilon 0.5 --delta 1e-5 --data-norm 3 --seed 4 --quiet";
  const json all =
      json::parse(ReadBytes(Fit(flags + " --tolerance 0 --iterations 7", "fa_all.json")));
  EXPECT_EQ(all.at("iterations_run").get<int>(), 7);
  EXPECT_EQ(all.at("tolerance").get<double>(), 0.0);
  const json loose = json::parse(ReadBytes(Fit(flags + " --tolerance 0.5", "fa_loose.json")));
  EXPECT_EQ(loose.at("tolerance").get<double>(), 0.5);
  const json twice =
      json::parse(ReadBytes(Fit(flags + " --variance-noise-floor 2", "fa_twice.json")));
  const double r = twice.at("data_transform").at("data_norm").get<double>();
  const double psi_min = twice.at("privacy").at("releases").at(0).at("noise_scale").get<double>() /
                         twice.at("n").get<double>() * r * r;
  const std::vector<double> psi = twice.at("parameters").at("noise_variances");
  int floored = 0;
  for (double v : psi) {
    EXPECT_GE(v, 2.0 * psi_min * (1.0 - 1e-12));
    if (std::abs(v - 2.0 * psi_min) <= 1e-12 * psi_min) ++floored;
  }
  EXPECT_GT(floored, 0);

  Eigen::MatrixXd wide(150, 140);
  for (int i = 0; i < wide.rows(); ++i) {
    for (int j = 0; j < wide.cols(); ++j) {
      wide(i, j) = std::sin(0.37 * i + 1.1 * j) + 0.1 * std::cos(3.1 * i * j);
    }
  }
  const std::string data = WriteCsv("fa_wide.csv", wide);
  std::vector<json> models;
  for (const std::string start : {"on", "off"}) {
    const std::string model = Dir() + "fa_wide_" + start + ".json";
    const RunResult run = RunDpem(
        "fit fa --input " + data + " --output " + model +
        " --factors 2 --epsilon 0.5 --delta 1e-5 --data-norm 20 --seed 4 --quiet"
        " --iterations 3 --tolerance 0 --approximate-start " + start);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    models.push_back(json::parse(ReadBytes(model)));
  }
  EXPECT_EQ(models[0].at("privacy").at("releases"), models[1].at("privacy").at("releases"));
  EXPECT_NE(models[0].at("parameters").at("loadings"), models[1].at("parameters").at("loadings"));
  const json narrow_off =
      json::parse(ReadBytes(Fit(flags + " --approximate-start off", "fa_narrow_off.json")));
  const json narrow_on = json::parse(ReadBytes(Fit(flags, "fa_narrow_on.json")));
  EXPECT_EQ(narrow_off.at("parameters"), narrow_on.at("parameters"));
}

// A record 1e200 from the model: its log-density overflows to -infinity,
// which JSON cannot hold; score refuses with a one-line message and exit 2
// rather than printing null.
TEST(FaCliTest, ScoreRefusesANonFiniteScore) {
  const std::string model = Fit("--factors 2 --epsilon inf --iterations 50", "fa_far.json");
  Eigen::MatrixXd far = TestData();
  far(7, 2) = 1e200;
  const std::string data = WriteCsv("fa_far.csv", far);
  for (const char* json_flag : {"", " --json"}) {
    const RunResult r =
        RunDpem("score --model " + model + " --input " + data + json_flag);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.err.find("is not finite"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("null"), std::string::npos) << r.out;
  }
  // The same file without the far record scores.
  EXPECT_EQ(RunDpem("score --model " + model + " --input " + WriteCsv("fa_near.csv", TestData()))
                .exit_code,
            0);
}

TEST(FaCliTest, TransformAndSampleWriteTheRightShapes) {
  const std::string model = Fit("--factors 2 --epsilon inf --iterations 50", "fa_ts.json");
  const std::string z = Dir() + "fa_z.csv";
  RunResult r = RunDpem("transform --model " + model + " --input " + Dir() + "fa_data.csv" +
                        " --output " + z);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string zs = ReadBytes(z);
  EXPECT_EQ(CountLines(zs), 60);
  EXPECT_EQ(std::count(zs.begin(), zs.begin() + zs.find('\n'), ','), 1);
  const std::string s = Dir() + "fa_s.csv";
  r = RunDpem("sample --model " + model + " -n 7 --seed 2 --output " + s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string ss = ReadBytes(s);
  EXPECT_EQ(CountLines(ss), 7);
  EXPECT_EQ(std::count(ss.begin(), ss.begin() + ss.find('\n'), ','), 3);
}

TEST(FaCliTest, RejectsBadFlagsAndData) {
  const std::string data = WriteCsv("fa_bad_src.csv", TestData());
  const std::string out = " --output " + Dir() + "fa_bad.json";
  const std::string base = "fit fa --input " + data + out;
  ExpectBadInputs(
      base, {{" --factors 5 --epsilon inf", "--factors"},
             {" --factors 0 --epsilon inf", "--factors"},
             {" --factors 1 --epsilon 1 --delta 1e-5", "--data-norm"},
             {" --factors 1 --epsilon -1 --delta 1e-5 --data-norm 1", "--epsilon"},
             {" --factors 1 --epsilon 1 --delta 2 --data-norm 1", "--delta"},
             {" --factors 1 --epsilon 1 --delta 1e-5 --data-norm 0", "--data-norm"},
             {" --factors 1 --epsilon 1 --delta 1e-5 --data-norm 1 --eigenvalue-repair clip",
              "--eigenvalue-repair"},
             {" --factors 1 --epsilon inf --tolerance -1", "--tolerance"},
             {" --factors 1 --epsilon 1 --delta 1e-5 --data-norm 1 --variance-noise-floor -1",
              "--variance-noise-floor"},
             {" --factors 1 --epsilon 1 --delta 1e-5 --data-norm 1 --approximate-start maybe",
              "--approximate-start"},
             {" --factors 1 --epsilon 1 --delta 1e-5 --data-norm 1 --data-center 0,0", "centre"}});
  Eigen::MatrixXd nan_data = TestData();
  nan_data(5, 1) = std::nan("");
  const std::string nan_path = WriteCsv("fa_nan.csv", nan_data);
  ExpectBadInput("fit fa --input " + nan_path + out + " --factors 1 --epsilon inf", "fa_nan");
  EXPECT_FALSE(std::filesystem::exists(Dir() + "fa_bad.json"));
}

// An R whose model cannot be represented (R^2 overflows or underflows
// double) is refused before any record is read: the input need not exist.
// With --data-norm 1e200 the fit used to write noise variances of null,
// which score, sample and transform then refused.
TEST(FaCliTest, RefusesAnUnrepresentableDataNormBeforeReadingTheData) {
  const std::string out = Dir() + "fa_huge_r.json";
  const std::string base = "fit fa --factors 2 --epsilon 1 --delta 1e-5 --output " + out;
  for (const char* input : {"fa_huge_src.csv", "no_such_file.csv"}) {
    const std::string data = std::string(input) == "no_such_file.csv"
                                 ? Dir() + input
                                 : WriteCsv(input, TestData() * 1e199);
    ExpectBadInput(base + " --input " + data + " --data-norm 1e200",
                   "--data-norm: data_norm R = 1e+200 is above 1e+100", out);
    ExpectBadInput(base + " --input " + data + " --data-norm 1e-200",
                   "--data-norm: data_norm R = 1e-200 is below 1e-100", out);
  }
  // The ends of the range are accepted, and their models are usable.
  const std::string data = WriteCsv("fa_big_src.csv", TestData() * 1e99);
  const RunResult fit = RunDpem(base + " --input " + data + " --data-norm 1e100 --quiet");
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const RunResult score = RunDpem("score --model " + out + " --input " + data + " --json");
  ASSERT_EQ(score.exit_code, 0) << score.err;
  EXPECT_TRUE(std::isfinite(json::parse(score.out).at("mean_log_likelihood").get<double>()))
      << score.out;
}

// A hand-edited model file whose tolerance is NaN (not JSON) is named with
// where it is and why, not "no \"format\" field".
TEST(FaCliTest, AModelFileWithANanToleranceSaysWhereAndWhy) {
  const std::string model = Fit("--factors 1 --epsilon inf --iterations 10", "fa_nan_tol.json");
  std::string text = ReadBytes(model);
  const std::size_t at = text.find("\"tolerance\": ");
  ASSERT_NE(at, std::string::npos);
  const std::size_t start = at + 13, end = text.find_first_of(",\n", start);
  text.replace(start, end - start, "NaN");
  WriteBytes(model, text);
  const std::string data = WriteCsv("fa_nan_tol.csv", TestData());
  const std::string written = Dir() + "fa_nan_tol_out.csv";
  for (const std::string& args :
       {"score --input " + data, "sample -n 2 --output " + written,
        "transform --input " + data + " --output " + written}) {
    ExpectBadInput(args + " --model " + model, "not valid JSON: parse error at line ", written);
    ExpectBadInput(args + " --model " + model,
                   "(in or after field 'tolerance'; JSON has no NaN or infinity", written);
  }
}

TEST(FaCliTest, ScoreRejectsDataOfTheWrongWidth) {
  const std::string model = Fit("--factors 1 --epsilon inf --iterations 10", "fa_w.json");
  const std::string narrow = WriteCsv("fa_narrow.csv", TestData().leftCols(3));
  ExpectBadInput("score --model " + model + " --input " + narrow, "columns");
}

}  // namespace
}  // namespace dpem::cli_testing
