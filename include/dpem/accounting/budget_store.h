// A persistent privacy-budget ledger: a total (epsilon, delta) per data set,
// and the charges of the fits that drew from it, in an SQLite file.
//
// Composition: basic (sequential) composition. A data set's spent budget is
// the plain sum of the epsilons and the sum of the deltas of its charges; a
// charge is admitted only if both sums stay within the total. This is sound
// for any mix of (epsilon, delta)-DP fits, and loose for many small fits.
//
// Charging happens at reservation, before any data is read, and a charge is
// never refunded: a fit that crashes after its charge keeps it spent (its
// noise may already have been drawn and its output seen).
//
// Concurrency and crashes: every change is one SQLite transaction taken with
// BEGIN IMMEDIATE (the write lock is held from the read of the spent sums to
// the insert of the charge), in rollback-journal mode with synchronous=FULL,
// and a busy timeout, so that concurrent processes are serialised and a
// process killed at any point leaves either its whole charge or none of it.
//
// Thread safety: a BudgetStore is one SQLite connection; use one per thread.
// Any number of processes may open the same file.
#ifndef DPEM_ACCOUNTING_BUDGET_STORE_H_
#define DPEM_ACCOUNTING_BUDGET_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dpem/status.h"

namespace dpem {

// Relative slack of the admission test, so that decimal budgets split into
// equal parts (e.g. 0.3 as three charges of 0.1) are admitted despite binary
// rounding: a charge is admitted if spent + cost <= total * (1 + kBudgetSlack).
inline constexpr double kBudgetSlack = 1e-9;

// Where a data set came from, recorded by Init when it is named by a file's
// content hash: the file's absolute path and its shape. A file edited in
// place or re-serialised gets a new hash, hence a fresh budget; `dpem budget
// init` compares a new data set's source with the known ones' to notice that.
// An empty path and negative counts mean unknown.
struct DatasetSource {
  std::string path;
  long long rows = -1;
  long long columns = -1;
  bool HasShape() const { return rows >= 0 && columns >= 0; }
};

// A known data set whose recorded source resembles another one's.
struct SimilarDataset {
  std::string dataset;
  bool same_path = false;
  bool same_shape = false;  // Same rows and columns.
};

// One data set's budget: its total and the sums of its charges.
struct BudgetAccount {
  std::string dataset;
  double total_epsilon = 0.0;
  double total_delta = 0.0;
  double spent_epsilon = 0.0;
  double spent_delta = 0.0;
  long long charges = 0;  // Number of charges.
};

// A handle on a budget file. Move-only.
class BudgetStore {
 public:
  // Opens `path`, creating the file and its tables if missing and `create`
  // (else NotFound). IoError naming `path` if it cannot be opened or created
  // (missing directory, a directory); InvalidArgument if it exists but is not
  // a dpem budget file.
  static StatusOr<BudgetStore> Open(const std::string& path, bool create = true);

  BudgetStore(BudgetStore&&) noexcept;
  BudgetStore& operator=(BudgetStore&&) noexcept;
  ~BudgetStore();

  // Sets the total of `dataset` (non-empty) to (epsilon, delta), epsilon > 0
  // finite, delta in [0, 1). Totals are immutable: calling Init again with
  // the same total is a no-op, with another total FailedPrecondition (to
  // grant more budget, which voids the point of one, start a new file).
  // `source`, if known, is recorded with a new total (a repeated Init keeps
  // the first); a budget file made before sources were recorded gains the
  // columns for them then.
  Status Init(const std::string& dataset, double epsilon, double delta,
              const DatasetSource& source = {});

  // The data sets other than `dataset` whose recorded source has the path of
  // `source` (if known) or its rows and columns (if known), ordered by data
  // set. Data sets without a recorded source never match, so a budget file
  // made before sources were recorded gives none (and is not modified).
  StatusOr<std::vector<SimilarDataset>> FindSimilar(const std::string& dataset,
                                                    const DatasetSource& source) const;

  // Charges (epsilon, delta) to `dataset` in one transaction: NotFound if the
  // data set has no total, FailedPrecondition naming the remaining budget if
  // the charge would exceed it (nothing recorded), InvalidArgument for a
  // cost that is not finite and >= 0. `note` is stored with the charge.
  // `before_commit`, if set, runs inside the transaction after the charge is
  // written and before COMMIT (a test hook: crash tests kill the process
  // there).
  Status Charge(const std::string& dataset, double epsilon, double delta,
                const std::string& note,
                const std::function<void()>& before_commit = nullptr);

  // The account of `dataset`; NotFound if it has no total.
  StatusOr<BudgetAccount> Get(const std::string& dataset) const;
  // Every account, ordered by data set.
  StatusOr<std::vector<BudgetAccount>> List() const;
  // SQLite's PRAGMA integrity_check plus dpem's own checks (every charge
  // belongs to a data set with a total; no account is overspent).
  Status CheckIntegrity() const;

 private:
  struct Impl;
  explicit BudgetStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The default data-set ID of a file: "blake2b-256:" and the hex BLAKE2b-256
// hash of its bytes (libsodium crypto_generichash over the memory-mapped
// file), so that a renamed or copied file keeps its budget. The ID is of the
// bytes, not of the records: a file with one record changed, or the same
// records re-serialised (other number formatting, CSV to .npy), is a new data
// set with a fresh budget once someone runs `budget init` on it. Name data
// sets explicitly (--dataset) where that matters. NotFound / IoError naming
// `path`.
StatusOr<std::string> DatasetIdOfFile(const std::string& path);

}  // namespace dpem

#endif  // DPEM_ACCOUNTING_BUDGET_STORE_H_
