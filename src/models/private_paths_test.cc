// Hostile-but-valid records through every private path: once a private fit
// has read the data, nothing may fail, branch or stop early on it (re-project,
// never abort; docs/reliability.md, "Private paths never abort"). Each fit
// below must succeed with a complete ledger (exactly the budgeted releases)
// and finite parameters, on records far outside the domain (1e300 and the
// largest double), exactly on its boundary, all identical, duplicated, at the
// centre, one far-away record among normal ones, clusters of variance 1e-18,
// d = 1 and d = 20, and N = K. Also: unit rows whose computed norm exceeds 1
// (factor analysis), the covariance floor at its minimum, public options at
// their extremes (a tiny frame radius, a huge step), a mixture's iterate
// averaging (J >= 4 where the noise is large) and its adaptive schedule (J
// unset where the noise is large: both branches, and the model file).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "dpem/mechanisms/robust_mean.h"
#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/models/fit_defaults.h"
#include "dpem/models/gmm/gmm_model_io.h"
#include "dpem/models/gmm/private_gmm.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/models/kmeans/kmeans.h"
#include "dpem/random/samplers.h"
#include "testing/fit_options.h"

namespace dpem {
namespace {

constexpr double kBig = 1e300;
constexpr double kMax = std::numeric_limits<double>::max();

struct HostileCase {
  std::string name;
  DataMatrix x;
  DataDomain domain;  // R = 1 around the origin unless the case says otherwise.
};

DataMatrix Gaussian(Eigen::Index n, Eigen::Index d, double sd, Generator& gen) {
  DataMatrix x(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) x(i, j) = sd * SampleStandardNormal(gen);
  }
  return x;
}

// A direction of norm `norm`, drawn from the generator.
Eigen::RowVectorXd OnSphere(Eigen::Index d, double norm, Generator& gen) {
  const DataMatrix v = Gaussian(1, d, 1.0, gen);
  return v.row(0) * (norm / v.row(0).norm());
}

// The hostile data sets in d dimensions with n records (n >= 8).
std::vector<HostileCase> HostileCases(Eigen::Index d, Eigen::Index n) {
  Generator gen = Generator::FromSeed(1000 + static_cast<std::uint64_t>(d));
  DataDomain unit;
  unit.data_norm = 1.0;
  std::vector<HostileCase> cases;
  DataMatrix far = Gaussian(n, d, 0.2, gen);
  for (Eigen::Index i = 0; i < n; i += 3) far.row(i) = OnSphere(d, 1.0, gen) * kBig;
  far.row(1).setConstant(kMax);
  far(2, 0) = -kMax;
  cases.push_back({"far outside (1e300, max double)", far, unit});
  DataMatrix boundary(n, d);
  for (Eigen::Index i = 0; i < n; ++i) boundary.row(i) = OnSphere(d, 3.0, gen);
  DataDomain three = unit;
  three.data_norm = 3.0;
  cases.push_back({"on the boundary", boundary, three});
  const Eigen::RowVectorXd one = OnSphere(d, 0.5, gen);
  cases.push_back({"all identical", DataMatrix(one.replicate(n, 1)), unit});
  DataMatrix dup = Gaussian(n, d, 0.3, gen);
  dup.topRows(n - 2).rowwise() = one;
  cases.push_back({"duplicates of one record", dup, unit});
  DataDomain centred = unit;
  centred.data_norm = 2.0;
  centred.center = Eigen::VectorXd::LinSpaced(d, -0.5, 0.5);
  cases.push_back({"at the centre", DataMatrix(centred.center.transpose().replicate(n, 1)),
                   centred});
  DataMatrix lone = Gaussian(n, d, 0.2, gen);
  lone.row(n / 2) = OnSphere(d, 1.0, gen) * kBig;
  cases.push_back({"one far-away record", lone, unit});
  DataMatrix tiny = Gaussian(n, d, 1e-9, gen);
  for (Eigen::Index i = 0; i < n; ++i) tiny(i, 0) += i % 2 == 0 ? 0.5 : -0.5;
  cases.push_back({"clusters of variance 1e-18", tiny, unit});
  return cases;
}

// N = K: three records, one far away, one on the boundary, one at the centre.
HostileCase ThreeRecords(Eigen::Index d) {
  DataDomain unit;
  unit.data_norm = 1.0;
  DataMatrix x = DataMatrix::Zero(3, d);
  x(0, 0) = kBig;
  x(1, d - 1) = -1.0;
  return {"N = K = 3", x, unit};
}

std::vector<HostileCase> AllCases() {
  std::vector<HostileCase> all;
  for (Eigen::Index d : {1, 20}) {
    for (HostileCase& c : HostileCases(d, 40)) {
      c.name += ", d = " + std::to_string(d);
      all.push_back(std::move(c));
    }
    all.push_back(ThreeRecords(d));
  }
  return all;
}

// Every release of a complete ledger has a positive, finite noise scale.
void ExpectLedger(const PrivacyLedger& ledger, size_t releases, const std::string& what) {
  ASSERT_EQ(ledger.size(), releases) << what;
  for (const Release& r : ledger.releases()) {
    EXPECT_TRUE(r.noise_scale > 0.0 && std::isfinite(r.noise_scale)) << what;
  }
}

EngineOptions OneThread() { return EngineOptions{1, 0}; }

// ---------------------------------------------------------------- GMM

struct GmmVariant {
  GmmMechanisms mechanisms;
  bool frames;
  NoiseSampling sampling;
};

// `averaged`: the number of last iterates every fit must average
// (GmmGuarantee::averaged_iterations); 0 leaves it unchecked.
void FitGmmEverywhere(const HostileCase& c, GmmFitOptions base, const std::string& extra,
                      int averaged = 0) {
  const GmmVariant variants[] = {
      {GmmMechanisms::kJoint, true, NoiseSampling::kDiscrete},
      {GmmMechanisms::kJoint, false, NoiseSampling::kContinuous},
      {GmmMechanisms::kGgg, false, NoiseSampling::kDiscrete},
      {GmmMechanisms::kLlg, false, NoiseSampling::kContinuous}};
  for (const GmmVariant& v : variants) {
    for (CovarianceType t : {CovarianceType::kFull, CovarianceType::kDiagonal,
                             CovarianceType::kSpherical}) {
      for (Estimator e : {Estimator::kMle, Estimator::kMap}) {
        GmmFitOptions o = base;
        o.domain = c.domain;
        o.mechanisms = v.mechanisms;
        o.component_frames = v.frames;
        o.noise_sampling = v.sampling;
        o.covariance = t;
        o.estimator = e;
        o.engine = OneThread();
        const std::string what = c.name + extra + " / " +
                                 std::string(GmmMechanismsName(v.mechanisms)) +
                                 (v.frames ? " frames" : "") + " / " +
                                 std::string(CovarianceTypeName(t)) + " / " +
                                 std::string(EstimatorName(e));
        Generator gen = Generator::FromSeed(7);
        const StatusOr<GmmFit> fit = FitGmm(c.x, o, gen);
        ASSERT_TRUE(fit.ok()) << what << ": " << fit.status().ToString();
        const size_t per_iteration =
            v.mechanisms == GmmMechanisms::kJoint ? 1 : 2 * o.components + 1;
        // The default private start's two releases come first.
        ExpectLedger(fit->guarantee.ledger, 2 + per_iteration * o.iterations, what);
        EXPECT_LE(fit->guarantee.epsilon, o.epsilon) << what;
        EXPECT_TRUE(ValidateParameters(fit->parameters).ok()) << what;
        if (averaged > 0) EXPECT_EQ(fit->guarantee.averaged_iterations, averaged) << what;
      }
    }
  }
}

GmmFitOptions GmmBase(int k) {
  GmmFitOptions o;
  o.components = k;
  o.iterations = 3;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  return o;
}

TEST(PrivatePathsTest, GmmEveryMechanismCovarianceAndEstimator) {
  for (const HostileCase& c : AllCases()) FitGmmEverywhere(c, GmmBase(3), "");
}

// The smallest covariance floor Validate accepts keeps every log-density of a
// unit-ball record finite; anything below it is refused before the data is
// read. At the minimum, hostile records must fit on every path.
TEST(PrivatePathsTest, GmmCovarianceFloorAtItsMinimum) {
  GmmFitOptions o = GmmBase(2);
  o.domain.data_norm = 1.0;
  o.covariance_floor = kMinCovarianceFloor;
  EXPECT_TRUE(o.Validate().ok());
  for (double below : {kMinCovarianceFloor / 2, 1e-300, 1e-320, 4.9e-324}) {
    GmmFitOptions bad = o;
    bad.covariance_floor = below;
    EXPECT_EQ(bad.Validate().code(), StatusCode::kInvalidArgument) << below;
  }
  for (const HostileCase& c : AllCases()) FitGmmEverywhere(c, o, " (floor at the minimum)");
  // Little noise, many iterations, two point masses and far records: in
  // component frames each iteration can shrink a covariance by the frame's
  // noise floor, down to the covariance floor itself (with a floor of 1e-300
  // this ended in "covariance is not positive definite").
  HostileCase masses{"two point masses", DataMatrix::Zero(2000, 2), {}};
  masses.domain.data_norm = 1.0;
  for (Eigen::Index i = 0; i < 2000; ++i) masses.x(i, 0) = i % 2 == 0 ? 0.5 : -0.5;
  masses.x.topRows(3) << kBig, 0.0, 0.0, -kBig, kMax, kMax;
  GmmFitOptions chain = o;
  chain.epsilon = 1e6;
  chain.iterations = 60;
  FitGmmEverywhere(masses, chain, " (60 iterations, epsilon 1e6)");
}

// Iterate averaging (GmmFitOptions::iterate_averaging): J = 6 from the
// private start with few records (the noise is large for the data) averages
// the last 3 iterates on every path; on hostile records the average must
// still be a valid mixture, the ledger complete, and the count the rule's
// (no fallback to the last iterate). At epsilon 1e6 (small noise) it
// averages nothing.
TEST(PrivatePathsTest, GmmIterateAveragingOnHostileRecords) {
  GmmFitOptions o = GmmBase(3);
  o.iterations = 6;
  for (const HostileCase& c : AllCases()) FitGmmEverywhere(c, o, " (J = 6, averaged)", 3);
  HostileCase masses{"two point masses", DataMatrix::Zero(2000, 2), {}};
  masses.domain.data_norm = 1.0;
  for (Eigen::Index i = 0; i < 2000; ++i) masses.x(i, 0) = i % 2 == 0 ? 0.5 : -0.5;
  masses.x.topRows(3) << kBig, 0.0, 0.0, -kBig, kMax, kMax;
  GmmFitOptions floor = o;
  floor.covariance_floor = kMinCovarianceFloor;
  floor.iterations = 20;
  FitGmmEverywhere(masses, floor, " (J = 20, floor at the minimum, averaged)", 10);
  floor.epsilon = 1e6;
  FitGmmEverywhere(masses, floor, " (J = 20, epsilon 1e6: not averaged)", 1);
}

// The adaptive schedule (GmmFitOptions::adaptive_iterations): J unset from
// the private start where the noise is large plans kAdaptiveIterations
// releases, and after the third the released means' movement chooses
// between re-releasing the third iteration's statistics (pooled into one
// M-step) and three more EM iterations. The tests above all set J, so none
// of them runs it. Fits `c` with `o` on it and checks what every fit above
// checks, and that the movement is finite and agrees with the branch taken
// (whose count it adds to `settled` or `moving`) and the model file reads
// back (a NaN movement would be written as null and refused).
void FitAdaptive(const HostileCase& c, GmmFitOptions o, const std::string& what, int& settled,
                 int& moving) {
  o.iterations = 0;  // The default J: the adaptive schedule where the noise is large.
  o.domain = c.domain;
  o.engine = OneThread();
  Generator gen = Generator::FromSeed(7);
  const StatusOr<GmmFit> fit = FitGmm(c.x, o, gen);
  ASSERT_TRUE(fit.ok()) << what << ": " << fit.status().ToString();
  const GmmGuarantee& g = fit->guarantee;
  ASSERT_TRUE(g.adaptive_iterations) << what;
  EXPECT_EQ(fit->iterations, kAdaptiveIterations) << what;
  ExpectLedger(g.ledger, 2 + static_cast<size_t>(kAdaptiveIterations), what);
  EXPECT_LE(g.epsilon, o.epsilon) << what;
  EXPECT_TRUE(ValidateParameters(fit->parameters).ok()) << what;
  EXPECT_TRUE(std::isfinite(g.movement) && g.movement >= 0.0) << what << ": " << g.movement;
  EXPECT_EQ(g.settled, g.movement < kSettledMovement) << what << ": " << g.movement;
  ++(g.settled ? settled : moving);
  const StatusOr<GmmFit> back = GmmModelIo::FromJson(GmmModelIo::ToJson(*fit));
  ASSERT_TRUE(back.ok()) << what << ": " << back.status().ToString();
  EXPECT_EQ(back->guarantee.settled, g.settled) << what;
}

// The adaptive schedule on every hostile data set, with both noise samplings
// of the joint release in component frames (the only release it applies
// to), every covariance type and estimator, under the adaptive frame rule
// and a public frame radius so small that the movement's noise scale
// underflows. Both branches must run: the few records settle, the tiny
// radius moves.
TEST(PrivatePathsTest, GmmAdaptiveScheduleOnHostileRecords) {
  int settled = 0, moving = 0;
  for (const HostileCase& c : AllCases()) {
    for (double radius : {0.0, 1e-150}) {
      for (NoiseSampling sampling : {NoiseSampling::kDiscrete, NoiseSampling::kContinuous}) {
        for (CovarianceType t : {CovarianceType::kFull, CovarianceType::kDiagonal,
                                 CovarianceType::kSpherical}) {
          for (Estimator e : {Estimator::kMle, Estimator::kMap}) {
            GmmFitOptions o = GmmBase(3);
            o.frame_radius = radius;
            o.noise_sampling = sampling;
            o.covariance = t;
            o.estimator = e;
            char frames[32];
            std::snprintf(frames, sizeof frames, "radius %g", radius);
            const std::string what =
                c.name + " / " + frames + " / " +
                (sampling == NoiseSampling::kDiscrete ? "discrete" : "continuous") + " / " +
                std::string(CovarianceTypeName(t)) + " / " + std::string(EstimatorName(e));
            FitAdaptive(c, o, what, settled, moving);
          }
        }
      }
    }
  }
  EXPECT_GT(settled, 0);
  EXPECT_GT(moving, 0);
}

// Public options at their extremes: a frame radius so small that the frames'
// inverse scales overflow, noise far above and far below the data's scale.
TEST(PrivatePathsTest, GmmExtremePublicOptions) {
  const HostileCase c = HostileCases(3, 40)[0];
  GmmFitOptions tiny_frames = GmmBase(3);
  tiny_frames.frame_radius = 1e-150;
  FitGmmEverywhere(c, tiny_frames, " (frame radius 1e-150)");
  for (double epsilon : {1e-2, 1e8}) {
    GmmFitOptions o = GmmBase(3);
    o.epsilon = epsilon;
    FitGmmEverywhere(c, o, " (epsilon " + std::to_string(epsilon) + ")");
  }
}

// The E-step itself: even under a variance far below the fit's minimum
// (subnormal), where every log-density of a far record is -infinity or NaN,
// each record's responsibilities stay a point of the simplex, so the
// statistics stay finite and count every record once.
TEST(PrivatePathsTest, EStepStatisticsStayFiniteUnderSubnormalVariances) {
  for (CovarianceType t : {CovarianceType::kFull, CovarianceType::kDiagonal,
                           CovarianceType::kSpherical}) {
    GmmParameters p;
    p.type = t;
    p.weights = Eigen::VectorXd::Constant(2, 0.5);
    p.means = Eigen::MatrixXd::Zero(2, 2);
    p.means(1, 0) = 0.5;
    p.covariances.assign(2, Eigen::MatrixXd::Identity(2, 2) * 1e-320);
    DataMatrix x(3, 2);
    x << 1.0, 0.0, -0.6, 0.8, 0.0, 0.0;
    const StatusOr<GmmStatistics> s = ComputeStatistics(p, x);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(s->counts.allFinite() && s->sums.allFinite()) << CovarianceTypeName(t);
    EXPECT_NEAR(s->counts.sum(), 3.0, 1e-12) << CovarianceTypeName(t);
  }
}

// ---------------------------------------------------------------- FA

FaFitOptions FaOptions(const HostileCase& c) {
  FaFitOptions o;
  o.em.factors = c.x.cols() > 1 ? 2 : 1;
  o.em.iterations = 5;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  o.domain = c.domain;
  o.engine = OneThread();
  return o;
}

TEST(PrivatePathsTest, FactorAnalysis) {
  for (const HostileCase& c : AllCases()) {
    Generator gen = Generator::FromSeed(3);
    const StatusOr<FaFit> fit = FitFactorAnalysis(c.x, FaOptions(c), gen);
    ASSERT_TRUE(fit.ok()) << c.name << ": " << fit.status().ToString();
    ExpectLedger(fit->guarantee.ledger, 1, c.name);
    EXPECT_TRUE(ValidateFaParameters(fit->parameters).ok()) << c.name;
  }
}

// Unit rows whose computed norm exceeds 1 by rounding: random directions
// divided by their own norm, kept where u.squaredNorm() > 1 (about a third of
// them). The release re-projects them; it used to refuse the data set.
TEST(PrivatePathsTest, FactorAnalysisRowsAboveTheUnitNorm) {
  for (Eigen::Index d : {3, 20}) {
    Generator gen = Generator::FromSeed(11);
    DataMatrix unit(64, d);
    Eigen::Index found = 0;
    while (found < unit.rows()) {
      const Eigen::RowVectorXd u = OnSphere(d, 1.0, gen);
      if (u.squaredNorm() > 1.0) unit.row(found++) = u;
    }
    ASSERT_GT(Eigen::Map<const DataMatrix>(unit.data(), 64, d).rowwise().squaredNorm()
                  .maxCoeff(), 1.0);
    PrivacyLedger ledger;
    const StatusOr<Eigen::MatrixXd> t = ReleaseFaSecondMoment(unit, 1.0, 1e-5, gen, ledger);
    ASSERT_TRUE(t.ok()) << "d = " << d << ": " << t.status().ToString();
    EXPECT_TRUE(t->allFinite());
    ExpectLedger(ledger, 1, "rows above the unit norm");
    // The same rows clipped from far outside, through the whole fit.
    HostileCase c{"boundary rows", DataMatrix(unit * 1e6), {}};
    c.domain.data_norm = 1.0;
    const StatusOr<FaFit> fit = FitFactorAnalysis(c.x, FaOptions(c), gen);
    ASSERT_TRUE(fit.ok()) << fit.status().ToString();
    ExpectLedger(fit->guarantee.ledger, 1, c.name);
  }
}

// ---------------------------------------------------------------- k-means

TEST(PrivatePathsTest, KmeansEveryMethod) {
  for (const HostileCase& c : AllCases()) {
    for (KmeansMethod m : test_support::kAllKmeansMethods) {
      KmeansFitOptions o = test_support::MakeKmeansOptions(m, /*components=*/3, /*iterations=*/4,
                                                           /*epsilon=*/1.0, /*delta=*/1e-5);
      o.domain = c.domain;
      o.engine = OneThread();
      const std::string what = c.name + " / " + std::string(KmeansMethodName(m));
      Generator gen = Generator::FromSeed(5);
      const StatusOr<KmeansFit> fit = FitKmeans(c.x, o, gen);
      ASSERT_TRUE(fit.ok()) << what << ": " << fit.status().ToString();
      // The private start (two releases) is the default of the cdp methods.
      const size_t start = KmeansMethodHasPrivateStart(m) ? 2 : 0;
      ExpectLedger(fit->guarantee.ledger, start + (m == KmeansMethod::kCdpLaplace ? 2 : 1) * 4,
                   what);
      EXPECT_TRUE(fit->centres.allFinite()) << what;
    }
  }
}

// ---------------------------------------------------------------- gradient EM

// Gradient EM has no domain: its records may be anything finite.
GradientEmData GradientData(GradientEmModel model, const DataMatrix& x) {
  GradientEmData data;
  data.model = model;
  data.x = x;
  if (model != GradientEmModel::kGmm) {
    data.y = x.col(0);
    data.y(0) = -kBig;
  }
  if (model == GradientEmModel::kRmc) {
    data.observed = DataMatrix::Ones(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); i += 2) data.observed(i, 0) = 0.0;
  }
  return data;
}

