#include "dpem/models/gmm/gmm_model_io.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "dpem/mechanisms/joint_release.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

GmmFit PrivateFit(std::uint64_t seed, int iterations = 3) {
  Generator data_gen = Generator::FromSeed(1);
  DataMatrix x(200, 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    x(i, 0) = 3.0 + 0.5 * SampleStandardNormal(data_gen) + (i % 2 ? 1.0 : -1.0);
    x(i, 1) = -2.0 + 0.5 * SampleStandardNormal(data_gen);
  }
  GmmFitOptions o = test_support::MakeGmmOptions(/*components=*/2, iterations,
                                                 /*epsilon=*/2.0, /*delta=*/1e-5,
                                                 /*data_norm=*/4.0);
  o.domain.center = Eigen::Vector2d(3.0, -2.0);
  Generator gen = Generator::FromSeed(seed);
  return FitGmm(x, o, gen).value();
}

TEST(GmmModelIoTest, RoundTripsEveryField) {
  const GmmFit fit = PrivateFit(5);
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(GmmModelIo::ToJson(fit));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->parameters.type, fit.parameters.type);
  EXPECT_EQ(back->parameters.weights, fit.parameters.weights);  // Exact: 17 digits.
  EXPECT_EQ(back->parameters.means, fit.parameters.means);
  for (std::size_t k = 0; k < fit.parameters.covariances.size(); ++k) {
    EXPECT_EQ(back->parameters.covariances[k], fit.parameters.covariances[k]);
  }
  EXPECT_EQ(back->domain.data_norm, 4.0);
  EXPECT_EQ(back->domain.center, fit.domain.center);
  EXPECT_EQ(back->n, 200);
  EXPECT_EQ(back->iterations, 3);
  EXPECT_EQ(back->seed, std::optional<std::uint64_t>(5));
  const GmmGuarantee& g = back->guarantee;
  EXPECT_TRUE(g.is_private);
  EXPECT_EQ(g.epsilon, fit.guarantee.epsilon);
  EXPECT_EQ(g.target_epsilon, 2.0);
  EXPECT_EQ(g.noise_multipliers, fit.guarantee.noise_multipliers);
  ASSERT_EQ(g.ledger.size(), fit.guarantee.ledger.size());
  for (std::size_t i = 0; i < g.ledger.size(); ++i) {
    EXPECT_EQ(g.ledger.releases()[i].label, fit.guarantee.ledger.releases()[i].label);
    EXPECT_EQ(g.ledger.releases()[i].noise_scale, fit.guarantee.ledger.releases()[i].noise_scale);
  }
  // The stored ledger re-accounts to the stored epsilon.
  EXPECT_EQ(ComputeEpsilon(g.ledger, g.delta, g.accountant).value(), g.epsilon);
  // Default frames: the adaptive rule (capped at sqrt(2) + 2) with the clip
  // correction.
  EXPECT_DOUBLE_EQ(g.frame_radius, std::sqrt(2.0) + 2.0);
  EXPECT_TRUE(g.adaptive_frames);
  EXPECT_TRUE(g.frame_clip_correction);
}

