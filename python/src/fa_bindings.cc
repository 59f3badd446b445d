// Factor analysis for Python: a private fit through the pipeline
// (MakeFaFitTask), and a model parsed from its model file (FaModelIo::FromJson)
// that scores, transforms and samples as `dpem score`, `dpem transform` and
// `dpem sample` do (and gives each record's log-density, FaLogDensities).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "common.h"
#include "dpem/models/factor_analysis/fa_fit_task.h"
#include "dpem/models/factor_analysis/fa_model_io.h"

namespace dpem::python {
namespace {

// The model's own arguments (dpem/_factor_analysis.py): n_components (L),
// max_iter (J, 100 when None, as `dpem fit fa`) and tol (EM's tolerance).
FaFitOptions FaOptions(const py::dict& args) {
  FaFitOptions o;
  o.em.factors = Get<int>(args, "n_components", 0);
  o.em.iterations = Get<int>(args, "max_iter", 100);
  o.em.tolerance = Get<double>(args, "tol", kFaEmTolerance);
  return o;
}

using FaModel = FittedModel<FaFit>;

}  // namespace

void RegisterFactorAnalysis(py::module_& m) {
  DefFit<&FaOptions, &MakeFaFitTask>(m, "fit_fa", "Fits factor analysis");
  BindModel<FaFit>(m, "FaModel", "A fitted factor analysis model (a dpem-fa file).")
      .def_property_readonly("mean", [](const FaModel& f) { return f.fit.parameters.mean; })
      .def_property_readonly("loadings", [](const FaModel& f) { return f.fit.parameters.loadings; })
      .def_property_readonly("noise_variances",
                             [](const FaModel& f) { return f.fit.parameters.noise_variances; })
      .def("score", OfParameters<FaModel, &FaMeanLogLikelihood>())
      .def("score_samples", OfParameters<FaModel, &FaLogDensities>())
      .def("transform", OfParameters<FaModel, &FaTransform>())
      .def("sample", SampleOfParameters<FaModel, &FaSample>(), py::arg("n"),
           py::arg("seed") = py::none());
}

}  // namespace dpem::python
