// DP gradient EM for Python (wang-dp-gradient-em): a fit of the GMM, MRM or
// RMC model through the pipeline (GradientEmFitTask), on records laid out as
// `dpem fit gradient-em` reads them (dpem/data/generators.h: gmm y_1..y_d;
// mrm y, x_1..x_d; rmc y, x_1..x_d, z_1..z_d), which dpem/_gradient_em.py
// assembles from X and y; and the model parsed from its model file
// (GradientEmModelIo::FromJson), which scores records of the same layout as
// `dpem score` does.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "common.h"
#include "dpem/models/gradient_em/gradient_em_fit_task.h"
#include "dpem/models/gradient_em/gradient_em_model_io.h"

namespace dpem::python {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsSet(const py::dict& d, const char* name) { return d.contains(name) && !d[name].is_none(); }

// The model's own arguments (dpem/_gradient_em.py): method (resolved by the
// estimator), max_iter (T), sigma, tau, clip, robust_scale, step, zeta,
// calibration, init (the initial beta; None: random from the generator),
// init_norm. None leaves the library's default (NaN: not given).
GradientEmOptions GradientEmOptionsOf(const py::dict& args) {
  GradientEmOptions o;
  o.method = Parsed(args, "method", "dp", ParseGradientEmMethod);
  o.iterations = Get<int>(args, "max_iter", 0);
  o.sigma = Get<double>(args, "sigma", kNaN);
  o.tau = Get<double>(args, "tau", kNaN);
  o.clip = Get<double>(args, "clip", kNaN);
  o.robust_scale = Get<double>(args, "robust_scale", kNaN);
  o.step = Get<double>(args, "step", 1.0);
  o.zeta = Get<double>(args, "zeta", 0.1);
  o.calibration = Parsed(args, "calibration", "accountant", ParseNoiseCalibrationRule);
  const std::vector<double> init = Get<std::vector<double>>(args, "init", {});
  o.initial = Eigen::Map<const Eigen::VectorXd>(init.data(),
                                                static_cast<Eigen::Index>(init.size()));
  o.init_norm = Get<double>(args, "init_norm", 1.0);
  return o;
}

// What `dpem fit gradient-em` refuses among its flags and the library does
// not (the parameters a method does not use), in the estimator's names.
Status CheckMethodArguments(const GradientEmOptions& o, const py::dict& shared,
                            const py::dict& args) {
  const std::string method(GradientEmMethodName(o.method));
  if (!o.IsPrivate()) {
    if (std::isfinite(o.epsilon)) {
      return InvalidArgumentError("epsilon: method 'nonprivate' is a plain fit: epsilon must be "
                                  "inf");
    }
    for (const char* name : {"tau", "clip", "robust_scale"}) {
      if (IsSet(args, name)) {
        return InvalidArgumentError(std::string(name) + ": not used by method 'nonprivate'");
      }
    }
    if (IsSet(shared, "delta")) return InvalidArgumentError("delta: not used by method 'nonprivate'");
    return OkStatus();
  }
  if (!std::isfinite(o.epsilon) && o.epsilon > 0.0) {
    return InvalidArgumentError("epsilon: method '" + method + "' is private: epsilon must be "
                                "finite (epsilon=inf fits plain gradient EM, method "
                                "'nonprivate')");
  }
  const bool robust = o.method == GradientEmMethod::kDp || o.method == GradientEmMethod::kDpEm;
  if (robust && !IsSet(args, "tau")) {
    return InvalidArgumentError("tau: the public second-moment bound is required for method '" +
                                method + "' (no default)");
  }
  if (!robust && IsSet(args, "robust_scale")) {
    return InvalidArgumentError("robust_scale: applies to methods 'dp' and 'dp-em' only");
  }
  if (o.method == GradientEmMethod::kClipped && !IsSet(args, "clip")) {
    return InvalidArgumentError("clip: the clipping threshold C is required for method "
                                "'clipped'");
  }
  return OkStatus();
}

// fit_gradient_em(x, shared, model) -> (model_json, warnings): `x` in the
// CLI's layout for args["model"].
py::tuple FitGradientEm(const py::array& x, const py::dict& shared_args, const py::dict& args) {
  SharedFitArgs shared = ParseSharedFitArgs(shared_args);
  const GradientEmModel model = Parsed(args, "model", "", ParseGradientEmModel);
  GradientEmOptions options = GradientEmOptionsOf(args);
  ApplySharedFitArgs(shared, options);
  ThrowIfError(CheckMethodArguments(options, shared_args, args));
  GradientEmFitTask task(model, std::move(options), /*trajectory=*/false);
  FitOutcome outcome = RunFitOnArray(task, x, std::move(shared.request));
  AddFeatureNames(shared.feature_names, outcome.model_json);
  return ToPython(outcome);
}

using GradientEmFittedModel = FittedModel<GradientEmModelFit>;

// A method model.<name>(records) = F(model.fit, records) (RowsMethod).
template <auto F>
auto OfFit() {
  return RowsMethod<GradientEmFittedModel>(
      [](const GradientEmFittedModel& model, const DataMatrix& x) { return F(model.fit, x); });
}

}  // namespace

void RegisterGradientEm(py::module_& m) {
  m.def("fit_gradient_em", &FitGradientEm, py::arg("x"), py::arg("shared"), py::arg("model"),
        "Fits DP gradient EM to x (the CLI's column layout for the model; C-contiguous "
        "float64, not copied) through the private-fit pipeline, without the GIL; returns "
        "(model_json, warnings), the model file `dpem fit gradient-em --output` writes.");
  BindModel<GradientEmModelFit>(
      m, "GradientEmModel", "A fitted gradient EM model (a dpem-gradient-em file).")
      .def_property_readonly(
          "kind", [](const GradientEmFittedModel& f) { return GradientEmModelName(f.fit.model); })
      .def_property_readonly("beta", [](const GradientEmFittedModel& f) { return f.fit.beta; })
      .def_property_readonly("sigma", [](const GradientEmFittedModel& f) { return f.fit.sigma; })
      .def("score", OfFit<&GradientEmModelMeanLogLikelihood>(),
           "The mean log-likelihood of records in the fit's layout, as `dpem score`.")
      .def("score_samples", OfFit<&GradientEmModelLogLikelihoods>(),
           "The log-likelihood of each record (the fit's layout).");
  m.def("check_rows", &CheckRows, py::arg("x"),
        "Raises ValueError 'X: record ...' (the fit's message) if x has a NaN or infinite "
        "entry; x is a 2-D C-contiguous float64 array, not copied.");
}

}  // namespace dpem::python
