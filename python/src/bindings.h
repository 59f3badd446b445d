// The registration function of each part of dpem._core (module.cc calls
// them in order).
#ifndef DPEM_PYTHON_SRC_BINDINGS_H_
#define DPEM_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace dpem::python {

// fit_gmm and GmmModel (Gaussian mixtures).
void RegisterGmm(pybind11::module_& m);
// fit_kmeans and KmeansModel.
void RegisterKmeans(pybind11::module_& m);
// fit_fa and FaModel (factor analysis).
void RegisterFactorAnalysis(pybind11::module_& m);
// fit_gradient_em, GradientEmModel and check_rows (DP gradient EM).
void RegisterGradientEm(pybind11::module_& m);
// budget_init and budget_account (dpem/accounting/budget_store.h).
void RegisterBudget(pybind11::module_& m);
// accountant_names, epsilon and calibrate (dpem/accounting/).
void RegisterAccounting(pybind11::module_& m);

}  // namespace dpem::python

#endif  // DPEM_PYTHON_SRC_BINDINGS_H_