TEST(GmmModelIoTest, RecordsHowTheFramesWereMade) {
  const nlohmann::json j = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(10)));
  EXPECT_EQ(j["privacy"]["component_frame_rule"], "adaptive");
  EXPECT_EQ(j["privacy"]["frame_clip_correction"], true);
  // 2-D: below kSphericalFirstIterationMinDimension.
  EXPECT_EQ(j["privacy"]["spherical_first_iteration"], false);
  GmmFit spherical_first = PrivateFit(10);
  spherical_first.guarantee.spherical_first_iteration = true;
  spherical_first.guarantee.diagonal_first_iteration = true;
  spherical_first.guarantee.start_cell_frames = false;
  const StatusOr<GmmFit> round_trip =
      GmmModelIo::FromJson(GmmModelIo::ToJson(spherical_first));
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().ToString();
  EXPECT_TRUE(round_trip->guarantee.spherical_first_iteration);
  EXPECT_TRUE(round_trip->guarantee.diagonal_first_iteration);
  EXPECT_FALSE(round_trip->guarantee.start_cell_frames);
  EXPECT_EQ(j["privacy"]["start_cell_frames"], true);  // The default start.
  EXPECT_EQ(j["privacy"]["diagonal_first_iteration"], false);  // 2-D.
  // A file from before the fields existed: a fixed radius, no correction, a
  // first iteration of the fit's type.
  nlohmann::json old = j;
  old["privacy"].erase("component_frame_rule");
  old["privacy"].erase("frame_clip_correction");
  old["privacy"].erase("spherical_first_iteration");
  old["privacy"].erase("diagonal_first_iteration");
  old["privacy"].erase("start_cell_frames");
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(old.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->guarantee.adaptive_frames);
  EXPECT_FALSE(back->guarantee.frame_clip_correction);
  EXPECT_FALSE(back->guarantee.spherical_first_iteration);
  EXPECT_FALSE(back->guarantee.diagonal_first_iteration);
  EXPECT_FALSE(back->guarantee.start_cell_frames);
  nlohmann::json bad = j;
  bad["privacy"]["start_cell_frames"] = "on";
  EXPECT_FALSE(GmmModelIo::FromJson(bad.dump()).ok());
  bad = j;
  bad["privacy"]["component_frame_rule"] = "magic";
  EXPECT_FALSE(GmmModelIo::FromJson(bad.dump()).ok());
  bad = j;
  bad["privacy"]["frame_clip_correction"] = "yes";
  EXPECT_FALSE(GmmModelIo::FromJson(bad.dump()).ok());
  bad = j;
  bad["privacy"]["spherical_first_iteration"] = 1;
  EXPECT_FALSE(GmmModelIo::FromJson(bad.dump()).ok());
  // The budget schedule: empty for equal iterations (2-D); one weight > 0
  // per iteration otherwise, matching the ledger's noise
  // (ChecksTheIterationWeightsAgainstTheIterations): weights pasted onto
  // this fit's equal iterations do not.
  EXPECT_TRUE(j["privacy"]["iteration_weights"].empty());
  GmmFit scheduled = PrivateFit(10);
  scheduled.guarantee.iteration_weights = {0.25, 0.75, 2.0};
  EXPECT_NE(GmmModelIo::FromJson(GmmModelIo::ToJson(scheduled)).status().message().find(
                "does not match the ledger"),
            std::string::npos);
  for (const char* weights : {"[0.25, 0.75]", "[0.25, 0.0, 2.0]", "[1, -1, 3]", "\"x\""}) {
    bad = j;
    bad["privacy"]["iteration_weights"] = nlohmann::json::parse(weights);
    EXPECT_FALSE(GmmModelIo::FromJson(bad.dump()).ok()) << weights;
  }
}

// A private 5-D fit with full covariances: its first iteration is diagonal
// (d >= kSphericalFirstIterationMinDimension), so the budget follows a
// schedule.
GmmFit ScheduledFit(int iterations) {
  Generator data_gen = Generator::FromSeed(2);
  DataMatrix x(300, 5);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      x(i, j) = 0.3 * SampleStandardNormal(data_gen) + (i % 2 ? 0.5 : -0.5);
    }
  }
  GmmFitOptions o = test_support::MakeGmmOptions(/*components=*/2, iterations,
                                                 /*epsilon=*/2.0, /*delta=*/1e-5,
                                                 /*data_norm=*/3.0);
  Generator gen = Generator::FromSeed(11);
  return FitGmm(x, o, gen).value();
}

