// Gradient EM model files: round trips, the documented layout, rejections
// of damaged files with one line naming the problem; and the scores of a
// model against the densities written out naively.
#include "dpem/models/gradient_em/gradient_em_model_io.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/gradient_em_data.h"

namespace dpem {
namespace {

using nlohmann::json;

// A private dp fit of the MRM on 500 records in 3 dimensions, 4 iterations.
GradientEmModelFit TestFit() {
  GradientEmModelFit fit;
  fit.model = GradientEmModel::kMrm;
  fit.method = GradientEmMethod::kDp;
  fit.n = 500;
  fit.iterations = 4;
  fit.sigma = 0.75;
  fit.step = 0.9;
  fit.tau = 10.0;
  fit.zeta = 0.05;
  fit.beta = Eigen::Vector3d(1.25, -0.5, 2.0);
  fit.seed = 9;
  GradientEmGuarantee& g = fit.guarantee;
  StartGuarantee(/*is_private=*/true, 1.0, 1e-5, AccountantKind::kRdp, g);
  g.epsilon = 0.998;
  g.calibration = NoiseCalibrationRule::kPaperZcdp;
  g.noise_multiplier = 3.5;
  g.sensitivity = 0.02;
  g.noise_stddev = 0.07;
  g.robust = {6.0, 2.5};
  EXPECT_TRUE(g.ledger.RecordRepeated({MechanismKind::kGaussian, 0.02, 0.07, "gradient"}, 4).ok());
  return fit;
}

// Parses `j` (a damaged file); expects one InvalidArgument line mentioning
// `mentions`.
void ExpectRefused(const json& j, const std::string& mentions) {
  const StatusOr<GradientEmModelFit> back = GradientEmModelIo::FromJson(j.dump());
  ASSERT_FALSE(back.ok()) << mentions;
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find(mentions), std::string::npos)
      << back.status().message();
  EXPECT_EQ(back.status().message().find('\n'), std::string::npos) << back.status().message();
}

TEST(GradientEmModelIoTest, RoundTripsEveryField) {
  const GradientEmModelFit fit = TestFit();
  const StatusOr<GradientEmModelFit> back = GradientEmModelIo::FromJson(GradientEmModelIo::ToJson(fit));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->model, GradientEmModel::kMrm);
  EXPECT_EQ(back->method, GradientEmMethod::kDp);
  EXPECT_EQ(back->n, 500);
  EXPECT_EQ(back->iterations, 4);
  EXPECT_EQ(back->sigma, 0.75);
  EXPECT_EQ(back->step, 0.9);
  EXPECT_EQ(back->tau, 10.0);
  EXPECT_EQ(back->zeta, 0.05);
  EXPECT_TRUE(std::isnan(back->clip));
  EXPECT_EQ(back->beta, fit.beta);
  EXPECT_EQ(back->seed, std::optional<std::uint64_t>(9));
  const GradientEmGuarantee& g = back->guarantee;
  EXPECT_TRUE(g.is_private);
  EXPECT_EQ(g.epsilon, 0.998);
  EXPECT_EQ(g.target_delta, 1e-5);
  EXPECT_EQ(g.calibration, NoiseCalibrationRule::kPaperZcdp);
  EXPECT_EQ(g.noise_multiplier, 3.5);
  EXPECT_EQ(g.sensitivity, 0.02);
  EXPECT_EQ(g.noise_stddev, 0.07);
  EXPECT_EQ(g.robust.scale, 6.0);
  EXPECT_EQ(g.robust.beta, 2.5);
  ASSERT_EQ(g.ledger.size(), 4u);
  EXPECT_EQ(g.ledger.releases()[3].noise_scale, 0.07);
  // The text again, byte for byte.
  EXPECT_EQ(GradientEmModelIo::ToJson(*back), GradientEmModelIo::ToJson(fit));
}

TEST(GradientEmModelIoTest, RoundTripsClippedAndPlainFits) {
  GradientEmModelFit clipped = TestFit();
  clipped.method = GradientEmMethod::kClipped;
  clipped.clip = 2.5;
  StatusOr<GradientEmModelFit> back = GradientEmModelIo::FromJson(GradientEmModelIo::ToJson(clipped));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->clip, 2.5);
  EXPECT_TRUE(std::isnan(back->tau));

  GradientEmModelFit plain = TestFit();
  plain.model = GradientEmModel::kRmc;
  plain.method = GradientEmMethod::kNonPrivate;
  plain.guarantee = GradientEmGuarantee();
  plain.seed.reset();
  const json j = json::parse(GradientEmModelIo::ToJson(plain));
  EXPECT_FALSE(j.at("privacy").contains("calibration"));
  EXPECT_FALSE(j.at("privacy").contains("releases"));
  back = GradientEmModelIo::FromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->model, GradientEmModel::kRmc);
  EXPECT_FALSE(back->guarantee.is_private);
  EXPECT_FALSE(back->seed.has_value());
}

