// What the bindings of every model share: dpem's Status turned into Python
// exceptions, NumPy arrays seen as row sources (borrowed, never copied) or
// copied into matrices, and one private fit through the library's pipeline
// (dpem/pipeline/fit_pipeline.h) with the GIL released.
//
// The pure-Python estimators (python/dpem/) validate shapes and dtypes and
// hand over C-contiguous float64 arrays; everything about values (ranges,
// finiteness, the privacy rules) is checked here by the library, so that its
// messages reach Python unchanged.
#ifndef DPEM_PYTHON_SRC_COMMON_H_
#define DPEM_PYTHON_SRC_COMMON_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/models/model_io.h"
#include "dpem/pipeline/fit_pipeline.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem::python {

namespace py = pybind11;

// Raises the Python exception for `status` (not OK): ValueError for invalid
// arguments and out-of-range values, OSError for I/O, dpem.DpemError (a
// RuntimeError) otherwise (a budget that would be exceeded, a missing budget
// entry, a numerical failure). Needs the GIL.
[[noreturn]] void ThrowStatus(const Status& status);

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

template <typename T>
T ValueOrThrow(StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return std::move(value).value();
}

// Registers dpem.DpemError on `m` (before any binding can raise it).
void RegisterErrors(py::module_& m);

// A copy of a 2-D C-contiguous float64 array, for the scoring functions
// that take a matrix. TypeError for any other array (the Python layer
// converts first); ValueError "X: record ..." for a NaN or infinite entry,
// as a fit says.
DataMatrix CopyRows(const py::array& x);

// CopyRows's checks without the copy (for scoring done in Python).
void CheckRows(const py::array& x);

// The arguments every fit shares, as the estimators pass them (a dict with
// the keys of dpem/_base.py's _shared_fit_args). data_norm_auto with
// bounds_epsilon E0 asks the pipeline to release the domain at E0
// (request.bounds_epsilon; the domain holds a placeholder until then, as
// the CLI's --data-norm auto).
struct SharedFitArgs {
  double epsilon = 0.0;
  double delta = 0.0;  // NaN when None.
  DataDomain domain;   // Unused by a model without one (gradient EM).
  std::optional<AccountantKind> accountant;  // Unset: the model's default.
  EngineOptions engine;
  FitRequest request;  // Budget, seed, command; the data is set by RunFitOnArray.
  // A DataFrame's column names, written into the model file (AddFeatureNames).
  std::vector<std::string> feature_names;
};
SharedFitArgs ParseSharedFitArgs(const py::dict& args);

// Copies the shared arguments into a model's options (which have epsilon,
// delta, domain and engine; and accountant if they have one).
template <typename Options>
void ApplySharedFitArgs(const SharedFitArgs& shared, Options& o) {
  o.epsilon = shared.epsilon;
  o.delta = shared.delta;
  if constexpr (requires { o.domain; }) o.domain = shared.domain;
  o.engine = shared.engine;
  if constexpr (requires { o.accountant; }) {
    if (shared.accountant) o.accountant = *shared.accountant;
  }
}

// What a fit gives Python: the model file's text and the pipeline's warning
// lines (the estimators raise them as Python warnings).
struct FitOutcome {
  std::string model_json;
  std::vector<std::string> warnings;
};

// Runs the pipeline for `task` on `x`, a 2-D C-contiguous float64 array
// borrowed without a copy (MatrixRowSource::Borrow, made by the pipeline at
// step 4, after the budget is charged), with the GIL released; raises the
// library's error if the fit fails (TypeError for another kind of array; a
// NaN or infinite entry: ValueError "X: record ...").
FitOutcome RunFitOnArray(FitTask& task, const py::array& x, FitRequest request);

// Adds "feature_names": `names` to the model file's text `model_json` (a
// JSON object written with sorted keys, indented by 2, with a final
// newline, as every model file is), unless `names` is empty: a fit without
// names keeps its text byte for byte, so that it equals the CLI's. The
// library's readers ignore the key.
void AddFeatureNames(const std::vector<std::string>& names, std::string& model_json);

// The outcome as the Python tuple (model_json, [warning, ...]).
py::tuple ToPython(const FitOutcome& outcome);

// A model's fit binding, fit_<model>(x, shared, model) -> (model_json,
// warnings): the model's options from its own arguments (OptionsOf), the
// shared ones applied, its task (MakeTask) run on x by RunFitOnArray.
template <auto OptionsOf, auto MakeTask>
py::tuple FitArray(const py::array& x, const py::dict& shared_args, const py::dict& args) {
  SharedFitArgs shared = ParseSharedFitArgs(shared_args);
  auto options = OptionsOf(args);
  ApplySharedFitArgs(shared, options);
  auto task = MakeTask(std::move(options));
  FitOutcome outcome = RunFitOnArray(task, x, std::move(shared.request));
  AddFeatureNames(shared.feature_names, outcome.model_json);
  return ToPython(outcome);
}

