// DP gradient EM as a pipeline task: see
// dpem/models/gradient_em/gradient_em_fit_task.h.
#include "dpem/models/gradient_em/gradient_em_fit_task.h"

#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/ledger_json.h"
#include "dpem/data/generators.h"

namespace dpem {
namespace {

using nlohmann::json;

std::vector<double> ToVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

// The guarantee block: the privacy fields, then the method's calibration.
json GuaranteeJson(const GradientEmGuarantee& g, const GradientEmOptions& o) {
  json j = {{"private", g.is_private}, {"neighbour_relation", kNeighbourRelation}};
  if (!g.is_private) return j;
  j.update({{"epsilon", g.epsilon},
            {"delta", g.delta},
            {"target_epsilon", g.target_epsilon},
            {"target_delta", g.target_delta},
            {"accountant", AccountantName(g.accountant)},
            {"calibration", NoiseCalibrationRuleName(g.calibration)},
            {"noise_multiplier", g.noise_multiplier},
            {"sensitivity_l2", g.sensitivity},
            {"noise_stddev", g.noise_stddev},
            {"releases", g.ledger.size()},
            {"guarantee_void", g.guarantee_void},
            {"void_reasons", g.void_reasons}});
  if (o.method == GradientEmMethod::kClipped) j["clip"] = o.clip;
  if (o.method != GradientEmMethod::kClipped) {
    j.update({{"tau", o.tau}, {"zeta", o.zeta}, {"robust_scale", g.robust.scale},
              {"robust_beta", g.robust.beta}});
  }
  j["ledger"] = internal::LedgerToJson(g.ledger);
  return j;
}

json TrajectoryJson(const GradientEmFit& fit) {
  json t = json::array();
  for (const Eigen::VectorXd& b : fit.trajectory) t.push_back(ToVector(b));
  return t;
}

}  // namespace

Status GradientEmFitTask::Validate() const { return options_.Validate(); }

StatusOr<double> GradientEmFitTask::ChargedEpsilon() const {
  if (!options_.IsPrivate()) return std::numeric_limits<double>::infinity();
  return GradientEmChargedEpsilon(options_);
}

Status GradientEmFitTask::Fit(const RowSource& x, Generator& gen) {
  DataMatrix scratch;
  DataMatrix m;
  if (x.rows() > 0) m = x.Block(0, x.rows(), scratch);
  DPEM_ASSIGN_OR_RETURN(const GradientEmData data, FromDataMatrix(model_, m));
  n_ = data.n();
  d_ = data.d();
  DPEM_ASSIGN_OR_RETURN(fit_, FitGradientEm(data, options_, gen));
  return OkStatus();
}

std::string GradientEmFitTask::ModelJson() const {
  json j = {{"model", GradientEmModelName(model_)},
            {"method", GradientEmMethodName(options_.method)},
            {"n", n_},
            {"d", d_},
            {"iterations", options_.iterations},
            {"step", options_.step},
            {"sigma", options_.sigma},
            {"beta", ToVector(fit_.beta)},
            {"guarantee", GuaranteeJson(fit_.guarantee, options_)}};
  if (trajectory_) j["trajectory"] = TrajectoryJson(fit_);
  if (fit_.seed) {
    j["seed"] = *fit_.seed;
    j["warning"] = kSeededGeneratorWarning;
  }
  return j.dump(2) + "\n";
}

}  // namespace dpem
