// The shared parts of every model file (pipeline/model_file.h): the layout
// written, checked against text written out here by hand, and what the
// reader accepts and refuses, on documents written here by hand.
#include "pipeline/model_file.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dpem::internal {
namespace {

using nlohmann::json;

constexpr ModelFileSchema kSchema{.format = "dpem-test",
                                  .version = 3,
                                  .model = "test_model",
                                  .description = "test",
                                  .max_iterations = kMaxModelIterations,
                                  .fixed_accountant = std::nullopt};

DataDomain TestDomain() {
  DataDomain d;
  d.data_norm = 2.5;
  d.center = Eigen::Vector2d(1.0, -2.0);
  return d;
}

PrivacyGuarantee PrivateGuarantee() {
  PrivacyGuarantee g;
  g.is_private = true;
  g.target_epsilon = 1.0;
  g.target_delta = 1e-5;
  g.epsilon = 0.5;
  g.delta = 1e-5;
  g.accountant = AccountantKind::kZcdp;
  g.guarantee_void = true;
  g.void_reasons = {"seeded"};
  Release r;
  r.mechanism = MechanismKind::kGaussian;
  r.sensitivity = 2.0;
  r.noise_scale = 3.0;
  r.label = "iteration 1";
  r.sampling = NoiseSampling::kContinuous;
  EXPECT_TRUE(g.ledger.Record(r).ok());
  return g;
}

// The file of a seeded private fit, as it must be written, key by key.
constexpr const char* kPrivateSeededText = R"({
  "data_transform": {
    "center": [
      1.0,
      -2.0
    ],
    "clipping": "records clipped to the L2 ball of radius data_norm around center, then mapped to the unit ball",
    "data_norm": 2.5,
    "from_data": false
  },
  "format": "dpem-test",
  "iterations": 7,
  "model": "test_model",
  "n": 42,
  "privacy": {
    "accountant": "zcdp",
    "delta": 1e-05,
    "epsilon": 0.5,
    "guarantee_void": true,
    "neighbour_relation": "replace-one",
    "private": true,
    "releases": [
      {
        "label": "iteration 1",
        "mechanism": "gaussian",
        "noise": "continuous",
        "noise_scale": 3.0,
        "sensitivity": 2.0,
        "sensitivity_norm": "L2"
      }
    ],
    "seed": 17,
    "seed_warning": "seeded generator: the noise is reproducible by anyone who knows the seed; not for production releases",
    "seeded": true,
    "target_delta": 1e-05,
    "target_epsilon": 1.0,
    "void_reasons": [
      "seeded"
    ]
  },
  "version": 3
}
)";

TEST(ModelFileTest, WritesThePrivateSeededLayoutExactly) {
  const json model = ModelFileToJson(kSchema, 42, 7, TestDomain(), PrivateGuarantee(), 17);
  EXPECT_EQ(ModelFileText(model), kPrivateSeededText);
}

TEST(ModelFileTest, WritesOnlyTheSharedFieldsOfAPlainUnseededFit) {
  PrivacyGuarantee g;  // Not private: no numbers, accountant or releases.
  g.accountant = AccountantKind::kLinear;
  const json model = ModelFileToJson(kSchema, 5, 1, TestDomain(), g, std::nullopt);
  const json expected = json::parse(R"({
    "format": "dpem-test", "version": 3, "model": "test_model", "n": 5, "iterations": 1,
    "data_transform": {"data_norm": 2.5, "from_data": false, "center": [1.0, -2.0],
      "clipping": "records clipped to the L2 ball of radius data_norm around center, then mapped to the unit ball"},
    "privacy": {"private": false, "neighbour_relation": "replace-one", "guarantee_void": false,
                "void_reasons": [], "seeded": false}})");
  EXPECT_EQ(model, expected) << model.dump(2);
}

