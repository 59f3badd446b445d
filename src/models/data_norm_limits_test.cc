// The public bound R of a model fit (ValidateModelDomain, data/domain.h):
// outside [kMinModelDataNorm, kMaxModelDataNorm] = [1e-100, 1e100] every
// model refuses it before reading a record (a factor analysis fit with
// R = 1e200 used to write noise variances R^2 psi = inf as null, a file
// nothing could read; k-means' NICV overflowed), and at both ends every
// model's fit is usable: its file reads back and scores finitely.
//
// The expectations at the ends come from scale equivariance, not from the
// code: scaling the records and R by s = 2^k maps them to the same unit-ball
// records bit for bit ((s x) / (s R) = x / R, both products exact), so a
// seeded fit makes the same unit-ball model; its parameters in data units
// are then those at s = 1 times s (means, centres, loadings) or s^2
// (covariances, variances), exactly, a density is divided by s^d, so the
// mean log-likelihood drops by d ln s, and the NICV is multiplied by s^2.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dpem/data/domain.h"
#include "dpem/models/factor_analysis/fa_model_io.h"
#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/models/gmm/gmm_model_io.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/models/kmeans/kmeans_model_io.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

// 2^330 = 2.2e99 and 2^-330 = 4.6e-100: powers of two just inside the
// bounds.
constexpr int kExponent = 330;
constexpr double kR = 2.0;  // R of the unscaled data, whose norms are < 2.

// Two clusters in 3-D, every record of norm < 2.
DataMatrix Records() {
  Generator gen = Generator::FromSeed(3);
  DataMatrix x(400, 3);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      x(i, j) = (i % 2 ? 0.4 : -0.4) + 0.15 * SampleStandardNormal(gen);
    }
  }
  return x;
}

GmmFitOptions GmmOptions(double r) {
  return test_support::MakeGmmOptions(/*components=*/2, /*iterations=*/3, /*epsilon=*/2.0,
                                      /*delta=*/1e-5, r);
}

KmeansFitOptions KmeansOptions(double r) {
  KmeansFitOptions o = test_support::MakeKmeansOptions(KmeansMethod::kCdpGauss, 2, 3, 2.0, 1e-5);
  o.domain.data_norm = r;
  return o;
}

FaFitOptions FaOptions(double r) {
  FaFitOptions o;
  o.em.factors = 1;
  o.em.iterations = 50;
  o.epsilon = 2.0;
  o.delta = 1e-5;
  o.domain.data_norm = r;
  return o;
}

