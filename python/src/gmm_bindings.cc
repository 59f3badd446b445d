// Gaussian mixtures for Python: a private fit through the pipeline
// (MakeGmmFitTask), and a model parsed from its model file (GmmModelIo::FromJson)
// that scores, predicts and samples with the library's functions, so that a
// model scores the same in Python and in `dpem score`.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "bindings.h"
#include "common.h"
#include "dpem/models/gmm/gmm_fit_task.h"
#include "dpem/models/gmm/gmm_model_io.h"
#include "dpem/random/generator.h"

namespace dpem::python {
namespace {

// The model's own arguments (dpem/_mixture.py): n_components, max_iter
// (None: the library's default J), covariance_type, estimator,
// covariance_floor, init (None: the default start), mechanisms,
// start_cell_frames, the iterations' frame options, iterate_averaging and
// adaptive_iterations, each defaulting to
// GmmFitOptions' default; the library validates them.
GmmFitOptions GmmOptions(const py::dict& args) {
  GmmFitOptions o;
  ComponentsAndIterationsInto(args, "n_components", o);
  o.covariance = Parsed(args, "covariance_type", "full", ParseCovarianceType);
  o.estimator = Parsed(args, "estimator", "mle", ParseEstimator);
  o.covariance_floor = Get<double>(args, "covariance_floor", o.covariance_floor);
  o.init = OptionalParsed(args, "init", ParseGmmInit);
  o.mechanisms = Parsed(args, "mechanisms", "joint", ParseGmmMechanisms);
  o.start_cell_frames = Get<bool>(args, "start_cell_frames", o.start_cell_frames);
  o.component_frames = Get<bool>(args, "component_frames", o.component_frames);
  o.frame_radius = Get<double>(args, "frame_radius", o.frame_radius);
  o.frame_clip_correction = Get<bool>(args, "frame_clip_correction", o.frame_clip_correction);
  o.spherical_first_iteration =
      Get<bool>(args, "spherical_first_iteration", o.spherical_first_iteration);
  o.diagonal_first_iteration =
      Get<bool>(args, "diagonal_first_iteration", o.diagonal_first_iteration);
  o.budget_schedule = Get<bool>(args, "budget_schedule", o.budget_schedule);
  o.iterate_averaging = Get<bool>(args, "iterate_averaging", o.iterate_averaging);
  o.adaptive_iterations = Get<bool>(args, "adaptive_iterations", o.adaptive_iterations);
  return o;
}

using GmmModel = FittedModel<GmmFit>;

// The K covariances as a K x d x d array.
py::array_t<double> Covariances(const GmmModel& m) {
  const GmmParameters& p = m.fit.parameters;
  const auto k = static_cast<py::ssize_t>(p.components());
  const auto d = static_cast<py::ssize_t>(p.dimension());
  py::array_t<double> out({k, d, d});
  auto view = out.mutable_unchecked<3>();
  for (py::ssize_t c = 0; c < k; ++c) {
    for (py::ssize_t i = 0; i < d; ++i) {
      for (py::ssize_t j = 0; j < d; ++j) view(c, i, j) = p.covariances[c](i, j);
    }
  }
  return out;
}

// `n` draws and the component of each (model.sample's tuple).
StatusOr<std::pair<DataMatrix, Eigen::VectorXi>> SampleWithLabels(const GmmModel& m,
                                                                  Eigen::Index n,
                                                                  Generator& gen) {
  Eigen::VectorXi labels;
  DPEM_ASSIGN_OR_RETURN(DataMatrix draws, Sample(m.fit.parameters, n, gen, &labels));
  return std::make_pair(std::move(draws), std::move(labels));
}

}  // namespace

void RegisterGmm(py::module_& m) {
  DefFit<&GmmOptions, &MakeGmmFitTask>(m, "fit_gmm", "Fits a Gaussian mixture");
  BindModel<GmmFit>(m, "GmmModel", "A fitted Gaussian mixture (a dpem-gmm model file).")
      .def_property_readonly("weights", [](const GmmModel& g) { return g.fit.parameters.weights; })
      .def_property_readonly("means", [](const GmmModel& g) { return g.fit.parameters.means; })
      .def_property_readonly("covariances", &Covariances)
      .def("score", OfParameters<GmmModel, &MeanLogLikelihood>())
      .def("score_samples", OfParameters<GmmModel, &LogDensities>())
      .def("predict", OfParameters<GmmModel, &Predict>())
      .def("predict_proba", OfParameters<GmmModel, &PredictProba>())
      .def("sample", SampleMethod<GmmModel>(&SampleWithLabels), py::arg("n"),
           py::arg("seed") = py::none());
}

}  // namespace dpem::python
