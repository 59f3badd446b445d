#include "dpem/accounting/budget_store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace dpem {
namespace {

namespace fs = std::filesystem;

// A fresh budget-file path in this process's scratch directory.
std::string FreshPath(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "dpem_budget_test." + std::to_string(::getpid());
  fs::create_directories(dir);
  const std::string path = dir + "/" + name;
  fs::remove(path);
  return path;
}

TEST(BudgetStoreTest, ChargesAddUpAndStopAtTheTotal) {
  const std::string path = FreshPath("sum.db");
  StatusOr<BudgetStore> store = BudgetStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(store->Init("d", 1.0, 1e-5).ok());
  EXPECT_TRUE(store->Charge("d", 0.5, 4e-6, "a").ok());
  EXPECT_TRUE(store->Charge("d", 0.25, 4e-6, "b").ok());
  // Epsilon would reach 1.25 > 1: refused, nothing recorded.
  const Status over = store->Charge("d", 0.5, 1e-7, "c");
  EXPECT_EQ(over.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(over.message().find("exceeded"), std::string::npos) << over.message();
  // Delta would reach 1.2e-5 > 1e-5: refused.
  EXPECT_EQ(store->Charge("d", 0.1, 4e-6, "d").code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store->Charge("d", 0.25, 2e-6, "e").ok());  // Exactly the total.
  StatusOr<BudgetAccount> a = store->Get("d");
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->spent_epsilon, 1.0);
  EXPECT_DOUBLE_EQ(a->spent_delta, 1e-5);
  EXPECT_EQ(a->charges, 3);
  EXPECT_EQ(store->Charge("d", 1e-3, 0.0, "f").code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store->CheckIntegrity().ok());
}

TEST(BudgetStoreTest, DecimalSplitsAreAdmitted) {
  // 0.1 + 0.1 + 0.1 = 0.30000000000000004 in binary: kBudgetSlack admits it.
  const std::string path = FreshPath("decimal.db");
  StatusOr<BudgetStore> store = BudgetStore::Open(path);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->Init("d", 0.3, 0.0).ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(store->Charge("d", 0.1, 0.0, "").ok()) << i;
  EXPECT_FALSE(store->Charge("d", 1e-6, 0.0, "").ok());
}

TEST(BudgetStoreTest, TotalsAreImmutableAndPersist) {
  const std::string path = FreshPath("persist.db");
  {
    StatusOr<BudgetStore> store = BudgetStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->Init("x", 2.0, 1e-6).ok());
    EXPECT_TRUE(store->Init("x", 2.0, 1e-6).ok());  // Same total: no-op.
    EXPECT_EQ(store->Init("x", 3.0, 1e-6).code(), StatusCode::kFailedPrecondition);
    EXPECT_TRUE(store->Charge("x", 1.5, 0.0, "n").ok());
  }
  StatusOr<BudgetStore> again = BudgetStore::Open(path);
  ASSERT_TRUE(again.ok());
  StatusOr<BudgetAccount> a = again->Get("x");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->total_epsilon, 2.0);
  EXPECT_EQ(a->spent_epsilon, 1.5);
  EXPECT_EQ(again->Get("y").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(again->Charge("y", 0.1, 0.0, "").code(), StatusCode::kNotFound);
  StatusOr<std::vector<BudgetAccount>> all = again->List();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
}

TEST(BudgetStoreTest, BadArgumentsAndFiles) {
  const std::string path = FreshPath("bad.db");
  StatusOr<BudgetStore> store = BudgetStore::Open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->Init("", 1.0, 0.0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Init("d", -1.0, 0.0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Init("d", 1.0, 1.0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Init("d", std::nan(""), 0.0).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store->Init("d", 1.0, 0.5).ok());
  EXPECT_EQ(store->Charge("d", -0.1, 0.0, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Charge("d", std::nan(""), 0.0, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Charge("d", 0.1, INFINITY, "").code(), StatusCode::kInvalidArgument);
  const std::string garbage = FreshPath("garbage.db");
  std::ofstream(garbage) << "this is not an SQLite database, just text of some length......\n";
  EXPECT_EQ(BudgetStore::Open(garbage).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BudgetStore::Open(FreshPath("nowhere") + "/x.db").status().code(),
            StatusCode::kIoError);
  EXPECT_EQ(BudgetStore::Open(::testing::TempDir()).status().code(), StatusCode::kIoError);
}

TEST(BudgetStoreTest, DatasetIdIsTheContentHash) {
  const std::string a = FreshPath("a.csv"), b = FreshPath("b.csv");
  std::ofstream(a) << "1,2\n";
  std::ofstream(b) << "1,2\n";
  StatusOr<std::string> ia = DatasetIdOfFile(a), ib = DatasetIdOfFile(b);
  ASSERT_TRUE(ia.ok() && ib.ok());
  EXPECT_EQ(*ia, *ib);  // Same bytes, other name: same data set.
  // BLAKE2b-256 of "1,2\n", from Python: hashlib.blake2b(b"1,2\n", digest_size=32).
  EXPECT_EQ(*ia, "blake2b-256:"
                 "cbbee9d7874fe3a2f917c75be55e6a3774af37b723ee51267de1d3223717cdeb");
  std::ofstream(b) << "1,3\n";
  EXPECT_NE(*DatasetIdOfFile(b), *ia);
  EXPECT_EQ(DatasetIdOfFile(FreshPath("missing.csv")).status().code(), StatusCode::kNotFound);
}

// A process killed with SIGKILL inside the charge's transaction (after the
// charge row is written, before COMMIT) leaves the file consistent: the
// charge is absent, the lock is released, and later charges work.
TEST(BudgetStoreTest, KillInsideTheTransactionLeavesNoTrace) {
  const std::string path = FreshPath("kill.db");
  {
    StatusOr<BudgetStore> store = BudgetStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->Init("d", 1.0, 1e-5).ok());
    ASSERT_TRUE(store->Charge("d", 0.25, 0.0, "before").ok());
  }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    StatusOr<BudgetStore> store = BudgetStore::Open(path);
    if (!store.ok()) ::_exit(3);
    (void)store->Charge("d", 0.5, 0.0, "killed", [&] {
      (void)!::write(pipe_fds[1], "x", 1);
      while (true) ::pause();
    });
    ::_exit(4);
  }
  char c = 0;
  ASSERT_EQ(::read(pipe_fds[0], &c, 1), 1);  // The child is inside the transaction.
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  StatusOr<BudgetStore> store = BudgetStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(store->CheckIntegrity().ok()) << store->CheckIntegrity().ToString();
  StatusOr<BudgetAccount> a = store->Get("d");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->spent_epsilon, 0.25);
  EXPECT_EQ(a->charges, 1);
  EXPECT_TRUE(store->Charge("d", 0.75, 0.0, "after").ok());
  EXPECT_EQ(store->Get("d")->spent_epsilon, 1.0);
}

}  // namespace
}  // namespace dpem