TEST(ModelFileTest, AFixedAccountantIsWrittenWhateverTheGuaranteeSays) {
  ModelFileSchema fixed = kSchema;
  fixed.fixed_accountant = AccountantKind::kRdp;
  PrivacyGuarantee g = PrivateGuarantee();
  g.accountant = AccountantKind::kLinear;
  const json model = ModelFileToJson(fixed, 42, 7, TestDomain(), g, std::nullopt);
  EXPECT_EQ(model.at("privacy").at("accountant"), "rdp");
}

// A fit type laid out like GmmFit, KmeansFit and FaFit.
struct TestGuarantee : PrivacyGuarantee {
  double own = 7.0;  // A model's own field: left alone by the reader.
};
struct TestFit {
  TestGuarantee guarantee;
  double own_parameter = 0.0;
  std::optional<std::uint64_t> seed;
  Eigen::Index n = 0;
  DataDomain domain;
  int iterations = 0;
};

TEST(ModelFileTest, ReadsBackWhatItWrote) {
  TestFit fit;
  fit.n = 42;
  fit.iterations = 7;
  fit.domain = TestDomain();
  static_cast<PrivacyGuarantee&>(fit.guarantee) = PrivateGuarantee();
  fit.seed = 17;
  const json model = ModelFileToJson(kSchema, fit);
  EXPECT_EQ(ModelFileText(model), kPrivateSeededText);
  const StatusOr<TestFit> back =
      FitFromModelFile<TestFit>(json::parse(kPrivateSeededText), kSchema);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->n, 42);
  EXPECT_EQ(back->iterations, 7);
  EXPECT_EQ(back->domain.data_norm, 2.5);
  EXPECT_FALSE(back->domain.from_data);
  EXPECT_EQ(back->domain.center, Eigen::Vector2d(1.0, -2.0));
  EXPECT_EQ(back->seed, std::optional<std::uint64_t>(17));
  const TestGuarantee& g = back->guarantee;
  EXPECT_TRUE(g.is_private);
  EXPECT_TRUE(g.guarantee_void);
  EXPECT_EQ(g.void_reasons, std::vector<std::string>{"seeded"});
  EXPECT_EQ(g.epsilon, 0.5);
  EXPECT_EQ(g.delta, 1e-5);
  EXPECT_EQ(g.target_epsilon, 1.0);
  EXPECT_EQ(g.target_delta, 1e-5);
  EXPECT_EQ(g.accountant, AccountantKind::kZcdp);
  ASSERT_EQ(g.ledger.size(), 1u);
  EXPECT_EQ(g.ledger.releases()[0].label, "iteration 1");
  EXPECT_EQ(g.ledger.releases()[0].mechanism, MechanismKind::kGaussian);
  EXPECT_EQ(g.ledger.releases()[0].sensitivity, 2.0);
  EXPECT_EQ(g.ledger.releases()[0].noise_scale, 3.0);
  EXPECT_EQ(g.ledger.releases()[0].sampling, NoiseSampling::kContinuous);
  EXPECT_EQ(g.own, 7.0);
}

// The least a file may hold: a plain fit, written by hand (no "seeded",
// "model", "clipping" or "neighbour_relation"; the hostile-input corpus's
// baseline model is such a file).
json MinimalPlain() {
  return json::parse(R"({"format": "dpem-test", "version": 3, "n": 60, "iterations": 3,
    "data_transform": {"data_norm": 2.0, "from_data": false, "center": [0, 0]},
    "privacy": {"private": false, "guarantee_void": false, "void_reasons": []}})");
}

TEST(ModelFileTest, AcceptsAMinimalHandWrittenFile) {
  const StatusOr<ModelFileFields> f = ModelFileFromJson(MinimalPlain(), kSchema);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->n, 60);
  EXPECT_EQ(f->iterations, 3);
  EXPECT_EQ(f->domain.center, Eigen::Vector2d(0.0, 0.0));
  EXPECT_FALSE(f->guarantee.is_private);
  EXPECT_TRUE(f->guarantee.void_reasons.empty());
  EXPECT_EQ(f->seed, std::nullopt);
  // Unknown fields are ignored; a version written as 3.0 is version 3.
  json extra = MinimalPlain();
  extra["parameters"] = {{"anything", 1}};
  extra["version"] = 3.0;
  EXPECT_TRUE(ModelFileFromJson(extra, kSchema).ok());
}

