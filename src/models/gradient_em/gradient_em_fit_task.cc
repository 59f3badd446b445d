// DP gradient EM as a pipeline task: see
// dpem/models/gradient_em/gradient_em_fit_task.h.
#include "dpem/models/gradient_em/gradient_em_fit_task.h"

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/ledger_json.h"
#include "dpem/data/generators.h"
#include "engine/rank_combine.h"
#include "models/gradient_em/gradient_em_internal.h"

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

// The rows this process holds, as the model's data: the whole table, or on
// a rank of a distributed fit its shard (each rank needs at least one row),
// checked on every rank before any rank goes on.
Status GradientEmFitTask::Fit(const RowSource& x, Generator& gen) {
  const RowRange local = x.LocalRows();
  DataMatrix scratch;
  DataMatrix m;
  if (local.size() > 0) m = x.Block(local.begin, local.size(), scratch);
  StatusOr<GradientEmData> data = FromDataMatrix(model_, m);
  DPEM_RETURN_IF_ERROR(internal::AgreeOnStatus(x.collective(), data.status()));
  n_ = x.rows();
  d_ = data->d();
  if (x.collective() == nullptr) {
    DPEM_ASSIGN_OR_RETURN(fit_, FitGradientEm(*data, options_, gen));
    return OkStatus();
  }
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource rows, MatrixRowSource::Borrow(data->x));
  DPEM_ASSIGN_OR_RETURN(const ShardRowSource shard,
                        ShardRowSource::Create(std::make_unique<MatrixRowSource>(rows),
                                               *x.collective()));
  DPEM_ASSIGN_OR_RETURN(fit_, internal::FitGradientEmOnRows(*data, shard, options_, gen));
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
