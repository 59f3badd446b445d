// dpem._core: the C++ library seen from Python. The estimators in
// python/dpem/ are the public API; this module is theirs (docs/python.md).
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "common.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "dpem's C++ core: private fits through the library's pipeline, and the fitted "
            "models' scoring. Used by the estimators of the dpem package.";
  dpem::python::RegisterErrors(m);
  dpem::python::RegisterGmm(m);
  dpem::python::RegisterKmeans(m);
  dpem::python::RegisterFactorAnalysis(m);
  dpem::python::RegisterGradientEm(m);
  dpem::python::RegisterBudget(m);
  dpem::python::RegisterAccounting(m);
}