// privacy.iteration_weights against the rest of the file: one finite weight
// > 0 per iteration that the ledger lists, summing to J, or none (equal
// iterations, as in files written before the schedule).
TEST(GmmModelIoTest, ChecksTheIterationWeightsAgainstTheIterations) {
  const GmmFit fit = ScheduledFit(4);
  // The diagonal first iteration's schedule for J = 4: 0.5, then
  // (4 - 0.5 - 1.5) / 2 = 1 twice, then 1.5 (kDiagonalIterationWeight,
  // kDiagonalFinalIterationWeight).
  ASSERT_EQ(fit.guarantee.iteration_weights, (std::vector<double>{0.5, 1.0, 1.0, 1.5}));
  const nlohmann::json good = nlohmann::json::parse(GmmModelIo::ToJson(fit));
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(good.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->guarantee.iteration_weights, fit.guarantee.iteration_weights);
  // Older files: no field, or an empty list (equal iterations).
  for (bool erase : {true, false}) {
    nlohmann::json old = good;
    if (erase) {
      old["privacy"].erase("iteration_weights");
    } else {
      old["privacy"]["iteration_weights"] = nlohmann::json::array();
    }
    const StatusOr<GmmFit> read = GmmModelIo::FromJson(old.dump());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(read->guarantee.iteration_weights.empty());
  }
  struct Case {
    const char* weights;
    const char* mentions;
  };
  const Case cases[] = {
      {"[0.5, 1.0, 2.5]", "one weight per iteration (4), not 3"},
      {"[0.5, 1.0, 1.0, 1.0, 0.5]", "one weight per iteration (4), not 5"},
      {"[0.5, null, 1.0, 2.5]", "privacy.iteration_weights entry 2 is null"},
      {"[0.5, -1.0, 3.0, 1.5]", "privacy.iteration_weights entry 2 must be > 0, got -1"},
      {"[0.5, 0.0, 2.0, 1.5]", "entry 2 must be > 0, got 0"},
      {"[0.5, 1.0, 1.0, 1.4]", "must sum to the number of iterations, 4"},
      {"[1.0, 1.0, 1.0, 1.1]", "must sum to the number of iterations, 4"},
      {"[\"1\", 1.0, 1.0, 1.0]", "entry 1 must be a number"},
      {"1.0", "privacy.iteration_weights must be an array"},
  };
  for (const Case& c : cases) {
    nlohmann::json bad = good;
    bad["privacy"]["iteration_weights"] = nlohmann::json::parse(c.weights);
    const Status s = GmmModelIo::FromJson(bad.dump()).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.weights;
    EXPECT_NE(s.message().find(c.mentions), std::string::npos) << c.weights << ": " << s.message();
  }
  // Weights that sum to J but are not the ledger's: iteration 1 was
  // released at the multiplier of weight 0.5, not 1.
  nlohmann::json swapped = good;
  swapped["privacy"]["iteration_weights"] = {1.0, 0.5, 1.0, 1.5};
  EXPECT_NE(GmmModelIo::FromJson(swapped.dump()).status().message().find(
                "release 'iteration 1 / joint statistics' should be iteration 1's"),
            std::string::npos);
  // The weights follow the ledger's iterations: a file of 3 iterations
  // whose ledger lists 4 is refused whatever its weights.
  nlohmann::json fewer = good;
  fewer["iterations"] = 3;
  fewer["privacy"]["iteration_weights"] = {0.5, 1.0, 1.5};
  EXPECT_NE(GmmModelIo::FromJson(fewer.dump()).status().message().find("releases"),
            std::string::npos);
}

