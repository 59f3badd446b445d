// Agreement of dpem's non-private EM with scikit-learn's GaussianMixture.
// The reference fits come from scripts/sklearn_gmm_reference.py (see its
// header for how to regenerate tests/data/sklearn_gmm_reference.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpem/models/gmm/gmm.h"
#include "testing/json_reference.h"

namespace dpem {
namespace {

using nlohmann::json;

constexpr double kRelativeTolerance = 1e-6;

using test_support::JsonToMatrix;

json LoadReference() { return test_support::LoadJsonReference(DPEM_SKLEARN_REFERENCE); }

GmmParameters ToParameters(const json& j, CovarianceType type) {
  GmmParameters p;
  p.type = type;
  const std::vector<double> w = j.at("weights").get<std::vector<double>>();
  p.weights = Eigen::Map<const Eigen::VectorXd>(w.data(), w.size());
  p.means = JsonToMatrix(j.at("means"));
  for (const json& c : j.at("covariances")) p.covariances.push_back(JsonToMatrix(c));
  return p;
}

// max |a - b| / max |b|, the agreement measure of the brief.
double RelativeDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// Plain EM: `iterations` E-steps and MLE M-steps with reg_covar's floor.
GmmParameters RunEm(GmmParameters params, const DataMatrix& x, int iterations,
                    double covariance_floor) {
  MStepOptions options;
  options.covariance_floor = covariance_floor;
  for (int j = 0; j < iterations; ++j) {
    StatusOr<GmmStatistics> stats = ComputeStatistics(params, x);
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    StatusOr<GmmParameters> next =
        MStep(*stats, params, static_cast<double>(stats->n), options);
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!stats.ok() || !next.ok()) return params;
    params = *std::move(next);
  }
  return params;
}

TEST(GmmSklearnTest, EmMatchesGaussianMixtureForEveryCovarianceType) {
  const json ref = LoadReference();
  ASSERT_FALSE(ref.is_discarded()) << "reference JSON does not parse";
  const DataMatrix x = JsonToMatrix(ref.at("data"));
  const double reg_covar = ref.at("reg_covar").get<double>();
  ASSERT_EQ(ref.at("cases").size(), 3u);
  for (const json& c : ref.at("cases")) {
    const std::string name = c.at("covariance_type").get<std::string>();
    StatusOr<CovarianceType> type = ParseCovarianceType(name);
    ASSERT_TRUE(type.ok()) << name;
    const GmmParameters init = ToParameters(c.at("initial"), *type);
    ASSERT_TRUE(ValidateParameters(init).ok());
    ASSERT_EQ(c.at("fits").size(), 2u);
    for (const json& f : c.at("fits")) {
      const int iterations = f.at("iterations").get<int>();
      const GmmParameters expected = ToParameters(f, *type);
      const GmmParameters fitted = RunEm(init, x, iterations, reg_covar);
      double worst_cov = 0;
      for (Eigen::Index k = 0; k < init.components(); ++k) {
        worst_cov = std::max(worst_cov, RelativeDiff(fitted.covariances[k],
                                                     expected.covariances[k]));
      }
      const double w = RelativeDiff(fitted.weights, expected.weights);
      const double m = RelativeDiff(fitted.means, expected.means);
      EXPECT_LT(w, kRelativeTolerance) << name << " J=" << iterations;
      EXPECT_LT(m, kRelativeTolerance) << name << " J=" << iterations;
      EXPECT_LT(worst_cov, kRelativeTolerance) << name << " J=" << iterations;
      std::cout << "sklearn " << ref.at("sklearn_version").get<std::string>()
                << " " << name << " J=" << iterations
                << ": relative diff weights " << w << ", means " << m
                << ", covariances " << worst_cov << "\n";
    }
  }
}

}  // namespace
}  // namespace dpem