TEST(GradientEmModelIoTest, WritesTheDocumentedLayout) {
  GradientEmModelFit fit = TestFit();
  fit.trajectory = {Eigen::Vector3d(1, 0, 0), fit.beta};
  const json j = json::parse(GradientEmModelIo::ToJson(fit));
  EXPECT_EQ(j.at("format"), "dpem-gradient-em");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("model"), "gradient_em");
  EXPECT_EQ(j.at("gradient_em_model"), "mrm");
  EXPECT_EQ(j.at("method"), "dp");
  EXPECT_EQ(j.at("dimension"), 3);
  EXPECT_EQ(j.at("beta").size(), 3u);
  EXPECT_EQ(j.at("trajectory").size(), 2u);
  EXPECT_FALSE(j.contains("data_transform"));  // No public domain.
  const json& p = j.at("privacy");
  EXPECT_EQ(p.at("neighbour_relation"), "replace-one");
  EXPECT_EQ(p.at("accountant"), "rdp");
  EXPECT_EQ(p.at("calibration"), "paper");
  EXPECT_EQ(p.at("releases").size(), 4u);
  EXPECT_EQ(p.at("seed"), 9);
  EXPECT_EQ(p.at("robust_scale"), 6.0);
  EXPECT_FALSE(p.contains("clip"));
  // The trajectory is for the reader: a file without it reads the same.
  json without = j;
  without.erase("trajectory");
  EXPECT_TRUE(GradientEmModelIo::FromJson(without.dump()).ok());
}

TEST(GradientEmModelIoTest, RefusesDamagedFilesWithOneLine) {
  const json j = json::parse(GradientEmModelIo::ToJson(TestFit()));
  EXPECT_FALSE(GradientEmModelIo::FromJson("{not json").ok());
  json wrong = j;
  wrong["format"] = "dpem-gmm";
  ExpectRefused(wrong, "not a dpem gradient EM model");
  wrong = j;
  wrong["beta"].push_back(1.0);
  ExpectRefused(wrong, "'beta' must hold 'dimension' (3)");
  wrong = j;
  wrong["beta"][1] = nullptr;
  ExpectRefused(wrong, "beta");
  wrong = j;
  wrong.erase("beta");
  ExpectRefused(wrong, "beta");
  wrong = j;
  wrong["sigma"] = 0.0;
  ExpectRefused(wrong, "field 'sigma' must be > 0, got 0");
  wrong = j;
  wrong["gradient_em_model"] = "hmm";
  ExpectRefused(wrong, "model");
  wrong = j;
  wrong["method"] = "nonprivate";
  ExpectRefused(wrong, "disagrees with privacy.private");
  wrong = j;
  wrong["privacy"].erase("calibration");
  ExpectRefused(wrong, "calibration");
  wrong = j;
  wrong["privacy"].erase("tau");
  ExpectRefused(wrong, "tau");
  wrong = j;
  wrong["iterations"] = 5;
  ExpectRefused(wrong, "one release per iteration");
  wrong = j;
  wrong["privacy"]["epsilon"] = 1.5;
  ExpectRefused(wrong, "at most 'target_epsilon'");
  wrong = j;
  wrong["n"] = "many";
  ExpectRefused(wrong, "n");
}

// Every record's log-likelihood is the model's density at it
// (NaiveGradientEmLogLikelihood), and the mean is their mean.
void ExpectNaiveScores(const GradientEmModelFit& fit, const DataMatrix& records) {
  ASSERT_EQ(GradientEmModelColumns(fit), records.cols());
  const StatusOr<Eigen::VectorXd> ll = GradientEmModelLogLikelihoods(fit, records);
  ASSERT_TRUE(ll.ok()) << ll.status().ToString();
  double total = 0;
  for (Eigen::Index i = 0; i < records.rows(); ++i) {
    const double expected = test_support::NaiveGradientEmLogLikelihood(
        fit.model, records.row(i).transpose(), fit.beta, fit.sigma);
    EXPECT_NEAR((*ll)(i), expected, 1e-12) << i;
    total += expected;
  }
  const StatusOr<double> mean = GradientEmModelMeanLogLikelihood(fit, records);
  ASSERT_TRUE(mean.ok()) << mean.status().ToString();
  EXPECT_NEAR(*mean, total / static_cast<double>(records.rows()), 1e-12);
}

TEST(GradientEmModelIoTest, ScoresAreTheModelsDensities) {
  GradientEmModelFit fit = TestFit();
  DataMatrix records(3, 7);  // rmc: y, x_1..x_3, z_1..z_3.
  records << 0.5, 1.0, -2.0, 0.3, 1, 1, 1,  //
      -1.5, 0.2, 0.0, 1.1, 1, 0, 1,         //
      2.0, 0.0, 0.0, 0.0, 0, 0, 0;
  fit.model = GradientEmModel::kRmc;
  ExpectNaiveScores(fit, records);
  fit.model = GradientEmModel::kMrm;
  ExpectNaiveScores(fit, records.leftCols(4));
  fit.model = GradientEmModel::kGmm;
  ExpectNaiveScores(fit, records.middleCols(1, 3));
  // Records of another width are refused.
  fit.model = GradientEmModel::kMrm;
  EXPECT_EQ(GradientEmModelLogLikelihoods(fit, records.leftCols(3)).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(GradientEmModelIoTest, ScoresAreFiniteFarFromTheMeans) {
  GradientEmModelFit fit = TestFit();
  for (const GradientEmModel model : {GradientEmModel::kGmm, GradientEmModel::kMrm}) {
    fit.model = model;
    const DataMatrix far = DataMatrix::Constant(1, GradientEmModelColumns(fit), 1e6);
    const StatusOr<Eigen::VectorXd> ll = GradientEmModelLogLikelihoods(fit, far);
    ASSERT_TRUE(ll.ok()) << ll.status().ToString();
    EXPECT_TRUE(std::isfinite((*ll)(0)));
    EXPECT_LT((*ll)(0), -1e10);
  }
}

}  // namespace
}  // namespace dpem
