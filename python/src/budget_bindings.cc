// The persistent privacy budget (dpem/accounting/budget_store.h) for
// Python's dpem.Budget: setting a data set's total and reading its account.
// Fits charge it through the pipeline (FitRequest::budget_file).
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "common.h"
#include "dpem/accounting/budget_store.h"

namespace dpem::python {
namespace {

void BudgetInit(const std::string& path, const std::string& dataset, double epsilon,
                double delta) {
  ThrowIfError(WithoutGil([&]() -> Status {
    DPEM_ASSIGN_OR_RETURN(BudgetStore store, BudgetStore::Open(path, /*create=*/true));
    return store.Init(dataset, epsilon, delta);
  }));
}

py::dict BudgetAccountOf(const std::string& path, const std::string& dataset) {
  const BudgetAccount a = ValueOrThrow(WithoutGil([&]() -> StatusOr<BudgetAccount> {
    DPEM_ASSIGN_OR_RETURN(const BudgetStore store, BudgetStore::Open(path, /*create=*/false));
    return store.Get(dataset);
  }));
  py::dict d;
  d["dataset"] = a.dataset;
  d["total_epsilon"] = a.total_epsilon;
  d["total_delta"] = a.total_delta;
  d["spent_epsilon"] = a.spent_epsilon;
  d["spent_delta"] = a.spent_delta;
  d["charges"] = a.charges;
  return d;
}

}  // namespace

void RegisterBudget(py::module_& m) {
  m.def("budget_init", &BudgetInit, py::arg("path"), py::arg("dataset"), py::arg("epsilon"),
        py::arg("delta"),
        "Sets the total (epsilon, delta) of `dataset` in the budget file `path` (created if "
        "missing); a total, once set, cannot change.");
  m.def("budget_account", &BudgetAccountOf, py::arg("path"), py::arg("dataset"),
        "The account of `dataset`: its total, what its charges spent, and their number.");
}

}  // namespace dpem::python