TEST(GmmModelIoTest, RecordsHowManyIteratesWereAveraged) {
  // N = 200 at epsilon 2 is noisy for the data: J = 6 from the private
  // start averages its last 3 iterates, and reads back so; a count the
  // rule cannot give (anything but 1 and floor(J / 2)) is refused.
  const nlohmann::json six = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(12, 6)));
  EXPECT_EQ(six["privacy"]["averaged_iterations"], 3);
  for (int averaged : {1, 2, 3, 4, 6}) {
    nlohmann::json m = six;
    m["privacy"]["averaged_iterations"] = averaged;
    const StatusOr<GmmFit> back = GmmModelIo::FromJson(m.dump());
    EXPECT_EQ(back.ok(), averaged == 1 || averaged == 3) << averaged;
    if (back.ok()) EXPECT_EQ(back->guarantee.averaged_iterations, averaged);
  }
  nlohmann::json random_start = six;  // The random start averages nothing.
  random_start["init"] = "random";
  random_start["privacy"]["releases"].erase(0);
  random_start["privacy"]["releases"].erase(0);
  EXPECT_NE(GmmModelIo::FromJson(random_start.dump()).status().message().find(
                "averaged_iterations must be 1 or"),
            std::string::npos);
  random_start["privacy"]["averaged_iterations"] = 1;  // The same file, consistent.
  EXPECT_TRUE(GmmModelIo::FromJson(random_start.dump()).ok());
  // The fit of PrivateFit (J = 3) returns its last iterate; 2 and 3 are
  // refused (J <= 3 averages nothing).
  const nlohmann::json j = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(12)));
  EXPECT_EQ(j["privacy"]["averaged_iterations"], 1);
  nlohmann::json old = j;  // A file from before the field: the last iterate.
  old["privacy"].erase("averaged_iterations");
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(old.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->guarantee.averaged_iterations, 1);
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(2), nlohmann::json(3),
                                    nlohmann::json(4), nlohmann::json(-1),
                                    nlohmann::json(2.5), nlohmann::json("2"),
                                    nlohmann::json(nullptr), nlohmann::json(true),
                                    nlohmann::json(1.0), nlohmann::json(-0.0),
                                    nlohmann::json(std::numeric_limits<std::uint64_t>::max()),
                                    nlohmann::json(std::numeric_limits<std::int64_t>::min()),
                                    nlohmann::json::array({1}),
                                    nlohmann::json::object({{"n", 1}})}) {
    nlohmann::json m = j;
    m["privacy"]["averaged_iterations"] = bad;
    const StatusOr<GmmFit> refused = GmmModelIo::FromJson(m.dump());
    EXPECT_FALSE(refused.ok()) << bad.dump();
    if (!refused.ok()) {
      EXPECT_NE(refused.status().message().find("averaged_iterations"), std::string::npos)
          << refused.status().ToString();
    }
  }
}

TEST(GmmModelIoTest, RecordsTheAdaptiveSchedule) {
  // N = 200 at epsilon 2 is noisy for the data: the default J runs the
  // adaptive schedule, and the file says which branch ran and why.
  const GmmFit fit = PrivateFit(12, 0);
  ASSERT_TRUE(fit.guarantee.adaptive_iterations);
  const nlohmann::json m = nlohmann::json::parse(GmmModelIo::ToJson(fit));
  EXPECT_EQ(m["iterations"], kAdaptiveIterations);
  const nlohmann::json& a = m["privacy"]["adaptive_iterations"];
  EXPECT_EQ(a["settled"], fit.guarantee.settled);
  EXPECT_EQ(a["movement"], fit.guarantee.movement);
  EXPECT_EQ(m["privacy"]["averaged_iterations"], fit.guarantee.settled ? 1 : 3);
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(m.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->guarantee.adaptive_iterations);
  EXPECT_EQ(back->guarantee.settled, fit.guarantee.settled);
  EXPECT_EQ(back->guarantee.movement, fit.guarantee.movement);
  // The branch follows the movement.
  nlohmann::json settled = m;
  settled["privacy"]["adaptive_iterations"]["settled"] = !fit.guarantee.settled;
  EXPECT_NE(GmmModelIo::FromJson(settled.dump()).status().message().find(
                "settled must say whether the movement is below"),
            std::string::npos);
  // A settled fit averages no iterates.
  settled["privacy"]["adaptive_iterations"] = {{"settled", true}, {"movement", 0.5}};
  settled["privacy"]["averaged_iterations"] = 3;
  EXPECT_NE(GmmModelIo::FromJson(settled.dump()).status().message().find(
                "a settled fit averages no iterates"),
            std::string::npos);
  settled["privacy"]["averaged_iterations"] = 1;
  EXPECT_TRUE(GmmModelIo::FromJson(settled.dump()).ok());
  // Only from the private start.
  nlohmann::json random_start = settled;
  random_start["init"] = "random";
  random_start["privacy"]["releases"].erase(0);
  random_start["privacy"]["releases"].erase(0);
  EXPECT_NE(GmmModelIo::FromJson(random_start.dump()).status().message().find(
                "adaptive_iterations belongs only"),
            std::string::npos);
  // Files without the field did not run it.
  nlohmann::json fixed = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(12)));
  EXPECT_FALSE(fixed["privacy"].contains("adaptive_iterations"));
  ASSERT_TRUE(GmmModelIo::FromJson(fixed.dump()).ok());
  EXPECT_FALSE(GmmModelIo::FromJson(fixed.dump())->guarantee.adaptive_iterations);
  // Hostile values.
  for (const auto& [key, bad] :
       std::vector<std::pair<std::string, nlohmann::json>>{
           {"settled", nullptr}, {"settled", 1}, {"settled", "yes"},
           {"movement", -1.0}, {"movement", "0.5"}, {"movement", nullptr},
           {"movement", nlohmann::json::array({0.5})}}) {
    nlohmann::json h = m;
    h["privacy"]["adaptive_iterations"][key] = bad;
    const StatusOr<GmmFit> refused = GmmModelIo::FromJson(h.dump());
    EXPECT_FALSE(refused.ok()) << key << " " << bad.dump();
    if (!refused.ok()) {
      EXPECT_NE(refused.status().message().find(key), std::string::npos)
          << refused.status().ToString();
    }
  }
  for (const nlohmann::json& bad : {nlohmann::json(true), nlohmann::json::object(),
                                    nlohmann::json::array()}) {
    nlohmann::json h = m;
    h["privacy"]["adaptive_iterations"] = bad;
    EXPECT_FALSE(GmmModelIo::FromJson(h.dump()).ok()) << bad.dump();
  }
}

