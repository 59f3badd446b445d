// k-means for Python: a private fit through the pipeline
// (MakeKmeansFitTask), and a model parsed from its model file
// (KmeansModelIo::FromJson) that assigns records and computes the NICV exactly
// as `dpem predict` and `dpem score` do.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "common.h"
#include "dpem/models/kmeans/kmeans_fit_task.h"
#include "dpem/models/kmeans/kmeans_model_io.h"

namespace dpem::python {
namespace {

// The model's own arguments (dpem/_kmeans.py): n_clusters, max_iter (None:
// the library's default J), method, init (None: the default seeding).
KmeansFitOptions KmeansOptions(const py::dict& args) {
  KmeansFitOptions o;
  ComponentsAndIterationsInto(args, "n_clusters", o);
  o.method = Parsed(args, "method", "cdp-gauss", ParseKmeansMethod);
  o.init = OptionalParsed(args, "init", ParseKmeansInit);
  return o;
}

using KmeansModel = FittedModel<KmeansFit>;

}  // namespace

void RegisterKmeans(py::module_& m) {
  DefFit<&KmeansOptions, &MakeKmeansFitTask>(m, "fit_kmeans", "Fits k-means");
  BindModel<KmeansFit>(m, "KmeansModel", "A fitted k-means model (a dpem-kmeans file).")
      .def_property_readonly("centres", [](const KmeansModel& k) { return k.fit.centres; })
      .def("nicv", RowsMethod<KmeansModel>([](const KmeansModel& k, const DataMatrix& x) {
             return Nicv(k.fit.centres, x, k.fit.domain.center);
           }))
      .def("predict", RowsMethod<KmeansModel>([](const KmeansModel& k, const DataMatrix& x) {
             return NearestCentreLabels(k.fit.centres, x);
           }));
}

}  // namespace dpem::python
