#include "dpem/models/gmm/gmm_model_io.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "internal/file_util.h"
#include "accounting/ledger_json.h"

namespace dpem {
namespace {

using nlohmann::json;

json MatrixToJson(const Eigen::MatrixXd& m) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    json row = json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
    rows.push_back(row);
  }
  return rows;
}

json ParametersToJson(const GmmParameters& p) {
  json covariances = json::array();
  for (const Eigen::MatrixXd& c : p.covariances) covariances.push_back(MatrixToJson(c));
  return {{"weights", std::vector<double>(p.weights.data(), p.weights.data() + p.weights.size())},
          {"means", MatrixToJson(p.means)},
          {"covariances", covariances}};
}

json GuaranteeToJson(const GmmGuarantee& g, const std::optional<std::uint64_t>& seed) {
  json out = {{"private", g.is_private},
              {"neighbour_relation", kNeighbourRelation},
              {"guarantee_void", g.guarantee_void},
              {"void_reasons", g.void_reasons},
              {"seeded", seed.has_value()}};
  if (seed) {
    out["seed"] = *seed;
    out["seed_warning"] = kSeededGeneratorWarning;
  }
  if (!g.is_private) return out;
  out["epsilon"] = g.epsilon;
  out["delta"] = g.delta;
  out["target_epsilon"] = g.target_epsilon;
  out["target_delta"] = g.target_delta;
  out["accountant"] = AccountantName(g.accountant);
  out["mechanisms"] = GmmMechanismsName(g.mechanisms);
  out["per_release_epsilon"] = g.per_release_epsilon;
  out["component_frame_radius"] = g.frame_radius;
  out["noise_multipliers"] = g.noise_multipliers;
  out["releases"] = internal::LedgerToJson(g.ledger);
  return out;
}

json DomainToJson(const DataDomain& d) {
  json out = {{"data_norm", d.data_norm},
              {"clipping", "records clipped to the L2 ball of radius data_norm around "
                           "center, then mapped to the unit ball"},
              {"from_data", d.from_data}};
  out["center"] = std::vector<double>(d.center.data(), d.center.data() + d.center.size());
  return out;
}

}  // namespace

std::string GmmModelToJson(const GmmFit& fit) {
  const GmmParameters& p = fit.parameters;
  json model = {{"format", kGmmModelFormat},
                {"version", kGmmModelVersion},
                {"model", "gaussian_mixture"},
                {"covariance_type", CovarianceTypeName(p.type)},
                {"estimator", EstimatorName(fit.estimator)},
                {"components", p.components()},
                {"dimension", p.dimension()},
                {"n", fit.n},
                {"iterations", fit.iterations},
                {"init", GmmInitName(fit.init)},
                {"parameters", ParametersToJson(p)},
                {"data_transform", DomainToJson(fit.domain)},
                {"privacy", GuaranteeToJson(fit.guarantee, fit.seed)}};
  return model.dump(2) + "\n";
}

Status WriteGmmModel(const std::string& path, const GmmFit& fit) {
  return internal::WriteFileAtomically(path, GmmModelToJson(fit));
}

StatusOr<GmmFit> ReadGmmModel(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  StatusOr<GmmFit> fit = GmmModelFromJson(text);
  if (!fit.ok()) return InvalidArgumentError(path + ": " + fit.status().message());
  return fit;
}

}  // namespace dpem