TEST(GmmModelIoTest, RecordsTheNeighbourRelationAndSeedWarning) {
  const nlohmann::json j = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(6)));
  EXPECT_EQ(j["privacy"]["neighbour_relation"], "replace-one");
  EXPECT_EQ(j["privacy"]["seed"], 6);
  EXPECT_NE(j["privacy"]["seed_warning"].get<std::string>().find("not for production"),
            std::string::npos);
  // The private start's two releases, then one joint release per iteration.
  EXPECT_EQ(j["privacy"]["releases"].size(), 2u + 3u);
  EXPECT_EQ(j["privacy"]["mechanisms"], "joint");
}

TEST(GmmModelIoTest, WritesAtomicallyAndReadsBack) {
  const std::string dir = ::testing::TempDir() + "gmm_model_io_test";
  std::filesystem::create_directories(dir);
  const GmmFit fit = PrivateFit(7);
  ASSERT_TRUE(GmmModelIo::Write(dir + "/m.json", fit).ok());
  EXPECT_TRUE(GmmModelIo::Read(dir + "/m.json").ok());
  EXPECT_EQ(GmmModelIo::Write(dir + "/missing/m.json", fit).code(), StatusCode::kIoError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
  EXPECT_EQ(GmmModelIo::Read(dir + "/nope.json").status().code(), StatusCode::kNotFound);
}

// Each corruption of a valid model must be refused with a message naming it.
TEST(GmmModelIoTest, RefusesDamagedModels) {
  const nlohmann::json good = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(8)));
  struct Case {
    const char* name;
    void (*corrupt)(nlohmann::json&);
    const char* mentions;
  };
  const Case cases[] = {
      {"format", [](nlohmann::json& j) { j["format"] = "other"; }, "format"},
      {"version", [](nlohmann::json& j) { j["version"] = 99; }, "version"},
      {"missing weights", [](nlohmann::json& j) { j["parameters"].erase("weights"); }, "weights"},
      {"weights type", [](nlohmann::json& j) { j["parameters"]["weights"] = "x"; }, "weights"},
      {"K mismatch", [](nlohmann::json& j) { j["components"] = 3; }, "weights"},
      {"not SPD", [](nlohmann::json& j) { j["parameters"]["covariances"][0][0][0] = -1.0; }, ""},
      {"ragged means", [](nlohmann::json& j) { j["parameters"]["means"][0] = {1.0}; }, "means"},
      {"bad R", [](nlohmann::json& j) { j["data_transform"]["data_norm"] = -1.0; }, ""},
      {"centre size", [](nlohmann::json& j) { j["data_transform"]["center"] = {1.0}; }, "center"},
      {"accountant", [](nlohmann::json& j) { j["privacy"]["accountant"] = "magic"; }, "magic"},
      {"release", [](nlohmann::json& j) { j["privacy"]["releases"][0]["noise_scale"] = 0.0; }, ""},
      {"private flag", [](nlohmann::json& j) { j["privacy"]["private"] = "yes"; }, "private"},
  };
  for (const Case& c : cases) {
    nlohmann::json bad = good;
    c.corrupt(bad);
    const StatusOr<GmmFit> fit = GmmModelIo::FromJson(bad.dump());
    EXPECT_EQ(fit.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(fit.status().message().find(c.mentions), std::string::npos)
        << c.name << ": " << fit.status().message();
  }
  EXPECT_EQ(GmmModelIo::FromJson("{not json").status().code(), StatusCode::kInvalidArgument);
  // Counts that are not whole numbers in range (an out-of-range cast would be
  // undefined behaviour), and a ledger that does not match the iterations.
  for (const char* field : {"n", "iterations"}) {
    for (double bad : {-5.0, 0.0, 2.5, 1e300}) {
      nlohmann::json j = good;
      j[field] = bad;
      EXPECT_FALSE(GmmModelIo::FromJson(j.dump()).ok()) << field << " = " << bad;
    }
  }
  nlohmann::json short_ledger = good;
  short_ledger["privacy"]["releases"].erase(0);
  EXPECT_NE(GmmModelIo::FromJson(short_ledger.dump()).status().message().find("releases"),
            std::string::npos);
  // The private start's releases: relabelled, or listed by a model that
  // says it started at random (review finding).
  ASSERT_EQ(good.at("init"), "private");
  nlohmann::json relabelled = good;
  relabelled["privacy"]["releases"][0]["label"] = "iteration 0 / joint statistics";
  EXPECT_NE(GmmModelIo::FromJson(relabelled.dump()).status().message().find("start"),
            std::string::npos);
  nlohmann::json claims_random = good;
  claims_random["init"] = "random";
  EXPECT_FALSE(GmmModelIo::FromJson(claims_random.dump()).ok());
}

