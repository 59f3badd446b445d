// Agreement of dpem's non-private factor analysis with scikit-learn's
// FactorAnalysis. The references come from scripts/sklearn_fa_reference.py
// (see its header for how to regenerate tests/data/sklearn_fa_reference.json).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "dpem/models/factor_analysis/factor_analysis.h"
#include "testing/json_reference.h"

namespace dpem {
namespace {

using nlohmann::json;

using test_support::JsonToMatrix;

json LoadReference() { return test_support::LoadJsonReference(DPEM_SKLEARN_FA_REFERENCE); }

TEST(FaSklearnTest, NonPrivateFitReachesSklearnsLogLikelihood) {
  const json ref = LoadReference();
  ASSERT_TRUE(ref.is_object());
  ASSERT_EQ(ref.at("cases").size(), 3u);
  for (const json& c : ref.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const DataMatrix x = JsonToMatrix(c.at("x"));
    FaFitOptions o;
    o.em.factors = c.at("factors").get<int>();
    o.em.iterations = 5000;
    o.em.tolerance = 0.0;  // All J, as the reference ran to scikit-learn's tol 1e-12.
    o.em.variance_floor = 1e-12;
    o.epsilon = std::numeric_limits<double>::infinity();
    Generator gen = Generator::FromSeed(1);
    StatusOr<FaFit> fit = FitFactorAnalysis(x, o, gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    StatusOr<double> ll = FaMeanLogLikelihood(fit->parameters, x);
    ASSERT_TRUE(ll.ok());
    const double expected = c.at("mean_log_likelihood").get<double>();
    EXPECT_LT(std::abs(*ll - expected) / std::abs(expected), 1e-6)
        << "dpem " << *ll << " sklearn " << expected;
    // The fitted covariances agree too (the likelihood's maximiser).
    const Eigen::MatrixXd cov = fit->parameters.loadings * fit->parameters.loadings.transpose() +
                                Eigen::MatrixXd(fit->parameters.noise_variances.asDiagonal());
    const Eigen::MatrixXd expected_cov = JsonToMatrix(c.at("covariance"));
    EXPECT_LT((cov - expected_cov).cwiseAbs().maxCoeff() / expected_cov.cwiseAbs().maxCoeff(),
              1e-2);
  }
}

}  // namespace
}  // namespace dpem