void FitGradientEmEverywhere(const HostileCase& c, double step, const std::string& extra) {
  for (GradientEmModel model : {GradientEmModel::kGmm, GradientEmModel::kMrm,
                                GradientEmModel::kRmc}) {
    for (GradientEmMethod m : {GradientEmMethod::kDp, GradientEmMethod::kClipped,
                               GradientEmMethod::kDpEm}) {
      if (m == GradientEmMethod::kDpEm && model != GradientEmModel::kGmm) continue;
      GradientEmOptions o = test_support::MakeGradientEmOptions(
          m, /*iterations=*/4, /*epsilon=*/1.0, /*delta=*/1e-5, /*tau=*/4.0, /*clip=*/2.0);
      o.step = step;
      o.engine = OneThread();
      const std::string what = c.name + extra + " / " +
                               std::string(GradientEmModelName(model)) + " / " +
                               std::string(GradientEmMethodName(m));
      Generator gen = Generator::FromSeed(9);
      const StatusOr<GradientEmFit> fit = FitGradientEm(GradientData(model, c.x), o, gen);
      ASSERT_TRUE(fit.ok()) << what << ": " << fit.status().ToString();
      ExpectLedger(fit->guarantee.ledger, 4, what);
      EXPECT_TRUE(fit->beta.allFinite()) << what;
    }
  }
}

