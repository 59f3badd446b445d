// The private-fit pipeline: the one sequence every fit of every model takes,
// written once, for every front-end (the CLI today; Python and MPI next).
//
//   1. validate the model's options (public values only)
//   2. check that the model file can be created
//   3. charge the privacy budget, before any record is read
//   4. open the data and check its shape against the options
//   5. make the generator (OS-keyed CSPRNG; a seed voids a private fit)
//   6. release the public domain from the data, if asked (--data-norm auto)
//   7. fit: the model's calibration, start, iterations (pass over blocks,
//      release, M-step) and re-accounting, around the shared first and last
//      steps (src/pipeline/fit_steps.h)
//   8. compose a released domain's cost into the guarantee
//   9. report why the guarantee is void, if it is; write the model file
//
// A model takes part by implementing FitTask: what is its own (its options,
// its fit, its model file). docs/architecture.md shows the whole flow.
//
// Thread safety: RunFit is reentrant; a FitTask is used by one call at a time.
#ifndef DPEM_PIPELINE_FIT_PIPELINE_H_
#define DPEM_PIPELINE_FIT_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dpem/accounting/guarantee.h"
#include "dpem/data/domain.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/collective.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// One model's part of the pipeline. Implemented once per model family
// (GmmFitTask, KmeansFitTask, FaFitTask, GradientEmFitTask).
class FitTask {
 public:
  virtual ~FitTask() = default;

  // Checks the options on public values alone (no data).
  virtual Status Validate() const = 0;
  // The (epsilon, delta) a budget is charged before the data is read, for
  // options that Validate() accepted; asked only when a budget is given.
  // Epsilon infinite for a plain fit (which a budget refuses).
  virtual StatusOr<double> ChargedEpsilon() const = 0;
  virtual double ChargedDelta() const = 0;
  // The fit's public domain and total epsilon, which a domain released by
  // the pipeline (step 6) replaces and reduces; null for a model without a
  // domain (the pipeline then refuses to release one).
  virtual DataDomain* MutableDomain() = 0;
  virtual double* MutableEpsilon() = 0;
  // Fits `x` (original units) with `gen`: step 7.
  virtual Status Fit(const RowSource& x, Generator& gen) = 0;
  // The fitted model's guarantee and model file: after a successful Fit.
  virtual PrivacyGuarantee& MutableGuarantee() = 0;
  virtual std::string ModelJson() const = 0;
};

// What a front-end asks of one fit, beyond the model's options.
struct FitRequest {
  // The data: `source` if set (the caller keeps it alive), else the file
  // `input` (.csv, or .npy memory-mapped). `input` also names the data in
  // messages and, without `dataset`, in the budget.
  std::string input;
  const RowSource* source = nullptr;
  // Without `source`: if set, opens the data at step 4, after the budget is
  // charged, in place of the file `input` (a front-end whose data is in
  // memory but checked when a source is made over it: Python's arrays).
  // Its errors are returned as they are.
  std::function<StatusOr<std::unique_ptr<RowSource>>()> open_source;
  // The model file to write (atomically); unset: none is written, and the
  // caller reads the result from its task.
  std::optional<std::string> output;
  // The budget (dpem/accounting/budget_store.h): none if `budget_file` is
  // empty. `dataset` names the data set, by default the hash of the file
  // `input`; with `source` or `open_source` it is required (the file may
  // not be the data).
  std::string budget_file;
  std::string dataset;
  // Recorded with the charge and opening every warning ("dpem fit gmm").
  std::string command = "dpem fit";
  // A reproducible generator (tests and experiments): a private fit with one
  // is VOID. Default: keyed by the operating system's CSPRNG.
  std::optional<std::uint64_t> seed;
  // Release the domain from the data at this pure epsilon, taken out of the
  // fit's epsilon (basic composition; docs/bounds.md). Unset: the domain is
  // the task's. Checked before the charge: the task must have a domain and a
  // finite epsilon strictly above this one.
  std::optional<double> bounds_epsilon;
  // Receives each warning line (without a newline); null: warnings dropped.
  std::function<void(const std::string&)> warn;
  // The front-end's own check of the opened data's shape (N records of d
  // values: public) against what it was asked (e.g. in the words of its
  // flags), before anything is drawn; it sees no record. Null: none (the
  // task's fit checks the shape too).
  std::function<Status(Eigen::Index rows, Eigen::Index cols)> check_shape;
  // A distributed fit (docs/distributed.md): this process is one rank of
  // `collective` and the data above (`source`, `open_source` or `input`) is
  // its shard; the ranks' shards in rank order are the table. Every rank
  // calls RunFit with the same request but its own shard. The order then
  // differs from one process's in one step: every rank opens and checks its
  // shard first, and the budget is charged only after all have (one bad
  // shard refuses the whole run, naming its rank, with nothing charged).
  // Only rank 0 charges the budget, warns and writes the model file; every
  // rank draws from rank 0's generator stream (Generator::ShareFromRank0).
  // Every rank returns the same status. Null: one process holds the data.
  const Collective* collective = nullptr;
};

// Step 3 on its own, for a front-end that releases outside a fit (dpem
// bounds): charges (epsilon, delta) to `budget_file` for the data set
// `dataset` (empty: DatasetIdOfFile(input)), recording `command` and
// `input`. Nothing without a budget file. InvalidArgument for an infinite
// epsilon (a plain fit spends no budget); the store's errors otherwise
// (NotFound: no total for the data set; FailedPrecondition: it would be
// exceeded).
Status ChargePrivacyBudget(const std::string& budget_file, const std::string& dataset,
                           const std::string& input, double epsilon, double delta,
                           const std::string& command);

// Runs the pipeline for `task`. Errors: the task's, the budget's (nothing is
// charged for a fit refused before step 3, bounds_epsilon's checks among
// them), the data's (prefixed with `input`), IoError for the model file. On
// error no model file exists. A private fit with `seed` is void whether or
// not the task says so.
Status RunFit(FitTask& task, const FitRequest& request);

}  // namespace dpem

#endif  // DPEM_PIPELINE_FIT_PIPELINE_H_
