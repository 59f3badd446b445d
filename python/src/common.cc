// The bindings' shared parts: see common.h.
#include "common.h"

#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

namespace dpem::python {
namespace {

// dpem.DpemError: a failure that is not about an argument's value (a budget
// that would be exceeded, a numerical failure, a missing budget entry).
class DpemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void RaisePython(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// The address and shape of a 2-D C-contiguous float64 array; TypeError for
// any other.
struct RowsView {
  const double* data = nullptr;
  Eigen::Index rows = 0;
  Eigen::Index cols = 0;
};

RowsView ViewOf(const py::array& x) {
  if (x.ndim() != 2) {
    throw py::type_error("X: expected a 2-D array, got " + std::to_string(x.ndim()) + "-D");
  }
  if (!x.dtype().is(py::dtype::of<double>()) || !(x.flags() & py::array::c_style) ||
      !(x.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) {
    throw py::type_error("X: expected an aligned C-contiguous float64 array");
  }
  return {static_cast<const double*>(x.data()), static_cast<Eigen::Index>(x.shape(0)),
          static_cast<Eigen::Index>(x.shape(1))};
}

Status WithPrefix(const std::string& prefix, const Status& s) {
  return s.ok() ? s : Status(s.code(), prefix + s.message());
}

}  // namespace

void ThrowStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      throw py::value_error(status.message());
    case StatusCode::kIoError:
      RaisePython(PyExc_OSError, status.message());
    default:
      throw DpemError(status.message());
  }
}

void RegisterErrors(py::module_& m) {
  py::register_exception<DpemError>(m, "DpemError", PyExc_RuntimeError);
}

void CheckRows(const py::array& x) {
  const RowsView v = ViewOf(x);
  // The fit's check of the values, and its message.
  ThrowIfError(WithPrefix("X: ", MatrixRowSource::Borrow(v.data, v.rows, v.cols).status()));
}

DataMatrix CopyRows(const py::array& x) {
  CheckRows(x);
  const RowsView v = ViewOf(x);
  return Eigen::Map<const DataMatrix>(v.data, v.rows, v.cols);
}

Generator GeneratorForSeed(std::optional<std::uint64_t> seed) {
  return seed ? Generator::FromSeed(*seed) : ValueOrThrow(Generator::FromOsEntropy());
}

SharedFitArgs ParseSharedFitArgs(const py::dict& args) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  SharedFitArgs s;
  s.epsilon = Get<double>(args, "epsilon", kNaN);
  s.delta = Get<double>(args, "delta", kNaN);
  s.domain.data_norm = Get<double>(args, "data_norm", kNaN);
  s.domain.from_data = Get<bool>(args, "data_norm_from_data", false);
  if (Get<bool>(args, "data_norm_auto", false)) {
    // A placeholder until the pipeline releases the domain (RunFit, step 6).
    s.domain.data_norm = 1.0;
  }
  if (args.contains("bounds_epsilon") && !args["bounds_epsilon"].is_none()) {
    s.request.bounds_epsilon = Get<double>(args, "bounds_epsilon", kNaN);
  }
  s.feature_names = Get<std::vector<std::string>>(args, "feature_names", {});
  const std::vector<double> center = Get<std::vector<double>>(args, "data_center", {});
  s.domain.center = Eigen::Map<const Eigen::VectorXd>(center.data(),
                                                      static_cast<Eigen::Index>(center.size()));
  s.accountant = OptionalParsed(args, "accountant", ParseAccountantKind);
  s.engine.threads = Get<int>(args, "threads", 0);
  if (args.contains("seed") && !args["seed"].is_none()) {
    s.request.seed = Get<std::uint64_t>(args, "seed", 0);
  }
  s.request.budget_file = Get<std::string>(args, "budget_file", "");
  s.request.dataset = Get<std::string>(args, "dataset", "");
  s.request.command = Get<std::string>(args, "command", "dpem (Python)");
  return s;
}

FitOutcome RunFitOnArray(FitTask& task, const py::array& x, FitRequest request) {
  const RowsView v = ViewOf(x);
  FitOutcome outcome;
  request.input = "X";
  request.output.reset();
  // Made at step 4, after the budget is charged: the check of the values
  // is the first read of the data, as for a file.
  request.open_source = [v]() -> StatusOr<std::unique_ptr<RowSource>> {
    StatusOr<MatrixRowSource> source = MatrixRowSource::Borrow(v.data, v.rows, v.cols);
    if (!source.ok()) return WithPrefix("X: ", source.status());
    return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(*source)));
  };
  request.warn = [&outcome](const std::string& line) { outcome.warnings.push_back(line); };
  Status status;
  {
    // The fit reads the array's buffer, which `x` keeps alive; no Python
    // object is touched until the GIL is taken back.
    py::gil_scoped_release release;
    status = RunFit(task, request);
    if (status.ok()) outcome.model_json = task.ModelJson();
  }
  ThrowIfError(status);
  return outcome;
}

void AddFeatureNames(const std::vector<std::string>& names, std::string& model_json) {
  if (names.empty()) return;
  // The model files' keys are sorted (nlohmann::json's std::map), so the
  // parsed and re-indented text is the original with the one key added.
  nlohmann::json model = nlohmann::json::parse(model_json);
  model["feature_names"] = names;
  model_json = model.dump(2) + "\n";
}

py::tuple ToPython(const FitOutcome& outcome) {
  return py::make_tuple(outcome.model_json, outcome.warnings);
}

}  // namespace dpem::python
