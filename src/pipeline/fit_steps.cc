// The steps every fit shares: see pipeline/fit_steps.h.
#include "pipeline/fit_steps.h"

#include <string>
#include <utility>

#include "dpem/accounting/accountant.h"
#include "internal/guarantee.h"

namespace dpem::internal {

Status CheckComponentsFitData(const RowSource& x, int components) {
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (x.rows() < components) {
    return InvalidArgumentError("components K = " + std::to_string(components) +
                                " exceeds the number of records N = " +
                                std::to_string(x.rows()));
  }
  return OkStatus();
}

StatusOr<FitStart> BeginFit(const RowSource& x, const DataDomain& requested,
                            const EngineOptions& engine_options, const Generator& gen,
                            PrivacyGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(Engine engine, Engine::Create(engine_options));
  DPEM_ASSIGN_OR_RETURN(DataDomain domain,
                        ResolveFitDomain(x, requested, g.is_private, &g.void_reasons));
  AppendSeededGeneratorVoidReason(gen, g.is_private, g.void_reasons);
  g.guarantee_void = !g.void_reasons.empty();
  DPEM_ASSIGN_OR_RETURN(UnitBallRowSource unit, UnitBallRowSource::Create(x, domain));
  return FitStart{std::move(engine), std::move(domain), std::move(unit)};
}

Status Reaccount(std::size_t budgeted, double accounting_delta, PrivacyGuarantee& g) {
  if (g.ledger.size() != budgeted) {
    return InternalError("the fit made " + std::to_string(g.ledger.size()) +
                         " releases but budgeted " + std::to_string(budgeted));
  }
  DPEM_ASSIGN_OR_RETURN(g.epsilon, ComputeEpsilon(g.ledger, accounting_delta, g.accountant));
  if (g.epsilon > g.target_epsilon) {
    return InternalError("the fit's releases cost more than the target epsilon");
  }
  return OkStatus();
}

}  // namespace dpem::internal
