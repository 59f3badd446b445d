// The pipeline's caller-supplied opener (FitRequest::open_source): it runs at
// step 4, after the budget is charged, and its errors come back unchanged.
#include "dpem/pipeline/fit_pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "dpem/accounting/budget_store.h"
#include "dpem/models/gmm/gmm_fit_task.h"

namespace dpem {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "dpem_fit_pipeline_test_" + std::to_string(::getpid()) + "_" +
         name;
}

// 200 records in the unit ball, in two groups.
DataMatrix TwoGroups() {
  DataMatrix x(200, 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const double side = i % 2 == 0 ? -0.5 : 0.5;
    x(i, 0) = side + 0.001 * static_cast<double>(i % 17);
    x(i, 1) = 0.002 * static_cast<double>(i % 13);
  }
  return x;
}

GmmFitOptions PrivateOptions(double epsilon) {
  GmmFitOptions o;
  o.components = 2;
  o.epsilon = epsilon;
  o.delta = 1e-5;
  o.domain.data_norm = 1.0;
  return o;
}

class FitPipelineOpenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::remove(budget_.c_str());
    ASSERT_TRUE(BudgetStore::Open(budget_)->Init("d", 3.0, 1e-4).ok());
  }
  void TearDown() override { std::remove(budget_.c_str()); }
  long long Charges() const { return BudgetStore::Open(budget_)->Get("d")->charges; }

  // A request charging data set "d" of the budget, whose opener borrows the
  // records and sets `opened_`.
  FitRequest Request() {
    FitRequest r;
    r.input = "X";
    r.seed = 5;
    r.budget_file = budget_;
    r.dataset = "d";
    r.open_source = [this]() -> StatusOr<std::unique_ptr<RowSource>> {
      opened_ = true;
      DPEM_ASSIGN_OR_RETURN(MatrixRowSource source, MatrixRowSource::Borrow(x_));
      return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(source)));
    };
    return r;
  }

  const std::string budget_ = TempPath("budget.db");
  const DataMatrix x_ = TwoGroups();
  bool opened_ = false;
};

TEST_F(FitPipelineOpenSourceTest, OpensTheDataAfterTheChargeAndFitsIt) {
  const FitRequest r = Request();
  GmmFitTask task = MakeGmmFitTask(PrivateOptions(1.0));
  ASSERT_TRUE(RunFit(task, r).ok());
  EXPECT_TRUE(opened_);
  EXPECT_EQ(task.fitted().n, 200);
  EXPECT_EQ(Charges(), 1);
}

TEST_F(FitPipelineOpenSourceTest, ABudgetThatRefusesTheFitLeavesTheDataUnopened) {
  const FitRequest r = Request();
  GmmFitTask task = MakeGmmFitTask(PrivateOptions(5.0));  // More than the total 3.
  EXPECT_EQ(RunFit(task, r).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(opened_);
  EXPECT_EQ(Charges(), 0);
}

TEST_F(FitPipelineOpenSourceTest, InvalidOptionsAreRefusedBeforeTheChargeAndTheData) {
  const FitRequest r = Request();
  GmmFitOptions options = PrivateOptions(1.0);
  options.domain.data_norm = std::numeric_limits<double>::quiet_NaN();
  GmmFitTask task = MakeGmmFitTask(options);
  const Status s = RunFit(task, r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data_norm"), std::string::npos);
  EXPECT_FALSE(opened_);
  EXPECT_EQ(Charges(), 0);
}

TEST_F(FitPipelineOpenSourceTest, TheOpenersErrorIsReturnedUnchangedAfterTheCharge) {
  FitRequest r = Request();
  r.open_source = []() -> StatusOr<std::unique_ptr<RowSource>> {
    return InvalidArgumentError("X: record 7 has a NaN or infinite value");
  };
  GmmFitTask task = MakeGmmFitTask(PrivateOptions(1.0));
  const Status s = RunFit(task, r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "X: record 7 has a NaN or infinite value");
  // Charged before the data was opened, as for a file that fails to read.
  EXPECT_EQ(Charges(), 1);
}

}  // namespace
}  // namespace dpem