// A hostile header must not make the reader allocate what the file does not
// hold (it used to throw std::bad_alloc out of the API and abort the CLI).
TEST(GmmModelIoTest, HostileDimensionsAreRefusedWithoutAllocating) {
  nlohmann::json j = nlohmann::json::parse(GmmModelIo::ToJson(PrivateFit(9)));
  j["components"] = 200000;
  j["dimension"] = 1000000;
  j["parameters"]["weights"] = std::vector<double>(200000, 1.0 / 200000);
  j["parameters"]["means"] = std::vector<std::vector<double>>(200000, std::vector<double>{0.0});
  const StatusOr<GmmFit> fit = GmmModelIo::FromJson(j.dump());
  EXPECT_EQ(fit.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(fit.status().message().find("means"), std::string::npos);
  EXPECT_EQ(GmmModelIo::FromJson("[]").status().code(), StatusCode::kInvalidArgument);
}


// A private fit that leaves J at its default, from the private start, in
// d = 6 with full covariances (so its first iteration is diagonal and the
// budget follows a schedule), at an epsilon where the noise is small for the
// data's size (r < kQuietCentreRatio: docs/gmm.md, "Choosing J") and at one
// where it is not. Under zCDP everything it should record follows from
// (epsilon, delta) alone: rho solves rho + 2 sqrt(rho ln(1/delta)) =
// epsilon; the iterations get 1 - kPrivateStartShare = 0.8 of it; a joint
// release of sensitivity 1 at multiplier z costs 1 / (2 z^2), so the J
// scheduled iterations (weights summing to J) have the unit multiplier
// z = sqrt(J / (2 * 0.8 rho)), and iteration j's is z / sqrt(w_j).
TEST(GmmModelIoTest, RoundTripsADefaultJFitWithTheDiagonalSchedule) {
  const Eigen::Index n = 3000, d = 6;
  const int k = 3;
  Generator data_gen = Generator::FromSeed(4);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) {
      x(i, j) = 0.15 * SampleStandardNormal(data_gen) + (j == i % k ? 0.8 : 0.0);
    }
  }
  const double delta = 1e-5, l = std::log(1.0 / delta);
  struct Case {
    double epsilon;
    int iterations;  // The documented default J at this epsilon.
  };
  // r at J = 1 is about 0.0012 at epsilon 50 and 0.07 at 0.5 (asserted below).
  for (const Case c : {Case{50.0, 10}, Case{0.5, 3}}) {
    SCOPED_TRACE("epsilon " + std::to_string(c.epsilon));
    const double rho = std::pow(std::sqrt(l + c.epsilon) - std::sqrt(l), 2);
    // The ratio of the rule: the whole iterations' budget in one full release.
    const double one_release_sums =
        DefaultJointNoiseSplit(CovarianceType::kFull, d, k).sums / std::sqrt(1.6 * rho);
    const double ratio = one_release_sums * std::sqrt(static_cast<double>(d)) * k / n;
    if (c.iterations == 10) {
      ASSERT_LT(ratio, 0.5 * kQuietCentreRatio);
    } else {
      ASSERT_GT(ratio, 2.0 * kQuietCentreRatio);
    }
    GmmFitOptions o = test_support::MakeGmmOptions(k, /*iterations=*/0, c.epsilon, delta,
                                                   /*data_norm=*/2.0);
    o.accountant = AccountantKind::kZcdp;
    // The fixed schedule at J = 3 (the adaptive one: gmm_adaptive_test.cc).
    o.adaptive_iterations = false;
    Generator gen = Generator::FromSeed(12);
    const StatusOr<GmmFit> fit = FitGmm(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    const int j = c.iterations;
    EXPECT_EQ(fit->init, GmmInit::kPrivate);
    ASSERT_EQ(fit->iterations, j);
    const GmmGuarantee& g = fit->guarantee;
    EXPECT_TRUE(g.diagonal_first_iteration);
    // The diagonal schedule: 0.5, then (J - 0.5 - 1.5) / (J - 2) = 1 each, then 1.5.
    std::vector<double> w(static_cast<size_t>(j), 1.0);
    w.front() = 0.5;
    w.back() = 1.5;
    ASSERT_EQ(g.iteration_weights.size(), w.size());
    for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g.iteration_weights[i], w[i], 1e-12) << i;
    ASSERT_EQ(g.noise_multipliers.size(), 1u);
    const double z = std::sqrt(j / (1.6 * rho));
    EXPECT_NEAR(g.noise_multipliers[0] / z, 1.0, 1e-3);
    // The start's two releases, then one joint release per iteration at its
    // scheduled multiplier.
    ASSERT_EQ(g.ledger.size(), 2u + static_cast<size_t>(j));
    for (int it = 1; it <= j; ++it) {
      const Release& r = g.ledger.releases()[static_cast<size_t>(1 + it)];
      EXPECT_EQ(r.label.rfind("iteration " + std::to_string(it) + " / ", 0), 0u) << r.label;
      EXPECT_NEAR(r.noise_scale / r.sensitivity / (z / std::sqrt(w[static_cast<size_t>(it - 1)])),
                  1.0, 1e-3)
          << it;
    }
    EXPECT_LE(g.epsilon, c.epsilon);
    EXPECT_GE(g.epsilon, 0.99 * c.epsilon);
    // The file records J and reads back with its ledger and schedule.
    const std::string text = GmmModelIo::ToJson(*fit);
    nlohmann::json file = nlohmann::json::parse(text);
    EXPECT_EQ(file["iterations"], j);
    EXPECT_EQ(file["privacy"]["iteration_weights"].size(), static_cast<size_t>(j));
    const StatusOr<GmmFit> back = GmmModelIo::FromJson(text);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->iterations, j);
    EXPECT_EQ(back->guarantee.iteration_weights, g.iteration_weights);
    EXPECT_EQ(back->guarantee.ledger.size(), g.ledger.size());
    EXPECT_EQ(ComputeEpsilon(back->guarantee.ledger, back->guarantee.delta,
                             back->guarantee.accountant)
                  .value(),
              g.epsilon);
    // The other default J against this ledger is refused.
    file["iterations"] = j == 10 ? 3 : 10;
    EXPECT_FALSE(GmmModelIo::FromJson(file.dump()).ok());
  }
}

}  // namespace
}  // namespace dpem
