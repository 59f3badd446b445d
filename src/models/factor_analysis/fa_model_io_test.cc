// Round trips and rejections of factor analysis model files.
#include "dpem/models/factor_analysis/fa_model_io.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpem {
namespace {

using nlohmann::json;

FaFit TestFit() {
  FaFit fit;
  fit.parameters.mean = Eigen::Vector3d(0.5, -1.0, 2.0);
  fit.parameters.loadings.resize(3, 2);
  fit.parameters.loadings << 1.0, 0.25, -0.5, 0.125, 0.3, -0.7;
  fit.parameters.noise_variances = Eigen::Vector3d(0.1, 0.2, 0.3);
  fit.domain.data_norm = 4.0;
  fit.domain.center = fit.parameters.mean;
  fit.n = 123;
  fit.iterations = 50;
  fit.iterations_run = 17;
  fit.tolerance = 0.25;
  fit.seed = 7;
  FaGuarantee& g = fit.guarantee;
  g.is_private = true;
  g.target_epsilon = 1.0;
  g.target_delta = 1e-5;
  g.epsilon = 0.9999;
  g.delta = 1e-5;
  g.noise_multiplier = 3.73;
  EXPECT_TRUE(g.ledger.Record({MechanismKind::kGaussian, 1.5, 5.6, "second moment"}).ok());
  return fit;
}

TEST(FaModelIoTest, RoundTripsEveryField) {
  const FaFit fit = TestFit();
  StatusOr<FaFit> back = FaModelIo::FromJson(FaModelIo::ToJson(fit));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->parameters.mean, fit.parameters.mean);
  EXPECT_EQ(back->parameters.loadings, fit.parameters.loadings);
  EXPECT_EQ(back->parameters.noise_variances, fit.parameters.noise_variances);
  EXPECT_EQ(back->domain.center, fit.domain.center);
  EXPECT_EQ(back->domain.data_norm, 4.0);
  EXPECT_EQ(back->n, 123);
  EXPECT_EQ(back->iterations, 50);
  EXPECT_EQ(back->iterations_run, 17);
  EXPECT_EQ(back->tolerance, 0.25);
  EXPECT_EQ(back->seed, std::optional<std::uint64_t>(7));
  EXPECT_EQ(back->guarantee.epsilon, 0.9999);
  EXPECT_EQ(back->guarantee.noise_multiplier, 3.73);
  ASSERT_EQ(back->guarantee.ledger.size(), 1u);
  EXPECT_EQ(back->guarantee.ledger.releases()[0].noise_scale, 5.6);
}

// A private model lists its one release after those of a released domain;
// a ledger of another length, or a certificate above the target, is refused.
TEST(FaModelIoTest, APrivateModelListsOneReleaseAfterItsDomains) {
  FaFit fit = TestFit();
  PrivacyLedger with_bounds;
  ASSERT_TRUE(with_bounds.Record({MechanismKind::kLaplace, 1.0, 8.0, "bounds / radius"}).ok());
  ASSERT_TRUE(with_bounds.Record(fit.guarantee.ledger.releases()[0]).ok());
  fit.guarantee.ledger = with_bounds;
  EXPECT_TRUE(FaModelIo::FromJson(FaModelIo::ToJson(fit)).ok());
  FaFit none = TestFit();
  none.guarantee.ledger = PrivacyLedger();
  EXPECT_FALSE(FaModelIo::FromJson(FaModelIo::ToJson(none)).ok());
  FaFit two = TestFit();
  ASSERT_TRUE(two.guarantee.ledger.Record(two.guarantee.ledger.releases()[0]).ok());
  EXPECT_FALSE(FaModelIo::FromJson(FaModelIo::ToJson(two)).ok());
  FaFit above = TestFit();
  above.guarantee.epsilon = 1.5;
  EXPECT_FALSE(FaModelIo::FromJson(FaModelIo::ToJson(above)).ok());
}

TEST(FaModelIoTest, WritesTheDocumentedLayout) {
  const json j = json::parse(FaModelIo::ToJson(TestFit()));
  EXPECT_EQ(j.at("format"), "dpem-fa");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("factors"), 2);
  EXPECT_EQ(j.at("dimension"), 3);
  EXPECT_EQ(j.at("parameters").at("loadings").size(), 3u);
  EXPECT_EQ(j.at("privacy").at("neighbour_relation"), "replace-one");
  EXPECT_EQ(j.at("privacy").at("accountant"), "rdp");
  EXPECT_EQ(j.at("privacy").at("releases").size(), 1u);
}

TEST(FaModelIoTest, RejectsDamagedFiles) {
  json j = json::parse(FaModelIo::ToJson(TestFit()));
  EXPECT_FALSE(FaModelIo::FromJson("{not json").ok());
  json wrong_format = j;
  wrong_format["format"] = "dpem-gmm";
  EXPECT_EQ(FaModelIo::FromJson(wrong_format.dump()).status().code(), StatusCode::kInvalidArgument);
  json missing = j;
  missing["parameters"].erase("noise_variances");
  EXPECT_EQ(FaModelIo::FromJson(missing.dump()).status().code(), StatusCode::kInvalidArgument);
  json negative = j;
  negative["parameters"]["noise_variances"][1] = -0.2;
  EXPECT_EQ(FaModelIo::FromJson(negative.dump()).status().code(), StatusCode::kInvalidArgument);
  json ragged = j;
  ragged["parameters"]["loadings"][2] = json::array({1.0});
  EXPECT_EQ(FaModelIo::FromJson(ragged.dump()).status().code(), StatusCode::kInvalidArgument);
  json mistyped = j;
  mistyped["n"] = "many";
  EXPECT_EQ(FaModelIo::FromJson(mistyped.dump()).status().code(), StatusCode::kInvalidArgument);
}

