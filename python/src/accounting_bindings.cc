// dpem.accounting: the library's accountants and calibration from Python,
// the same functions as `dpem account` and `dpem calibrate`
// (dpem/accounting/accountant.h, calibration.h).
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "common.h"
#include "dpem/accounting/accountant.h"
#include "dpem/accounting/calibration.h"
#include "dpem/accounting/ledger.h"

namespace dpem::python {
namespace {

std::vector<std::string> AccountantNames() {
  std::vector<std::string> names;
  for (AccountantKind kind : AllAccountants()) names.emplace_back(AccountantName(kind));
  return names;
}

// The epsilon `accountant` certifies at `delta` for `releases` releases of
// `mechanism` with noise multiplier `z` (noise scale / sensitivity).
double Epsilon(const std::string& mechanism, double z, long long releases, double delta,
               const std::string& accountant, const std::string& noise) {
  return ValueOrThrow([&]() -> StatusOr<double> {
    DPEM_ASSIGN_OR_RETURN(const MechanismKind kind, ParseMechanismKind(mechanism));
    DPEM_ASSIGN_OR_RETURN(const AccountantKind acc, ParseAccountantKind(accountant));
    DPEM_ASSIGN_OR_RETURN(const NoiseSampling sampling, ParseNoiseSampling(noise));
    if (releases < 1) return InvalidArgumentError("releases must be >= 1");
    PrivacyLedger ledger;
    DPEM_RETURN_IF_ERROR(ledger.RecordRepeated(Release{kind, 1.0, z, "release", sampling},
                                               static_cast<std::size_t>(releases)));
    return ComputeEpsilon(ledger, delta, acc);
  }());
}

// The noise of a J-iteration fit of `components` components released as
// `scenario` ("joint": one Gaussian release per iteration; "GGG", "LLG":
// park2017's per-parameter releases) that meets (epsilon, delta).
py::dict Calibrate(double epsilon, double delta, int iterations, int components,
                   const std::string& scenario, const std::string& accountant) {
  const CalibrationResult r = ValueOrThrow([&]() -> StatusOr<CalibrationResult> {
    CalibrationOptions o;
    o.epsilon = epsilon;
    o.delta = delta;
    o.iterations = iterations;
    DPEM_ASSIGN_OR_RETURN(o.accountant, ParseAccountantKind(accountant));
    if (scenario == "joint") {
      o.pattern = {"joint", {{MechanismKind::kGaussian, 1, 1.0, "joint statistics"}}};
    } else {
      DPEM_ASSIGN_OR_RETURN(o.pattern, ScenarioPattern(scenario, components));
    }
    return dpem::Calibrate(o);
  }());
  py::dict d;
  d["noise_multipliers"] = r.noise_multipliers;
  d["per_release_epsilon"] = r.per_release_epsilon;
  d["epsilon"] = r.epsilon;
  d["delta"] = r.delta;
  d["releases"] = r.ledger.size();
  return d;
}

}  // namespace

void RegisterAccounting(py::module_& m) {
  m.def("accountant_names", &AccountantNames, "The accountants' names, tightest last.");
  m.def("epsilon", &Epsilon, py::arg("mechanism"), py::arg("noise_multiplier"),
        py::arg("releases"), py::arg("delta"), py::arg("accountant"), py::arg("noise"),
        "The epsilon an accountant certifies for repeated releases of one mechanism.");
  m.def("calibrate", &Calibrate, py::arg("epsilon"), py::arg("delta"), py::arg("iterations"),
        py::arg("components"), py::arg("scenario"), py::arg("accountant"),
        "The per-release noise of a private EM fit that meets (epsilon, delta).");
}

}  // namespace dpem::python
