#include "dpem/accounting/budget_store.h"

#include <sodium.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <string_view>

#include "internal/file_util.h"

namespace dpem {
namespace {

// PRAGMA application_id of dpem budget files ("dpBL"), and the schema.
constexpr int kApplicationId = 0x6470424c;
constexpr int kBusyTimeoutMs = 120000;
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS budgets("
    "  dataset TEXT PRIMARY KEY NOT NULL CHECK(length(dataset) > 0),"
    "  epsilon REAL NOT NULL CHECK(epsilon > 0),"
    "  delta REAL NOT NULL CHECK(delta >= 0 AND delta < 1),"
    "  created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,"
    "  source_path TEXT, source_rows INTEGER, source_columns INTEGER);"
    "CREATE TABLE IF NOT EXISTS charges("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  dataset TEXT NOT NULL REFERENCES budgets(dataset),"
    "  epsilon REAL NOT NULL CHECK(epsilon >= 0),"
    "  delta REAL NOT NULL CHECK(delta >= 0),"
    "  note TEXT NOT NULL,"
    "  time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);";

// The columns of budgets that record a data set's source (DatasetSource),
// added after the first version: budget files made before them lack them, and
// gain them (all NULL for the existing data sets) at their next Init with a
// source.
constexpr const char* kAddSourceColumns =
    "ALTER TABLE budgets ADD COLUMN source_path TEXT;"
    "ALTER TABLE budgets ADD COLUMN source_rows INTEGER;"
    "ALTER TABLE budgets ADD COLUMN source_columns INTEGER;";

// A prepared statement, finalised on destruction.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() const { return s_; }
  void Text(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void Real(int i, double v) { sqlite3_bind_double(s_, i, v); }
  void Int(int i, long long v) { sqlite3_bind_int64(s_, i, v); }
  void Null(int i) { sqlite3_bind_null(s_, i); }
  int Step() { return sqlite3_step(s_); }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

// Binds a source's path, rows and columns to parameters first .. first + 2,
// NULL where unknown.
void BindSource(Statement& q, int first, const DatasetSource& source) {
  if (source.path.empty()) {
    q.Null(first);
  } else {
    q.Text(first, source.path);
  }
  if (source.HasShape()) {
    q.Int(first + 1, source.rows);
    q.Int(first + 2, source.columns);
  } else {
    q.Null(first + 1);
    q.Null(first + 2);
  }
}

bool IsFiniteNonNegative(double v) { return std::isfinite(v) && v >= 0.0; }

std::string Format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

}  // namespace

struct BudgetStore::Impl {
  std::string path;
  sqlite3* db = nullptr;
  ~Impl() { sqlite3_close_v2(db); }

  Status Error(const std::string& what) const {
    return IoError(path + ": " + what + ": " + sqlite3_errmsg(db));
  }
  Status Exec(const char* sql) const {
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    if (rc == SQLITE_NOTADB) return InvalidArgumentError(path + ": not a dpem budget file");
    if (rc != SQLITE_OK) return IoError(path + ": " + text);
    return OkStatus();
  }
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT; rolls back on error.
  template <typename Body>
  Status Transaction(Body body) {
    DPEM_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Status status = body();
    if (status.ok()) status = Exec("COMMIT");
    if (!status.ok()) (void)Exec("ROLLBACK");
    return status;
  }
  StatusOr<BudgetAccount> Account(const std::string& dataset) const;
  StatusOr<bool> HasSourceColumns() const;
  Status Insert(const std::string& dataset, double epsilon, double delta,
                const DatasetSource& source);
  Status Setup();
};

StatusOr<bool> BudgetStore::Impl::HasSourceColumns() const {
  Statement q(db, "SELECT count(*) FROM pragma_table_info('budgets') WHERE name = 'source_path'");
  if (!q.ok() || q.Step() != SQLITE_ROW) return Error("cannot read the schema");
  return sqlite3_column_int(q.get(), 0) > 0;
}

// Inserts a new total with its source (NULL where unknown), adding the source
// columns to a budget file made before them if there is a source to record.
Status BudgetStore::Impl::Insert(const std::string& dataset, double epsilon, double delta,
                                 const DatasetSource& source) {
  const bool has_source = !source.path.empty() || source.HasShape();
  DPEM_ASSIGN_OR_RETURN(bool columns, HasSourceColumns());
  if (has_source && !columns) {
    DPEM_RETURN_IF_ERROR(Exec(kAddSourceColumns));
    columns = true;
  }
  Statement q(db, columns ? "INSERT INTO budgets(dataset, epsilon, delta, source_path, "
                            "source_rows, source_columns) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
                          : "INSERT INTO budgets(dataset, epsilon, delta) VALUES(?1, ?2, ?3)");
  if (!q.ok()) return Error("cannot set the budget");
  q.Text(1, dataset);
  q.Real(2, epsilon);
  q.Real(3, delta);
  if (columns) BindSource(q, 4, source);
  if (q.Step() != SQLITE_DONE) return Error("cannot set the budget");
  return OkStatus();
}

StatusOr<BudgetAccount> BudgetStore::Impl::Account(const std::string& dataset) const {
  Statement q(db,
              "SELECT b.epsilon, b.delta, COALESCE(SUM(c.epsilon), 0), "
              "COALESCE(SUM(c.delta), 0), COUNT(c.id) FROM budgets b "
              "LEFT JOIN charges c ON c.dataset = b.dataset WHERE b.dataset = ?1 "
              "GROUP BY b.dataset");
  if (!q.ok()) return Error("cannot read the budget");
  q.Text(1, dataset);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) {
    return NotFoundError(path + ": no budget for data set '" + dataset +
                         "' (set one with dpem budget init)");
  }
  if (rc != SQLITE_ROW) return Error("cannot read the budget");
  BudgetAccount a;
  a.dataset = dataset;
  a.total_epsilon = sqlite3_column_double(q.get(), 0);
  a.total_delta = sqlite3_column_double(q.get(), 1);
  a.spent_epsilon = sqlite3_column_double(q.get(), 2);
  a.spent_delta = sqlite3_column_double(q.get(), 3);
  a.charges = sqlite3_column_int64(q.get(), 4);
  return a;
}

Status BudgetStore::Impl::Setup() {
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  DPEM_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL; "
                            "PRAGMA foreign_keys=ON"));
  return Transaction([&]() -> Status {
    Statement q(db, "PRAGMA application_id");
    if (!q.ok() || q.Step() != SQLITE_ROW) {
      return sqlite3_errcode(db) == SQLITE_NOTADB
                 ? InvalidArgumentError(path + ": not a dpem budget file")
                 : Error("cannot read the file header");
    }
    const int id = sqlite3_column_int(q.get(), 0);
    Statement tables(db, "SELECT count(*) FROM sqlite_master");
    if (!tables.ok() || tables.Step() != SQLITE_ROW) return Error("cannot read the schema");
    const bool empty = sqlite3_column_int(tables.get(), 0) == 0;
    if (id != kApplicationId && !(id == 0 && empty)) {
      return InvalidArgumentError(path + ": not a dpem budget file (an SQLite file of another "
                                  "application)");
    }
    if (!empty) return OkStatus();
    DPEM_RETURN_IF_ERROR(Exec(kSchema));
    return Exec(("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str());
  });
}

BudgetStore::BudgetStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BudgetStore::BudgetStore(BudgetStore&&) noexcept = default;
BudgetStore& BudgetStore::operator=(BudgetStore&&) noexcept = default;
BudgetStore::~BudgetStore() = default;

StatusOr<BudgetStore> BudgetStore::Open(const std::string& path, bool create) {
  struct stat st {};
  if (path.empty()) return InvalidArgumentError("budget file: empty path");
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return IoError(path + ": not a regular file");
  if (!exists && !create) {
    return NotFoundError(path + ": no such budget file (create it with dpem budget init)");
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const int rc = sqlite3_open_v2(path.c_str(), &impl->db,
                                 SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    return IoError(path + ": cannot open the budget file: " +
                   (impl->db ? sqlite3_errmsg(impl->db) : sqlite3_errstr(rc)));
  }
  DPEM_RETURN_IF_ERROR(impl->Setup());
  return BudgetStore(std::move(impl));
}

Status BudgetStore::Init(const std::string& dataset, double epsilon, double delta,
                         const DatasetSource& source) {
  if (dataset.empty()) return InvalidArgumentError("data set: must not be empty");
  if (!(std::isfinite(epsilon) && epsilon > 0.0)) {
    return InvalidArgumentError("budget epsilon: must be a finite number > 0, got " + Format(epsilon));
  }
  if (!(delta >= 0.0 && delta < 1.0)) {
    return InvalidArgumentError("budget delta: must be in [0, 1), got " + Format(delta));
  }
  return impl_->Transaction([&]() -> Status {
    StatusOr<BudgetAccount> existing = impl_->Account(dataset);
    if (existing.ok()) {
      if (existing->total_epsilon == epsilon && existing->total_delta == delta) return OkStatus();
      return FailedPreconditionError(
          impl_->path + ": data set '" + dataset + "' already has the total (epsilon " +
          Format(existing->total_epsilon) + ", delta " + Format(existing->total_delta) +
          "); totals cannot be changed");
    }
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    return impl_->Insert(dataset, epsilon, delta, source);
  });
}

StatusOr<std::vector<SimilarDataset>> BudgetStore::FindSimilar(
    const std::string& dataset, const DatasetSource& source) const {
  std::vector<SimilarDataset> out;
  DPEM_ASSIGN_OR_RETURN(const bool columns, impl_->HasSourceColumns());
  if (!columns) return out;  // Made before sources were recorded.
  // NULL never equals anything, so unknown paths and shapes never match.
  Statement q(impl_->db,
              "SELECT dataset, source_path = ?2, source_rows = ?3 AND source_columns = ?4 "
              "FROM budgets WHERE dataset <> ?1 AND (source_path = ?2 OR "
              "(source_rows = ?3 AND source_columns = ?4)) ORDER BY dataset");
  if (!q.ok()) return impl_->Error("cannot read the budgets");
  q.Text(1, dataset);
  BindSource(q, 2, source);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const char* name = reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
    out.push_back({name ? name : "", sqlite3_column_int(q.get(), 1) == 1,
                   sqlite3_column_int(q.get(), 2) == 1});
  }
  if (rc != SQLITE_DONE) return impl_->Error("cannot read the budgets");
  return out;
}

Status BudgetStore::Charge(const std::string& dataset, double epsilon, double delta,
                           const std::string& note, const std::function<void()>& before_commit) {
  if (!IsFiniteNonNegative(epsilon) || !IsFiniteNonNegative(delta)) {
    return InvalidArgumentError("budget charge: epsilon and delta must be finite and >= 0, got (" +
                                Format(epsilon) + ", " + Format(delta) + ")");
  }
  return impl_->Transaction([&]() -> Status {
    DPEM_ASSIGN_OR_RETURN(const BudgetAccount a, impl_->Account(dataset));
    const double eps_after = a.spent_epsilon + epsilon, delta_after = a.spent_delta + delta;
    if (eps_after > a.total_epsilon * (1 + kBudgetSlack) ||
        delta_after > a.total_delta * (1 + kBudgetSlack)) {
      return FailedPreconditionError(
          impl_->path + ": privacy budget of data set '" + dataset + "' exceeded: the fit needs (" +
          Format(epsilon) + ", " + Format(delta) + "), remaining (" +
          Format(std::max(0.0, a.total_epsilon - a.spent_epsilon)) + ", " +
          Format(std::max(0.0, a.total_delta - a.spent_delta)) + ") of (" +
          Format(a.total_epsilon) + ", " + Format(a.total_delta) + ")");
    }
    Statement q(impl_->db,
                "INSERT INTO charges(dataset, epsilon, delta, note) VALUES(?1, ?2, ?3, ?4)");
    if (!q.ok()) return impl_->Error("cannot record the charge");
    q.Text(1, dataset);
    q.Real(2, epsilon);
    q.Real(3, delta);
    q.Text(4, note);
    if (q.Step() != SQLITE_DONE) return impl_->Error("cannot record the charge");
    if (before_commit) before_commit();
    return OkStatus();
  });
}

StatusOr<BudgetAccount> BudgetStore::Get(const std::string& dataset) const {
  return impl_->Account(dataset);
}

StatusOr<std::vector<BudgetAccount>> BudgetStore::List() const {
  Statement q(impl_->db, "SELECT dataset FROM budgets ORDER BY dataset");
  if (!q.ok()) return impl_->Error("cannot list the budgets");
  std::vector<BudgetAccount> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const char* name = reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
    DPEM_ASSIGN_OR_RETURN(BudgetAccount a, impl_->Account(name ? name : ""));
    out.push_back(std::move(a));
  }
  if (rc != SQLITE_DONE) return impl_->Error("cannot list the budgets");
  return out;
}

Status BudgetStore::CheckIntegrity() const {
  Statement q(impl_->db, "PRAGMA integrity_check");
  if (!q.ok() || q.Step() != SQLITE_ROW) return impl_->Error("integrity check failed");
  const char* r = reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
  if (r == nullptr || std::string_view(r) != "ok") {
    return IoError(impl_->path + ": integrity check: " + (r ? r : "no result"));
  }
  Statement orphans(impl_->db,
                    "SELECT count(*) FROM charges WHERE dataset NOT IN (SELECT dataset FROM "
                    "budgets)");
  if (!orphans.ok() || orphans.Step() != SQLITE_ROW) return impl_->Error("integrity check failed");
  if (sqlite3_column_int64(orphans.get(), 0) != 0) {
    return IoError(impl_->path + ": integrity check: charges of unknown data sets");
  }
  DPEM_ASSIGN_OR_RETURN(const std::vector<BudgetAccount> all, List());
  for (const BudgetAccount& a : all) {
    if (a.spent_epsilon > a.total_epsilon * (1 + kBudgetSlack) ||
        a.spent_delta > a.total_delta * (1 + kBudgetSlack)) {
      return IoError(impl_->path + ": integrity check: data set '" + a.dataset + "' overspent");
    }
  }
  return OkStatus();
}

StatusOr<std::string> DatasetIdOfFile(const std::string& path) {
  if (sodium_init() < 0) return InternalError("libsodium could not be initialised");
  // Mapped, so that a file larger than memory is hashed as it is paged in.
  DPEM_ASSIGN_OR_RETURN(const internal::MappedFile file, internal::MappedFile::Open(path));
  const std::string_view bytes = file.data();
  unsigned char hash[32];
  crypto_generichash(hash, sizeof hash, reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size(), nullptr, 0);
  char hex[2 * sizeof hash + 1];
  sodium_bin2hex(hex, sizeof hex, hash, sizeof hash);
  return std::string("blake2b-256:") + hex;
}

}  // namespace dpem