// iterations_run and tolerance came with EM's tolerance: a file written
// before has neither (all J ran: 0 and 0 after reading), and a damaged value
// of either is refused, never read as something else.
TEST(FaModelIoTest, IterationsRunAndToleranceAreOptionalAndChecked) {
  const json j = json::parse(FaModelIo::ToJson(TestFit()));
  EXPECT_EQ(j.at("iterations_run"), 17);
  EXPECT_EQ(j.at("tolerance"), 0.25);
  json old = j;
  old.erase("iterations_run");
  old.erase("tolerance");
  StatusOr<FaFit> before = FaModelIo::FromJson(old.dump());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_EQ(before->iterations_run, 0);
  EXPECT_EQ(before->tolerance, 0.0);
  json all = j;
  all["iterations_run"] = 50;  // = iterations: every iteration ran.
  all["tolerance"] = 0;
  StatusOr<FaFit> every = FaModelIo::FromJson(all.dump());
  ASSERT_TRUE(every.ok()) << every.status().ToString();
  EXPECT_EQ(every->iterations_run, 50);
  json none = j;
  none["iterations_run"] = 0;  // The first EM step failed.
  EXPECT_TRUE(FaModelIo::FromJson(none.dump()).ok());
  for (const json& bad : {json(-1), json(51), json(2.5), json(17.0), json("17"), json("NaN"),
                          json(1e300), json(true), json(nullptr), json::array({17}),
                          json(std::numeric_limits<std::uint64_t>::max())}) {
    json damaged = j;
    damaged["iterations_run"] = bad;
    const Status s = FaModelIo::FromJson(damaged.dump()).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(s.ToString().find("iterations_run"), std::string::npos) << s.ToString();
  }
  for (const json& bad : {json(-1e-3), json("NaN"), json("0.01"), json(true), json(nullptr),
                          json::array({0.01})}) {
    json damaged = j;
    damaged["tolerance"] = bad;
    const Status s = FaModelIo::FromJson(damaged.dump()).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(s.ToString().find("tolerance"), std::string::npos) << s.ToString();
  }
  // Out of double's range in the text: infinite when read, refused.
  std::string huge = j.dump();
  const std::string field = "\"tolerance\":0.25";
  ASSERT_NE(huge.find(field), std::string::npos);
  huge.replace(huge.find(field), field.size(), "\"tolerance\":1e999");
  EXPECT_FALSE(FaModelIo::FromJson(huge).ok());
}

// `text` with the value of its first `"key": value` replaced by `value`,
// as a hand edit would (the value ends at the comma or newline).
std::string WithValue(std::string text, const std::string& key, const std::string& value) {
  const std::size_t at = text.find("\"" + key + "\": ");
  EXPECT_NE(at, std::string::npos) << key;
  const std::size_t start = at + key.size() + 4;
  const std::size_t end = text.find_first_of(",\n", start);
  return text.replace(start, end - start, value);
}

// A hand-edited number that is not one, or out of range, is refused with a
// message naming the field (or, for text that is not JSON, where it is) and
// why; it used to be "not valid JSON" or the CLI's "no \"format\" field".
TEST(FaModelIoTest, HandEditedNumbersAreNamedWithWhyTheyAreBad) {
  const std::string good = FaModelIo::ToJson(TestFit());
  ASSERT_TRUE(FaModelIo::FromJson(WithValue(good, "tolerance", "0.5")).ok());
  struct Case {
    const char* key;
    const char* value;
    std::vector<const char*> mentions;
  };
  const Case cases[] = {
      {"tolerance", "NaN", {"not valid JSON", "line ", "field 'tolerance'", "no NaN"}},
      {"tolerance", "-Infinity", {"not valid JSON", "field 'tolerance'", "no NaN"}},
      {"tolerance", "1e999", {"number overflow", "line ", "'tolerance'", "range of a double"}},
      {"tolerance", "null", {"field 'tolerance' is null", "NaN or an infinity"}},
      {"tolerance", "-0.5", {"field 'tolerance' must be >= 0, got -0.5"}},
      {"tolerance", "\"0.5\"", {"field 'tolerance' must be a number, not string"}},
      {"noise_multiplier", "null", {"field 'privacy.noise_multiplier' is null"}},
      {"noise_multiplier", "0", {"field 'privacy.noise_multiplier' must be > 0, got 0"}},
      {"noise_multiplier", "-3.73", {"'privacy.noise_multiplier' must be > 0, got -3.73"}},
      {"epsilon", "null", {"field 'privacy.epsilon' is null"}},
      {"epsilon", "-1", {"field 'privacy.epsilon' must be > 0, got -1"}},
      {"delta", "1", {"field 'privacy.delta' must be >= 0 and < 1, got 1"}},
      {"data_norm", "null", {"field 'data_transform.data_norm' is null"}},
      {"data_norm", "1e200", {"data_norm R = 1e+200 is above 1e+100"}},
  };
  for (const Case& c : cases) {
    const Status s = FaModelIo::FromJson(WithValue(good, c.key, c.value)).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.key << " = " << c.value;
    for (const char* m : c.mentions) {
      EXPECT_NE(s.message().find(m), std::string::npos)
          << c.key << " = " << c.value << ": " << s.message();
    }
  }
  // An entry of a parameter vector written from a NaN.
  json j = json::parse(good);
  j["parameters"]["noise_variances"][2] = nullptr;
  EXPECT_NE(FaModelIo::FromJson(j.dump()).status().message().find(
                "'noise_variances' entry 3 is null"),
            std::string::npos);
}

}  // namespace
}  // namespace dpem
