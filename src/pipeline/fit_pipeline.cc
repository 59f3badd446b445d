// The private-fit pipeline: see dpem/pipeline/fit_pipeline.h.
#include "dpem/pipeline/fit_pipeline.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>
#include <utility>

#include "dpem/accounting/budget_store.h"
#include "dpem/data/io.h"
#include "dpem/data/private_bounds.h"
#include "engine/rank_combine.h"
#include "internal/file_util.h"
#include "internal/guarantee.h"

namespace dpem {


Status ChargePrivacyBudget(const std::string& budget_file, const std::string& dataset,
                           const std::string& input, double epsilon, double delta,
                           const std::string& command) {
  if (budget_file.empty()) return OkStatus();
  if (!std::isfinite(epsilon)) {
    return InvalidArgumentError("a non-private fit cannot be charged to a privacy budget");
  }
  std::string id = dataset;
  if (id.empty()) {
    DPEM_ASSIGN_OR_RETURN(id, DatasetIdOfFile(input));
  }
  DPEM_ASSIGN_OR_RETURN(BudgetStore store, BudgetStore::Open(budget_file, /*create=*/false));
  return store.Charge(id, epsilon, std::isfinite(delta) ? delta : 0.0,
                      command + " --input " + input);
}

namespace {

// Before step 3: a domain release (step 6) is checked on public values, so
// that it can never spend more than the charge covers nor be refused after
// it: the task must have a domain and be private, and bounds_epsilon must be
// a usable pure epsilon strictly below the task's total (the fit gets the
// rest). Without this, a library caller's bounds_epsilon above the task's
// epsilon released the domain at that epsilon (left in the task's options)
// while the budget was charged only the task's.
Status CheckDomainRequest(FitTask& task, const FitRequest& r) {
  if (!r.bounds_epsilon) return OkStatus();
  if (task.MutableDomain() == nullptr) {
    return InvalidArgumentError("this model has no domain to release");
  }
  PrivateBoundsOptions options;
  options.epsilon = *r.bounds_epsilon;
  DPEM_RETURN_IF_ERROR(options.Validate());
  const double epsilon = *task.MutableEpsilon();
  if (!std::isfinite(epsilon)) {
    return InvalidArgumentError("a domain is released from the data only for a private fit");
  }
  if (!(*r.bounds_epsilon < epsilon)) {
    return InvalidArgumentError("the domain's epsilon must be below the fit's total epsilon");
  }
  return OkStatus();
}

// Step 3: charges the task's (epsilon, delta) to the budget, if one is given.
Status ChargeBudget(const FitTask& task, const FitRequest& r) {
  if (r.budget_file.empty()) return OkStatus();
  if ((r.source != nullptr || r.open_source) && r.dataset.empty()) {
    return InvalidArgumentError("a budget needs the data set's name when the data is not a file");
  }
  DPEM_ASSIGN_OR_RETURN(const double epsilon, task.ChargedEpsilon());
  return ChargePrivacyBudget(r.budget_file, r.dataset, r.input, epsilon, task.ChargedDelta(),
                             r.command);
}

// The data of step 4: the caller's source, or the caller's opener's or the
// file's, opened into `owned`.
StatusOr<const RowSource*> OpenData(const FitRequest& r, std::unique_ptr<RowSource>& owned) {
  if (r.source != nullptr) return r.source;
  if (r.open_source) {
    DPEM_ASSIGN_OR_RETURN(owned, r.open_source());
    return owned.get();
  }
  DPEM_ASSIGN_OR_RETURN(owned, OpenRowSource(r.input));
  return owned.get();
}

bool IsRank0(const FitRequest& r) {
  return r.collective == nullptr || r.collective->rank() == 0;
}

void Warn(const FitRequest& r, const std::string& line) {
  if (r.warn && IsRank0(r)) r.warn(r.command + ": warning: " + line);
}

// Step 6: with bounds_epsilon, the domain released from `x`, written into the
// task's domain, its epsilon taken out of the task's (basic composition).
// CheckDomainRequest has made sure the task has a domain.
StatusOr<std::optional<PrivateBounds>> ReleaseDomain(FitTask& task, const FitRequest& r,
                                                     const RowSource& x, Generator& gen) {
  if (!r.bounds_epsilon) return std::optional<PrivateBounds>();
  PrivateBoundsOptions options;
  options.epsilon = *r.bounds_epsilon;
  DPEM_ASSIGN_OR_RETURN(PrivateBounds bounds, ReleasePrivateBounds(x, options, gen));
  if (const std::string w = MostOutsideWarning(bounds); !w.empty()) Warn(r, w);
  *task.MutableDomain() = bounds.domain;
  *task.MutableEpsilon() -= bounds.epsilon;
  return std::optional<PrivateBounds>(std::move(bounds));
}

// Step 8: the released domain's releases and cost composed into the fit's
// guarantee by the rule "basic composition of the bounds"
// (ComposeBoundsWithFit): its releases listed first, the target grown by
// its epsilon.
Status ComposeBounds(const std::optional<PrivateBounds>& bounds, PrivacyGuarantee& g) {
  if (!bounds) return OkStatus();
  DPEM_ASSIGN_OR_RETURN(const ComposedGuarantee c,
                        ComposeBoundsWithFit(*bounds, g.ledger, g.epsilon, g.delta, g.accountant));
  g.ledger = c.ledger;
  g.epsilon = c.epsilon;
  g.target_epsilon += bounds->epsilon;
  return OkStatus();
}

// A private fit made with a seeded generator (its noise, and a released
// domain's, reproducible from the seed) is void whatever the task did: the
// pipeline does not rely on every FitTask to say so (the models' own fits do,
// through BeginFit; a task written outside the library may not).
void VoidIfSeeded(const Generator& gen, PrivacyGuarantee& g) {
  std::vector<std::string> reason;
  internal::AppendSeededGeneratorVoidReason(gen, g.is_private, reason);
  if (reason.empty()) return;
  if (std::find(g.void_reasons.begin(), g.void_reasons.end(), reason[0]) ==
      g.void_reasons.end()) {
    g.void_reasons.push_back(reason[0]);
  }
  g.guarantee_void = true;
}

// Steps 5 to 8, on the opened data.
Status FitData(FitTask& task, const FitRequest& r, const RowSource& x) {
  DPEM_ASSIGN_OR_RETURN(Generator gen, r.seed ? StatusOr<Generator>(Generator::FromSeed(*r.seed))
                                              : Generator::FromOsEntropy());
  gen.ShareFromRank0(r.collective);
  DPEM_ASSIGN_OR_RETURN(const std::optional<PrivateBounds> bounds,
                        ReleaseDomain(task, r, x, gen));
  if (Status s = task.Fit(x, gen); !s.ok()) {
    return Status(s.code(), r.input.empty() ? s.message() : r.input + ": " + s.message());
  }
  VoidIfSeeded(gen, task.MutableGuarantee());
  return ComposeBounds(bounds, task.MutableGuarantee());
}

// Steps 8 and 9's end: the void reasons, one line each (a seeded private
// fit's among them, said once), and the model file.
Status Finish(FitTask& task, const FitRequest& r) {
  for (const std::string& reason : task.MutableGuarantee().void_reasons) {
    Warn(r, "the privacy guarantee is VOID: " + reason);
  }
  if (!r.output || !IsRank0(r)) return OkStatus();
  return internal::WriteFileAtomically(*r.output, task.ModelJson());
}

// A shard that opened badly, said before the budget is charged: a missing
// or unreadable file as it is, but a refusal of the records themselves
// (InvalidArgument: a value that is not a finite number, a malformed row),
// whose reason may quote the data (a field's text, a row number), only as
// that: a refusal that costs nothing must reveal no more than that the
// shard is not a valid table (docs/distributed.md, "Failures").
Status WithheldBeforeTheCharge(const FitRequest& r, const Status& opened) {
  if (opened.code() != StatusCode::kInvalidArgument) return opened;
  return InvalidArgumentError(
      (r.input.empty() ? std::string("the shard") : r.input) +
      ": not a valid table of finite numbers (the reason, which may quote the data, is "
      "withheld before the budget is charged; 'dpem fit' on this shard alone reports it)");
}

// The pipeline on one rank of a distributed fit (FitRequest::collective):
// each rank opens its shard, all agree that every shard opened, and only
// then does rank 0 charge the budget; the fit's passes combine the ranks'
// statistics (src/engine/rank_combine.h). Every collective step below is
// taken by every rank in the same order, whatever fails where.
Status RunDistributedFit(FitTask& task, const FitRequest& r) {
  const Collective* c = r.collective;
  Status created = OkStatus();
  if (r.output && IsRank0(r)) created = internal::CheckCanCreate(*r.output);
  DPEM_RETURN_IF_ERROR(internal::StatusOfRank0(c, created));
  std::unique_ptr<RowSource> shard;
  StatusOr<const RowSource*> opened = OpenData(r, shard);
  if (opened.ok() && shard == nullptr) {
    return InvalidArgumentError("a distributed fit opens its shard itself (open_source or input)");
  }
  DPEM_RETURN_IF_ERROR(internal::AgreeOnStatus(c, WithheldBeforeTheCharge(r, opened.status())));
  DPEM_ASSIGN_OR_RETURN(const ShardRowSource x, ShardRowSource::Create(std::move(shard), *c));
  if (r.check_shape) DPEM_RETURN_IF_ERROR(r.check_shape(x.rows(), x.cols()));
  DPEM_RETURN_IF_ERROR(internal::StatusOfRank0(c, IsRank0(r) ? ChargeBudget(task, r) : OkStatus()));
  DPEM_RETURN_IF_ERROR(FitData(task, r, x));
  const Status finished = Finish(task, r);
  return internal::StatusOfRank0(c, finished);
}

}  // namespace

Status RunFit(FitTask& task, const FitRequest& request) {
  DPEM_RETURN_IF_ERROR(task.Validate());
  DPEM_RETURN_IF_ERROR(CheckDomainRequest(task, request));
  if (!IsSingleProcess(request.collective)) return RunDistributedFit(task, request);
  if (request.output) DPEM_RETURN_IF_ERROR(internal::CheckCanCreate(*request.output));
  DPEM_RETURN_IF_ERROR(ChargeBudget(task, request));
  std::unique_ptr<RowSource> owned;
  DPEM_ASSIGN_OR_RETURN(const RowSource* x, OpenData(request, owned));
  if (request.check_shape) DPEM_RETURN_IF_ERROR(request.check_shape(x->rows(), x->cols()));
  DPEM_RETURN_IF_ERROR(FitData(task, request, *x));
  return Finish(task, request);
}

}  // namespace dpem