TEST(DataNormLimitsTest, EveryModelRefusesAnUnrepresentableRBeforeTheData) {
  const DataMatrix x = Records();
  for (double r : {1e200, 1.5e100, 1e-101, 1e-200}) {
    SCOPED_TRACE(::testing::Message() << "R = " << r);
    const Status gmm = GmmOptions(r).Validate();
    EXPECT_EQ(gmm.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(gmm.message().find("data_norm R = "), std::string::npos) << gmm.message();
    EXPECT_EQ(KmeansOptions(r).Validate().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(FaOptions(r).Validate().code(), StatusCode::kInvalidArgument);
    // The fits refuse it too, and draw no noise (the generator is untouched).
    Generator gen = Generator::FromSeed(1);
    EXPECT_EQ(FitGmm(x * r, GmmOptions(r), gen).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(FitKmeans(x * r, KmeansOptions(r), gen).status().code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(FitFactorAnalysis(x * r, FaOptions(r), gen).status().code(),
              StatusCode::kInvalidArgument);
    Generator fresh = Generator::FromSeed(1);
    EXPECT_EQ(gen(), fresh());
  }
}

// For s = 2^k at both ends (k = +-kExponent), fits the records scaled by s
// with R = 2 s, and the records as they are with R = 2, from the same seed,
// then calls check(k, s, unscaled, read_back), read_back being the scaled
// fit read back from its model file (Io: the model's ModelIo).
template <typename Io, typename Fit, typename Options, typename Check>
void AtBothEnds(StatusOr<Fit> (*fit)(const DataMatrix&, const Options&, Generator&),
                Options (*options)(double), const Check& check) {
  const DataMatrix x = Records();
  for (int k : {kExponent, -kExponent}) {
    SCOPED_TRACE("s = 2^" + std::to_string(k));
    const double s = std::ldexp(1.0, k);
    Generator gen1 = Generator::FromSeed(7);
    Generator gen2 = Generator::FromSeed(7);
    StatusOr<Fit> unscaled = fit(x, options(kR), gen1);
    StatusOr<Fit> scaled = fit(x * s, options(kR * s), gen2);
    ASSERT_TRUE(unscaled.ok()) << unscaled.status().ToString();
    ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
    StatusOr<Fit> back = Io::FromJson(Io::ToJson(*scaled));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    check(k, s, *unscaled, *back);
  }
}

// A density of 3-D records scaled by 2^k is divided by 2^(3k): the mean
// log-likelihood drops by 3 k ln 2. And draws from the model are finite.
void ExpectScaledDensity(const StatusOr<double>& scaled, const StatusOr<double>& unscaled,
                         int k, const StatusOr<DataMatrix>& draws) {
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  ASSERT_TRUE(unscaled.ok()) << unscaled.status().ToString();
  EXPECT_NEAR(*scaled, *unscaled - 3.0 * k * std::log(2.0), 1e-9 * std::fabs(*scaled));
  ASSERT_TRUE(draws.ok()) << draws.status().ToString();
  EXPECT_TRUE(draws->allFinite());
}

TEST(DataNormLimitsTest, AGmmAtEitherEndIsUsable) {
  AtBothEnds<GmmModelIo>(&FitGmm, &GmmOptions,
                         [](int k, double s, const GmmFit& one, const GmmFit& back) {
    const GmmParameters& p = back.parameters;
    EXPECT_EQ(p.weights, one.parameters.weights);
    EXPECT_EQ(p.means, one.parameters.means * s);
    for (std::size_t c = 0; c < p.covariances.size(); ++c) {
      EXPECT_EQ(p.covariances[c], one.parameters.covariances[c] * (s * s));
    }
    Generator gen = Generator::FromSeed(2);
    ExpectScaledDensity(MeanLogLikelihood(p, Records() * s),
                        MeanLogLikelihood(one.parameters, Records()), k, Sample(p, 50, gen));
  });
}

TEST(DataNormLimitsTest, KmeansAtEitherEndIsUsable) {
  AtBothEnds<KmeansModelIo>(&FitKmeans, &KmeansOptions,
                            [](int, double s, const KmeansFit& one, const KmeansFit& back) {
    EXPECT_EQ(back.centres, one.centres * s);
    const StatusOr<double> nicv = Nicv(back.centres, Records() * s);
    const StatusOr<double> nicv_one = Nicv(one.centres, Records());
    ASSERT_TRUE(nicv.ok() && nicv_one.ok());
    EXPECT_GT(*nicv, 0.0);
    EXPECT_NEAR(*nicv / (s * s), *nicv_one, 1e-12 * *nicv_one);
  });
}

TEST(DataNormLimitsTest, FactorAnalysisAtEitherEndIsUsable) {
  AtBothEnds<FaModelIo>(&FitFactorAnalysis, &FaOptions,
                        [](int k, double s, const FaFit& one, const FaFit& back) {
    const FaParameters& p = back.parameters;
    EXPECT_EQ(p.loadings, one.parameters.loadings * s);
    EXPECT_EQ(p.noise_variances, one.parameters.noise_variances * (s * s));
    Generator gen = Generator::FromSeed(2);
    ExpectScaledDensity(FaMeanLogLikelihood(p, Records() * s),
                        FaMeanLogLikelihood(one.parameters, Records()), k, FaSample(p, 50, gen));
  });
}

}  // namespace
}  // namespace dpem
