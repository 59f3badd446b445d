// The release plan of a private k-means fit: see
// models/kmeans/kmeans_release_plan.h.
#include "models/kmeans/kmeans_release_plan.h"

#include <cmath>
#include <limits>
#include <string>

#include "dpem/accounting/calibration.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/models/fit_defaults.h"

namespace dpem::internal {
namespace {

// The ledger label of a release of `what` in iteration `iteration`.
std::string IterationLabel(int iteration, const std::string& what) {
  return "iteration " + std::to_string(iteration) + " / " + what;
}

// cdp-laplace: equal Laplace scale b on counts and sums, i.e. noise
// multipliers in the ratio of the inverse sensitivities: counts sqrt(d),
// sums 1 (times 1/eps_i). At a fixed zCDP cost ((2/b_n)^2 + (2 sqrt(d)/b_1)^2)/2
// the centre's noise d b_1^2 + ||mu||^2 b_n^2 is smallest at
// b_n = b_1 / ||mu||^(1/2); equal scales are optimal for the worst case
// ||mu|| = 1 (docs/kmeans.md).
ReleasePattern LaplacePattern(Eigen::Index d) {
  return {"kmeans-laplace",
          {{MechanismKind::kLaplace, 1, std::sqrt(static_cast<double>(d)), "counts"},
           {MechanismKind::kLaplace, 1, 1.0, "sums"}}};
}

// Su et al. 2016 (DPLloyd): each of the J iterations gets eps/J (linear
// composition), noise Lap(Delta_1 J / eps) on every count and sum
// coordinate (park2016 Sec. 6: Lap((d+1)J/eps) for their domain).
KmeansReleasePlan DplloydPlan(const KmeansFitOptions& o, Eigen::Index d) {
  KmeansReleasePlan plan;
  plan.method = o.method;
  plan.sensitivity_joint = KmeansJointL1Sensitivity(d);
  plan.multipliers = {static_cast<double>(o.iterations) / o.epsilon *
                      (1.0 + kDplloydRoundingMargin)};
  return plan;
}

// The calibration of a fit with options `o` (a calibrated method), its
// iterations' pattern left to SetIterationPattern: the budget, the
// accountant, and the private start's pattern and share if it starts so.
CalibrationOptions CalibrationFor(const KmeansFitOptions& o) {
  CalibrationOptions c;
  c.epsilon = o.epsilon;
  c.delta = o.delta;
  c.iterations = o.iterations;
  c.accountant = o.EffectiveAccountant();
  if (o.StartsPrivately()) {
    c.start = PrivateStartPattern(NoiseSampling::kDiscrete);
    c.start_share = kPrivateStartShare;
  }
  return c;
}

// One iteration's releases of a calibrated method in d dimensions: their
// pattern into `c`, their number and joint sensitivity into `plan`.
void SetIterationPattern(const KmeansFitOptions& o, Eigen::Index d, KmeansReleasePlan& plan,
                         CalibrationOptions& c) {
  if (o.method == KmeansMethod::kCdpLaplace) {
    c.pattern = LaplacePattern(d);
    plan.releases_per_iteration = 2;
    return;
  }
  const MechanismKind m = o.method == KmeansMethod::kCdpGauss ? MechanismKind::kGaussian
                                                              : MechanismKind::kLaplace;
  c.pattern = {"kmeans-joint", {{m, 1, 1.0, "counts and sums"}}};
  plan.sensitivity_joint = o.method == KmeansMethod::kCdpGauss ? kKmeansJointL2Sensitivity
                                                               : KmeansJointL1Sensitivity(d);
}

// The releases of iteration `it` in d dimensions: cdp-laplace's counts and
// sums, or one joint release of both.
NoiseSpec CountsSpec(const KmeansReleasePlan& plan, int it) {
  return {MechanismKind::kLaplace, kKmeansCountsL1Sensitivity, plan.multipliers[0],
          IterationLabel(it, "counts")};
}
NoiseSpec SumsSpec(const KmeansReleasePlan& plan, int it, Eigen::Index d) {
  return {MechanismKind::kLaplace, KmeansSumsL1Sensitivity(d), plan.multipliers[1],
          IterationLabel(it, "sums")};
}
NoiseSpec JointSpec(const KmeansReleasePlan& plan, int it) {
  const MechanismKind m = plan.method == KmeansMethod::kCdpGauss ? MechanismKind::kGaussian
                                                                 : MechanismKind::kLaplace;
  return {m, plan.sensitivity_joint, plan.multipliers[0], IterationLabel(it, "counts and sums")};
}

}  // namespace

StatusOr<int> DefaultPrivateStartIterations(const KmeansFitOptions& o, Eigen::Index n,
                                            Eigen::Index d) {
  KmeansFitOptions one = o;
  one.iterations = 1;
  DPEM_ASSIGN_OR_RETURN(const KmeansReleasePlan plan, MakeKmeansReleasePlan(one, n, d));
  const double ratio = CentreNoiseRatio(plan.SumsNoiseStddev(d), d, o.components, n);
  return ratio >= kNoisyCentreRatio ? 1 : kDefaultPrivateStartIterations;
}

StatusOr<KmeansReleasePlan> MakeKmeansReleasePlan(const KmeansFitOptions& o, Eigen::Index n,
                                                  Eigen::Index d) {
  if (o.method == KmeansMethod::kDplloyd) return DplloydPlan(o, d);
  KmeansReleasePlan plan;
  plan.method = o.method;
  CalibrationOptions c = CalibrationFor(o);
  SetIterationPattern(o, d, plan, c);
  DPEM_ASSIGN_OR_RETURN(const CalibrationResult cal, Calibrate(c));
  plan.multipliers = cal.noise_multipliers;
  if (o.StartsPrivately()) {
    DPEM_ASSIGN_OR_RETURN(plan.start, MakePrivateStartPlan(NoiseSampling::kDiscrete,
                                                           cal.start_noise_multipliers,
                                                           o.components, n));
  }
  return plan;
}

Status CheckKmeansReleases(const KmeansReleasePlan& plan, Eigen::Index k, Eigen::Index d) {
  if (plan.start) DPEM_RETURN_IF_ERROR(CheckPrivateStart(*plan.start, d));
  if (plan.method == KmeansMethod::kCdpLaplace) {
    DPEM_RETURN_IF_ERROR(CheckRelease(CountsSpec(plan, 1), k));
    return CheckRelease(SumsSpec(plan, 1, d), k * d);
  }
  return CheckRelease(JointSpec(plan, 1), k + k * d);
}

Status PrivatizeKmeansStatistics(KmeansStatistics& s, const KmeansReleasePlan& plan, int it,
                                 Generator& gen, PrivacyLedger& ledger) {
  s.sse = std::numeric_limits<double>::quiet_NaN();
  if (plan.method == KmeansMethod::kCdpLaplace) {
    DPEM_RETURN_IF_ERROR(ReleaseVector(s.counts, CountsSpec(plan, it), gen, ledger));
    return ReleaseMatrix(s.sums, SumsSpec(plan, it, s.sums.cols()), gen, ledger);
  }
  return ReleaseCountsAndSums(s, JointSpec(plan, it), gen, ledger);
}

}  // namespace dpem::internal