TEST(ModelFileTest, AFixedAccountantIsNotRead) {
  ModelFileSchema fixed = kSchema;
  fixed.fixed_accountant = AccountantKind::kRdp;
  json old = json::parse(kPrivateSeededText);
  old["privacy"]["accountant"] = "analytic-gaussian";  // Written by older versions.
  StatusOr<ModelFileFields> f = ModelFileFromJson(old, fixed);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->guarantee.accountant, AccountantKind::kRdp);
  old["privacy"].erase("accountant");
  EXPECT_TRUE(ModelFileFromJson(old, fixed).ok());
  EXPECT_FALSE(ModelFileFromJson(old, kSchema).ok());
}

TEST(ModelFileTest, TheIterationsAreBoundedByTheSchema) {
  json many = MinimalPlain();
  many["iterations"] = 1000001;
  EXPECT_FALSE(ModelFileFromJson(many, kSchema).ok());
  ModelFileSchema longer = kSchema;
  longer.max_iterations = 2000000;
  const StatusOr<ModelFileFields> f = ModelFileFromJson(many, longer);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->iterations, 1000001);
}

// One damage to a valid file, and a word the error must contain.
struct Damage {
  const char* name;
  void (*apply)(json&);
  const char* mentions;
};

void ExpectRefused(const json& good, const Damage& d) {
  json bad = good;
  d.apply(bad);
  const StatusOr<ModelFileFields> f = ModelFileFromJson(bad, kSchema);
  ASSERT_FALSE(f.ok()) << d.name;
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << d.name;
  EXPECT_NE(f.status().message().find(d.mentions), std::string::npos)
      << d.name << ": " << f.status().message();
}

TEST(ModelFileTest, RefusesDamagedHeadersAndDomains) {
  const Damage damages[] = {
      {"not an object", [](json& j) { j = json::array(); }, "format"},
      {"other format", [](json& j) { j["format"] = "dpem-gmm"; }, "format 'dpem-gmm'"},
      {"format type", [](json& j) { j["format"] = 3; }, "format"},
      {"no version", [](json& j) { j.erase("version"); }, "version"},
      {"other version", [](json& j) { j["version"] = 2; }, "version"},
      {"version type", [](json& j) { j["version"] = "3"; }, "version"},
      {"no n", [](json& j) { j.erase("n"); }, "'n'"},
      {"n zero", [](json& j) { j["n"] = 0; }, "'n'"},
      {"n negative", [](json& j) { j["n"] = -5; }, "'n'"},
      {"n fraction", [](json& j) { j["n"] = 2.5; }, "'n'"},
      {"n as a float", [](json& j) { j["n"] = 60.0; }, "'n'"},
      {"n string", [](json& j) { j["n"] = "60"; }, "'n'"},
      {"n boolean", [](json& j) { j["n"] = true; }, "'n'"},
      {"n above 2^53", [](json& j) { j["n"] = (std::uint64_t{1} << 53) + 1; }, "'n'"},
      {"iterations zero", [](json& j) { j["iterations"] = 0; }, "'iterations'"},
      {"iterations huge", [](json& j) { j["iterations"] = 1e300; }, "'iterations'"},
      {"no transform", [](json& j) { j.erase("data_transform"); }, "data_transform"},
      {"norm type", [](json& j) { j["data_transform"]["data_norm"] = "2"; }, "data_norm"},
      {"norm zero", [](json& j) { j["data_transform"]["data_norm"] = 0.0; }, ""},
      {"from_data type", [](json& j) { j["data_transform"]["from_data"] = 0; }, "from_data"},
      {"no center", [](json& j) { j["data_transform"].erase("center"); }, "center"},
      {"center type", [](json& j) { j["data_transform"]["center"] = {"a"}; }, "center"},
  };
  for (const Damage& d : damages) ExpectRefused(MinimalPlain(), d);
}