TEST(PrivatePathsTest, GradientEmEveryModelAndMethod) {
  for (const HostileCase& c : AllCases()) FitGradientEmEverywhere(c, 1.0, "");
  // A public step so large that the noisy update overflows a double.
  FitGradientEmEverywhere(HostileCases(3, 40)[0], 1e308, " (step 1e308)");
}

// ---------------------------------------------------------------- robust mean

TEST(PrivatePathsTest, RobustMeanCentralAndLocal) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Eigen::VectorXd> samples;
  Eigen::VectorXd mixed(8);
  mixed << kBig, -kBig, kMax, -kMax, inf, -inf, 0.0, 1.0;
  samples.push_back(mixed);
  samples.push_back(Eigen::VectorXd::Constant(50, 3.0));  // All identical.
  samples.push_back(Eigen::VectorXd::Constant(1, kBig));  // n = 1.
  samples.push_back(Eigen::VectorXd::Zero(20));
  PrivateMeanOptions o;
  o.epsilon = 1.0;
  o.delta = 1e-5;
  o.tau = 4.0;
  for (const Eigen::VectorXd& x : samples) {
    for (bool local : {false, true}) {
      Generator gen = Generator::FromSeed(13);
      const StatusOr<PrivateMeanResult> r =
          local ? LocalPrivateRobustMean(x, o, gen) : PrivateRobustMean(x, o, gen);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectLedger(r->ledger, 1, local ? "local robust mean" : "robust mean");
      EXPECT_TRUE(std::isfinite(r->mean));
    }
  }
}

}  // namespace
}  // namespace dpem
