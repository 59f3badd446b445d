#include "dpem/accounting/budget_store.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// The data sets FindSimilar returns for `source`, as "name:path,shape" with
// 1 or 0 for same path and same shape.
std::vector<std::string> Similar(const BudgetStore& store, const std::string& dataset,
                                 const DatasetSource& source) {
  const StatusOr<std::vector<SimilarDataset>> found = store.FindSimilar(dataset, source);
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  std::vector<std::string> out;
  for (const SimilarDataset& s : found.ok() ? *found : std::vector<SimilarDataset>{}) {
    out.push_back(s.dataset + ":" + (s.same_path ? "1" : "0") + "," + (s.same_shape ? "1" : "0"));
  }
  return out;
}

using Names = std::vector<std::string>;

TEST(BudgetStoreTest, SourcesAreRecordedAndMatchedByPathOrShape) {
  const std::string path = FreshPath("sources.db");
  {
    StatusOr<BudgetStore> store = BudgetStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->Init("a", 1.0, 0.0, {"/data/x.csv", 300, 2}).ok());
    ASSERT_TRUE(store->Init("b", 1.0, 0.0, {"/data/y.csv", 100, 3}).ok());
    ASSERT_TRUE(store->Init("c", 1.0, 0.0).ok());  // No source: never matches.
    ASSERT_TRUE(store->Init("d", 1.0, 0.0, {"/data/z.csv", -1, -1}).ok());  // Path only.
    // A repeated Init keeps the first source.
    ASSERT_TRUE(store->Init("a", 1.0, 0.0, {"/elsewhere.csv", 7, 7}).ok());
  }
  StatusOr<BudgetStore> store = BudgetStore::Open(path);  // Persisted.
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(Similar(*store, "new", {"/data/x.csv", 50, 5}), Names{"a:1,0"});
  EXPECT_EQ(Similar(*store, "new", {"/data/w.csv", 100, 3}), Names{"b:0,1"});
  EXPECT_EQ(Similar(*store, "new", {"/data/x.csv", 300, 2}), Names{"a:1,1"});
  EXPECT_EQ(Similar(*store, "new", {"/data/x.csv", 100, 3}), (Names{"a:1,0", "b:0,1"}));
  EXPECT_EQ(Similar(*store, "new", {"/data/z.csv", 300, 2}), (Names{"a:0,1", "d:1,0"}));
  EXPECT_EQ(Similar(*store, "a", {"/data/x.csv", 300, 2}), Names{});  // Itself.
  EXPECT_EQ(Similar(*store, "new", {"/elsewhere.csv", 7, 7}), Names{});
  EXPECT_EQ(Similar(*store, "new", {"", -1, -1}), Names{});
  EXPECT_EQ(Similar(*store, "new", {"", 300, 3}), Names{});  // Rows of a, columns of b.
  EXPECT_TRUE(store->CheckIntegrity().ok());
}

// Runs `sql` on the SQLite file `path` directly (not through BudgetStore).
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// The number of columns named source_path in the budgets table of `path`.
int SourceColumns(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info('budgets') "
                     "WHERE name = 'source_path'", -1, &q, nullptr);
  const int n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
  sqlite3_finalize(q);
  sqlite3_close(db);
  return n;
}

// A budget file written before sources were recorded (the first schema,
// verbatim) stays readable and chargeable, matches nothing, and gains the
// source columns only when a data set with a source is added.
TEST(BudgetStoreTest, FilesWithoutSourceColumnsStayUsable) {
  const std::string path = FreshPath("old.db");
  RawSql(path,
         "CREATE TABLE budgets("
         "  dataset TEXT PRIMARY KEY NOT NULL CHECK(length(dataset) > 0),"
         "  epsilon REAL NOT NULL CHECK(epsilon > 0),"
         "  delta REAL NOT NULL CHECK(delta >= 0 AND delta < 1),"
         "  created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);"
         "CREATE TABLE charges("
         "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
         "  dataset TEXT NOT NULL REFERENCES budgets(dataset),"
         "  epsilon REAL NOT NULL CHECK(epsilon >= 0),"
         "  delta REAL NOT NULL CHECK(delta >= 0),"
         "  note TEXT NOT NULL,"
         "  time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);"
         "PRAGMA application_id=1685078604;"  // 0x6470424c, "dpBL".
         "INSERT INTO budgets(dataset, epsilon, delta) VALUES('old', 1.0, 1e-5);"
         "INSERT INTO charges(dataset, epsilon, delta, note) VALUES('old', 0.25, 0, 'fit');");
  ASSERT_EQ(SourceColumns(path), 0);
  StatusOr<BudgetStore> store = BudgetStore::Open(path, /*create=*/false);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(store->CheckIntegrity().ok());
  ASSERT_TRUE(store->Get("old").ok());
  EXPECT_EQ(store->Get("old")->spent_epsilon, 0.25);
  EXPECT_TRUE(store->Charge("old", 0.5, 0.0, "again").ok());
  EXPECT_EQ(Similar(*store, "new", {"/data/x.csv", 300, 2}), Names{});
  ASSERT_TRUE(store->Init("named", 1.0, 0.0).ok());  // No source: no schema change.
  EXPECT_EQ(SourceColumns(path), 0);
  ASSERT_TRUE(store->Init("hashed", 1.0, 0.0, {"/data/x.csv", 300, 2}).ok());
  EXPECT_EQ(SourceColumns(path), 1);
  EXPECT_EQ(Similar(*store, "new", {"/data/x.csv", 300, 2}), Names{"hashed:1,1"});
  StatusOr<std::vector<BudgetAccount>> all = store->List();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ(store->Get("old")->spent_epsilon, 0.75);
  EXPECT_TRUE(store->CheckIntegrity().ok());
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
