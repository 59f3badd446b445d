// The steps every model's fit shares, in the order the pipeline takes them
// (docs/architecture.md): the guarantee's target, the public domain and the
// unit-ball view before any record is read, and the re-accounting of the
// fit's own ledger after the last release. A model's Fit function calls
// these around what is its own (calibration, start, iterations, M-step).
// Private to the library.
#ifndef DPEM_PIPELINE_FIT_STEPS_H_
#define DPEM_PIPELINE_FIT_STEPS_H_

#include <cstddef>
#include <utility>

#include "dpem/accounting/guarantee.h"
#include "dpem/data/domain.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::internal {

// What a fit holds after its first steps, before it reads a record.
struct FitStart {
  Engine engine;
  DataDomain domain;       // Resolved: centre of d entries, R set.
  UnitBallRowSource unit;  // The records mapped (and clipped) into the unit ball.
};

// The shape check of a model of `components` components (K) fitted to `x`:
// InvalidArgument if `x` is empty or has fewer than K records. Public values
// only (N and d).
Status CheckComponentsFitData(const RowSource& x, int components);

// The first steps of a fit of `x` whose guarantee `g` was started
// (StartGuarantee): the engine, the domain (ResolveFitDomain: an R taken from
// the data of a private fit voids `g`), the void reason of a seeded
// generator (internal/guarantee.h), `g.guarantee_void` set from the reasons,
// and the unit-ball view of `x`. Reads no record unless R comes from the data.
StatusOr<FitStart> BeginFit(const RowSource& x, const DataDomain& requested,
                            const EngineOptions& engine, const Generator& gen,
                            PrivacyGuarantee& g);

// BeginFit for a model's `fit` (GmmFit, KmeansFit, FaFit) of `options`
// (their domain and engine): fit.guarantee is set to `guarantee` (started by
// StartGuarantee) before the steps, fit.domain to the resolved domain after.
template <typename Fit, typename Options, typename Guarantee>
StatusOr<FitStart> BeginModelFit(const RowSource& x, const Options& options, Guarantee guarantee,
                                 const Generator& gen, Fit& fit) {
  fit.guarantee = std::move(guarantee);
  DPEM_ASSIGN_OR_RETURN(FitStart start,
                        BeginFit(x, options.domain, options.engine, gen, fit.guarantee));
  fit.domain = start.domain;
  return start;
}

// The options an iterative fit (GMM, k-means) runs with: `requested`
// validated (its Validate), with J resolved (its ResolvedIterations: 0 is the
// model's default), so that every later step sees the J that runs.
template <typename Options>
StatusOr<Options> ResolvedFitOptions(const Options& requested) {
  DPEM_RETURN_IF_ERROR(requested.Validate());
  Options options = requested;
  options.iterations = requested.ResolvedIterations();
  return options;
}

// The last step of a private fit: re-accounts `g.ledger` with `g.accountant`
// at `accounting_delta` into `g.epsilon`, after checking that the fit made
// exactly the `budgeted` releases its calibration planned. InternalError if
// it made another number, or if they cost more than `g.target_epsilon` (a
// bug: the calibration promised less).
Status Reaccount(std::size_t budgeted, double accounting_delta, PrivacyGuarantee& g);

}  // namespace dpem::internal

#endif  // DPEM_PIPELINE_FIT_STEPS_H_