TEST(ModelFileTest, RefusesDamagedPrivacyBlocks) {
  const Damage damages[] = {
      {"no privacy", [](json& j) { j.erase("privacy"); }, "privacy"},
      {"private type", [](json& j) { j["privacy"]["private"] = "yes"; }, "private"},
      {"no void flag", [](json& j) { j["privacy"].erase("guarantee_void"); }, "guarantee_void"},
      {"no reasons", [](json& j) { j["privacy"].erase("void_reasons"); }, "void_reasons"},
      {"reason type", [](json& j) { j["privacy"]["void_reasons"] = {1}; }, "void_reasons"},
      {"seed negative", [](json& j) { j["privacy"]["seed"] = -1; }, "seed"},
      {"seed fraction", [](json& j) { j["privacy"]["seed"] = 1.5; }, "seed"},
      {"seed string", [](json& j) { j["privacy"]["seed"] = "17"; }, "seed"},
      {"seeded type", [](json& j) { j["privacy"]["seeded"] = "yes"; }, "seeded"},
      {"seeded, no seed", [](json& j) { j["privacy"].erase("seed"); }, "seeded"},
      {"unseeded, a seed", [](json& j) { j["privacy"]["seeded"] = false; }, "seeded"},
      {"no epsilon", [](json& j) { j["privacy"].erase("epsilon"); }, "epsilon"},
      {"delta type", [](json& j) { j["privacy"]["delta"] = "0"; }, "delta"},
      {"no target", [](json& j) { j["privacy"].erase("target_epsilon"); }, "target_epsilon"},
      {"no accountant", [](json& j) { j["privacy"].erase("accountant"); }, "accountant"},
      {"unknown accountant", [](json& j) { j["privacy"]["accountant"] = "magic"; }, "magic"},
      {"no releases", [](json& j) { j["privacy"].erase("releases"); }, "releases"},
      {"releases type", [](json& j) { j["privacy"]["releases"] = "none"; }, "releases"},
      {"bad release", [](json& j) { j["privacy"]["releases"][0]["noise_scale"] = 0.0; }, ""},
  };
  for (const Damage& d : damages) ExpectRefused(json::parse(kPrivateSeededText), d);
  // A plain fit's file need not state what only a private one does.
  json plain = json::parse(kPrivateSeededText);
  plain["privacy"]["private"] = false;
  for (const char* key : {"epsilon", "delta", "accountant", "releases"}) {
    plain["privacy"].erase(key);
  }
  EXPECT_TRUE(ModelFileFromJson(plain, kSchema).ok());
}

TEST(ModelFileTest, ChecksTheCenterLengthAgainstTheDimension) {
  EXPECT_TRUE(CheckCenterLength(TestDomain(), 2).ok());
  const Status wrong = CheckCenterLength(TestDomain(), 3);
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.message().find("center"), std::string::npos) << wrong.message();
}

StatusOr<TestFit> TestFitFrom(const json& model) {
  return FitFromModelFile<TestFit>(model, kSchema);
}

// A reader that throws, as nlohmann's checked accessors do.
StatusOr<TestFit> Throws(const json& model) {
  (void)model.at("no such field");
  return TestFit{};
}

StatusOr<TestFit> TestFitFromText(const std::string& text) {
  return ModelFromText(text, TestFitFrom);
}

TEST(ModelFileTest, ReadsTextAndFilesWithoutThrowing) {
  EXPECT_TRUE(TestFitFromText(kPrivateSeededText).ok());
  const StatusOr<TestFit> not_json = TestFitFromText("{\"format\": ");
  EXPECT_EQ(not_json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_json.status().message().find("JSON"), std::string::npos);
  EXPECT_EQ(ModelFromText("{}", Throws).status().code(), StatusCode::kInvalidArgument);
  const std::string dir = ::testing::TempDir() + "model_file_test/";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "bad.json") << "[]";
  const StatusOr<TestFit> bad = ReadModelFile(dir + "bad.json", TestFitFromText);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind(dir + "bad.json: ", 0), 0u) << bad.status().message();
  EXPECT_EQ(ReadModelFile(dir + "missing.json", TestFitFromText).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace dpem::internal