// Defines `name` on `m` as FitArray<OptionsOf, MakeTask>; `what` opens its
// docstring ("Fits a Gaussian mixture").
template <auto OptionsOf, auto MakeTask>
void DefFit(py::module_& m, const char* name, const std::string& what) {
  m.def(name, &FitArray<OptionsOf, MakeTask>, py::arg("x"), py::arg("shared"), py::arg("model"),
        (what + " to x (C-contiguous float64, not copied) through the private-fit pipeline, "
                "without the GIL; returns (model_json, warnings).")
            .c_str());
}

// A fitted model as read from its model file (Fit: GmmFit, KmeansFit, FaFit).
template <typename Fit>
struct FittedModel {
  Fit fit;
};

// Binds FittedModel<Fit> as `name`, with the static from_json(text) that
// parses a model file's text by Parse (ValueError for a bad file): by
// default the model's ModelIo<Fit>::FromJson (dpem/models/model_io.h).
template <typename Fit, auto Parse = &ModelIo<Fit>::FromJson>
py::class_<FittedModel<Fit>> BindModel(py::module_& m, const char* name, const char* doc) {
  return py::class_<FittedModel<Fit>>(m, name, doc)
      .def_static(
          "from_json",
          [](const std::string& text) { return FittedModel<Fit>{ValueOrThrow(Parse(text))}; },
          py::arg("text"));
}

// Reads key `name` of `d`: its value cast to T, or `fallback` when the key
// is missing or None. TypeError naming the key for a value of another type.
template <typename T>
T Get(const py::dict& d, const char* name, T fallback) {
  if (!d.contains(name) || d[name].is_none()) return fallback;
  try {
    return d[name].cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(name) + ": unexpected type " +
                         std::string(py::str(py::type::of(d[name]))));
  }
}

// Runs `f` (returning a Status or StatusOr) without the GIL and returns its
// result; throw from it with the GIL held (ValueOrThrow, ThrowIfError).
template <typename F>
auto WithoutGil(F f) {
  py::gil_scoped_release release;
  return f();
}

// A method model.<name>(X) of a bound model: f(model, a copy of X) run
// without the GIL, its error raised.
template <typename Model, typename F>
auto RowsMethod(F f) {
  return [f](const Model& model, const py::array& x) {
    const DataMatrix data = CopyRows(x);
    return ValueOrThrow(WithoutGil([&] { return f(model, data); }));
  };
}

// The method model.<name>(X) = F(model.fit.parameters, X) of a bound
// FittedModel (RowsMethod).
template <typename Model, auto F>
auto OfParameters() {
  return RowsMethod<Model>(
      [](const Model& model, const DataMatrix& x) { return F(model.fit.parameters, x); });
}

// The generator of a model's sample(n, seed): seeded when `seed` is given,
// else keyed by the operating system's CSPRNG (its failure raised).
Generator GeneratorForSeed(std::optional<std::uint64_t> seed);

// The method model.sample(n, seed) of a bound model: f(model, n, generator)
// run without the GIL on the generator of GeneratorForSeed(seed), its error
// raised.
template <typename Model, typename F>
auto SampleMethod(F f) {
  return [f](const Model& model, Eigen::Index n, std::optional<std::uint64_t> seed) {
    Generator gen = GeneratorForSeed(seed);
    return ValueOrThrow(WithoutGil([&] { return f(model, n, gen); }));
  };
}

// The method model.sample(n, seed) = F(model.fit.parameters, n, generator)
// of a bound FittedModel (SampleMethod).
template <typename Model, auto F>
auto SampleOfParameters() {
  return SampleMethod<Model>([](const Model& model, Eigen::Index n, Generator& gen) {
    return F(model.fit.parameters, n, gen);
  });
}

// The number of components K (key `components`: n_components or
// n_clusters) and of iterations J (max_iter) of a mixture or k-means fit,
// 0 when missing or None (the library's default J), into `o`; the library
// checks them (as the CLI's ComponentsAndIterationsInto).
template <typename Options>
void ComponentsAndIterationsInto(const py::dict& args, const char* components, Options& o) {
  o.components = Get<int>(args, components, 0);
  o.iterations = Get<int>(args, "max_iter", 0);
}

// Raises ValueError "<name>: <message>" for a failed parse of a named value
// (covariance_type, init, ...), else returns the value.
template <typename T>
T NamedValueOrThrow(const char* name, StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(InvalidArgumentError(std::string(name) + ": " +
                                                    value.status().message()));
  return std::move(value).value();
}

// Key `name` of `d` (a string; `fallback` when missing or None) parsed by
// `parse` (ParseCovarianceType, ParseGmmInit, ...): ValueError "<name>:
// <message>" for a value it refuses.
template <typename Parse>
auto Parsed(const py::dict& d, const char* name, const char* fallback, Parse parse) {
  return NamedValueOrThrow(name, parse(Get<std::string>(d, name, fallback)));
}

// The same, but unset when the key is missing or None.
template <typename Parse>
auto OptionalParsed(const py::dict& d, const char* name, Parse parse)
    -> std::optional<std::remove_cvref_t<decltype(*parse(std::string_view()))>> {
  if (!d.contains(name) || d[name].is_none()) return std::nullopt;
  return Parsed(d, name, "", parse);
}

}  // namespace dpem::python

#endif  // DPEM_PYTHON_SRC_COMMON_H_
