// The distributed path of the pipeline (FitRequest::collective), its ranks
// run as threads (testing/thread_collective.h): for every model, a table cut
// into P = 2, 3 and 4 shards gives the model that one process fits to the
// whole table with the same seed, to 1e-12 relative (the ranks' exact sums
// are exact; only floating-point sums added in another order differ); a bad
// shard refuses the fit on every rank, naming the rank, before anything is
// charged; only rank 0 writes the model file.
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dpem/accounting/budget_store.h"
#include "dpem/data/generators.h"
#include "dpem/models/factor_analysis/fa_fit_task.h"
#include "dpem/models/gmm/gmm_fit_task.h"
#include "dpem/models/gradient_em/gradient_em_fit_task.h"
#include "dpem/models/kmeans/kmeans_fit_task.h"
#include "dpem/pipeline/fit_pipeline.h"
#include "testing/fit_options.h"
#include "testing/gradient_em_data.h"
#include "testing/temp_files.h"
#include "testing/thread_collective.h"

namespace dpem {
namespace {

using nlohmann::json;
using test_support::RunOnRanks;

constexpr std::uint64_t kSeed = 20261124;

// Three well-separated Gaussian clusters in d dimensions, n records, from a
// seeded generator (the expected models come from the one-process fit, not
// from these parameters).
DataMatrix ThreeClusters(Eigen::Index n, Eigen::Index d) {
  Generator gen = Generator::FromSeed(7);
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double centre = static_cast<double>(i % 3) * 3.0 - 3.0;
    for (Eigen::Index j = 0; j < d; ++j) {
      // Box-Muller from two uniforms.
      const double u = gen.UniformOpen01(), v = gen.UniformOpen01();
      x(i, j) = centre * (j == 0 ? 1.0 : 0.5) +
                std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    }
  }
  return x;
}

// Every number of `b` within 1e-12 relative (1e-12 absolute near zero) of
// `a`'s, everything else equal.
void ExpectSameModel(const json& a, const json& b, const std::string& path = "") {
  ASSERT_EQ(a.type(), b.type()) << path;
  if (a.is_number_float() || (a.is_number() && b.is_number_float())) {
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_LE(std::abs(x - y), 1e-12 * std::max(1.0, std::abs(x))) << path << ": " << x
                                                                    << " vs " << y;
  } else if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << path << "/" << it.key();
      ExpectSameModel(it.value(), b.at(it.key()), path + "/" + it.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (size_t i = 0; i < a.size(); ++i) ExpectSameModel(a[i], b[i], path + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

// A factory of fresh tasks of one model.
using TaskFactory = std::function<std::unique_ptr<FitTask>()>;

template <typename Options, typename Make>
TaskFactory Factory(Options o, Make make) {
  return [o, make] { return std::make_unique<decltype(make(o))>(make(o)); };
}

// The model file of the one-process fit of `x`.
json FitOnOneProcess(const TaskFactory& make, const DataMatrix& x,
                     std::optional<double> bounds_epsilon = std::nullopt) {
  std::unique_ptr<FitTask> task = make();
  StatusOr<MatrixRowSource> source = MatrixRowSource::Borrow(x);
  FitRequest r;
  r.source = &*source;
  r.seed = kSeed;
  r.bounds_epsilon = bounds_epsilon;
  const Status s = RunFit(*task, r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return json::parse(task->ModelJson());
}

// Rank r's shard of `x` cut into `ranks` shards of near-equal size.
DataMatrix Shard(const DataMatrix& x, int ranks, int r) {
  const Eigen::Index begin = x.rows() * r / ranks, end = x.rows() * (r + 1) / ranks;
  return x.middleRows(begin, end - begin);
}

// The model files of every rank of a fit of `x` cut into `ranks` shards,
// and every rank's status.
struct RankResults {
  std::vector<json> models;
  std::vector<Status> statuses;
};

RankResults FitOnRanks(const TaskFactory& make, const DataMatrix& x, int ranks,
                       const std::function<void(int rank, FitRequest&)>& adjust = nullptr,
                       std::optional<double> bounds_epsilon = std::nullopt) {
  RankResults out;
  out.models.resize(static_cast<size_t>(ranks));
  out.statuses.resize(static_cast<size_t>(ranks));
  RunOnRanks(ranks, [&](const Collective& c) {
    const int r = c.rank();
    std::unique_ptr<FitTask> task = make();
    FitRequest request;
    request.collective = &c;
    request.seed = kSeed;
    request.bounds_epsilon = bounds_epsilon;
    request.open_source = [&]() -> StatusOr<std::unique_ptr<RowSource>> {
      DPEM_ASSIGN_OR_RETURN(MatrixRowSource s, MatrixRowSource::Own(Shard(x, ranks, r)));
      return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(s)));
    };
    if (adjust) adjust(r, request);
    out.statuses[static_cast<size_t>(r)] = RunFit(*task, request);
    if (out.statuses[static_cast<size_t>(r)].ok()) {
      out.models[static_cast<size_t>(r)] = json::parse(task->ModelJson());
    }
  });
  return out;
}

// One process, then P = 2, 3, 4: every rank's model equals the one-process
// model.
void ExpectSameOnEveryRankCount(const TaskFactory& make, const DataMatrix& x,
                                std::optional<double> bounds_epsilon = std::nullopt) {
  const json expected = FitOnOneProcess(make, x, bounds_epsilon);
  for (int ranks = 2; ranks <= 4; ++ranks) {
    const RankResults got = FitOnRanks(make, x, ranks, nullptr, bounds_epsilon);
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE("P = " + std::to_string(ranks) + ", rank " + std::to_string(r));
      ASSERT_TRUE(got.statuses[static_cast<size_t>(r)].ok())
          << got.statuses[static_cast<size_t>(r)].ToString();
      ExpectSameModel(expected, got.models[static_cast<size_t>(r)]);
    }
  }
}

GmmFitOptions GmmOptions(double epsilon, CovarianceType type) {
  GmmFitOptions o = test_support::MakeGmmOptions(3, 5, epsilon, 1e-5, 8.0);
  o.covariance = type;
  o.engine.threads = 1;
  return o;
}

TEST(DistributedFitTest, PrivateGmmWithFramesAndThePrivateStart) {
  ExpectSameOnEveryRankCount(Factory(GmmOptions(1.0, CovarianceType::kFull), MakeGmmFitTask),
                             ThreeClusters(3001, 3));
}

TEST(DistributedFitTest, PrivateGmmWithoutFramesDiagonalAndGgg) {
  GmmFitOptions o = GmmOptions(2.0, CovarianceType::kDiagonal);
  o.component_frames = false;
  o.mechanisms = GmmMechanisms::kGgg;
  o.init = GmmInit::kRandom;
  ExpectSameOnEveryRankCount(Factory(o, MakeGmmFitTask), ThreeClusters(2000, 2));
}

TEST(DistributedFitTest, PlainGmmFromKmeansPlusPlusWithTheDomainFromTheData) {
  GmmFitOptions o = GmmOptions(std::numeric_limits<double>::infinity(), CovarianceType::kFull);
  o.domain.data_norm = std::numeric_limits<double>::quiet_NaN();
  o.iterations = 20;
  ExpectSameOnEveryRankCount(Factory(o, MakeGmmFitTask), ThreeClusters(2500, 3));
}

TEST(DistributedFitTest, GmmWithAPrivateDomainRelease) {
  // The domain given is a placeholder (as the CLI's --data-norm auto sets
  // it): the released one replaces it.
  const GmmFitOptions o = GmmOptions(1.0, CovarianceType::kSpherical);
  ExpectSameOnEveryRankCount(Factory(o, MakeGmmFitTask), ThreeClusters(3000, 2), 0.2);
}

TEST(DistributedFitTest, KmeansEveryMethodAndPlainLloyd) {
  for (const KmeansMethod m : test_support::kAllKmeansMethods) {
    KmeansFitOptions o = test_support::MakeKmeansOptions(m, 3, 4, 1.0, 1e-5);
    o.domain.data_norm = 8.0;
    o.engine.threads = 1;
    SCOPED_TRACE(std::string(KmeansMethodName(m)));
    ExpectSameOnEveryRankCount(Factory(o, MakeKmeansFitTask), ThreeClusters(1500, 2));
  }
  KmeansFitOptions plain = test_support::MakeKmeansOptions(
      KmeansMethod::kCdpGauss, 3, 10, std::numeric_limits<double>::infinity(), 1e-5);
  plain.engine.threads = 1;
  ExpectSameOnEveryRankCount(Factory(plain, MakeKmeansFitTask), ThreeClusters(1500, 2));
}

TEST(DistributedFitTest, FactorAnalysisPrivateAndPlain) {
  for (const double epsilon : {1.0, std::numeric_limits<double>::infinity()}) {
    FaFitOptions o;
    o.em.factors = 2;
    o.em.iterations = 30;
    o.epsilon = epsilon;
    o.delta = 1e-5;
    o.domain.data_norm = 10.0;
    ExpectSameOnEveryRankCount(Factory(o, MakeFaFitTask), ThreeClusters(1200, 5));
  }
}

TEST(DistributedFitTest, GradientEmEveryModel) {
  for (const GradientEmModel model :
       {GradientEmModel::kGmm, GradientEmModel::kMrm, GradientEmModel::kRmc}) {
    const double missing = model == GradientEmModel::kRmc ? 0.2 : 0.0;
    const GeneratedData g = test_support::MakeGradientEmData(model, 2000, 3, missing, 5);
    const DataMatrix x = ToDataMatrix(g.data);
    const GradientEmOptions o = test_support::MakeGradientEmOptions(
        GradientEmMethod::kClipped, 5, 1.0, 1e-5, 10.0, 5.0);
    const TaskFactory make = [&] {
      return std::make_unique<GradientEmFitTask>(model, o, /*trajectory=*/true);
    };
    SCOPED_TRACE(std::string(GradientEmModelName(model)));
    ExpectSameOnEveryRankCount(make, x);
  }
}

TEST(DistributedFitTest, ABadShardRefusesTheFitOnEveryRankBeforeTheCharge) {
  const std::string budget = test_support::ProcessTempPath("distributed_", "budget.db");
  const std::string output = test_support::ProcessTempPath("distributed_", "model.json");
  std::filesystem::remove(budget);
  std::filesystem::remove(output);
  {
    StatusOr<BudgetStore> store = BudgetStore::Open(budget, /*create=*/true);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(store->Init("D", 1.5, 1e-4).ok());
  }
  const TaskFactory make = Factory(GmmOptions(1.0, CovarianceType::kFull), MakeGmmFitTask);
  const DataMatrix x = ThreeClusters(900, 2);
  const auto bad_rank_2 = [&](int rank, FitRequest& r) {
    r.budget_file = budget;
    r.dataset = "D";
    r.output = output;
    if (rank == 2) {
      r.open_source = []() -> StatusOr<std::unique_ptr<RowSource>> {
        return InvalidArgumentError("record 5 has a NaN or infinite value");
      };
    }
  };
  const RankResults got = FitOnRanks(make, x, 3, bad_rank_2);
  // The reason, which could quote the data, is withheld before the charge.
  for (const Status& s : got.statuses) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message().rfind("rank 2: the shard: not a valid table of finite numbers", 0), 0u)
        << s.message();
    EXPECT_EQ(s.message().find("record 5"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(std::filesystem::exists(output));
  StatusOr<BudgetStore> store = BudgetStore::Open(budget, /*create=*/false);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->Get("D")->charges, 0);
  // The same fit with every shard good: charged once (by rank 0), one file.
  const RankResults good = FitOnRanks(make, x, 3, [&](int rank, FitRequest& r) {
    bad_rank_2(-1 - rank, r);
  });
  for (const Status& s : good.statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(std::filesystem::exists(output));
  EXPECT_EQ(store->Get("D")->charges, 1);
  EXPECT_EQ(store->Get("D")->spent_epsilon, 1.0);
}

TEST(DistributedFitTest, ShardsMustAgreeOnTheColumns) {
  const DataMatrix x = ThreeClusters(300, 3);
  const RankResults got = FitOnRanks(
      Factory(GmmOptions(1.0, CovarianceType::kFull), MakeGmmFitTask), x, 3,
      [&](int rank, FitRequest& r) {
        if (rank != 1) return;
        r.open_source = [&]() -> StatusOr<std::unique_ptr<RowSource>> {
          DPEM_ASSIGN_OR_RETURN(MatrixRowSource s, MatrixRowSource::Own(x.leftCols(2)));
          return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(s)));
        };
      });
  for (const Status& s : got.statuses) {
    EXPECT_EQ(s.message(), "rank 1: the shard has 2 columns, rank 0's has 3");
  }
}

}  // namespace
}  // namespace dpem
