// The robust private mean estimator: see dpem/mechanisms/robust_mean.h.
#include "dpem/mechanisms/robust_mean.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/analytic_gaussian.h"
#include "dpem/mechanisms/additive_noise.h"
#include "internal/discrete_noise.h"
#include "internal/guarantee.h"
#include "mechanisms/robust_mean_closed_form.h"
#include "mechanisms/robust_mean_kernel.h"

namespace dpem {
namespace {

constexpr double kSqrt2 = internal::kClosedFormSqrt2;
constexpr double kInvSqrt2Pi = internal::kClosedFormInvSqrt2Pi;  // 1 / sqrt(2 pi)

// Phi(-v), the standard normal upper tail at v, without cancellation.
double UpperTail(double v) { return 0.5 * std::erfc(v / kSqrt2); }

// Nodes and weights of n-point Gauss-Legendre quadrature on [-1, 1], by
// Newton's method on the Legendre recurrence (Numerical Recipes' gauleg).
template <int N>
struct GaussLegendre {
  std::array<double, N> node{};
  std::array<double, N> weight{};
  GaussLegendre() {
    for (int i = 0; i < (N + 1) / 2; ++i) {
      double z = std::cos(std::numbers::pi * (i + 0.75) / (N + 0.5));
      double dp = 0.0;
      for (int iter = 0; iter < 100; ++iter) {
        double p1 = 1.0, p2 = 0.0;
        for (int j = 1; j <= N; ++j) {
          const double p3 = p2;
          p2 = p1;
          p1 = ((2.0 * j - 1.0) * z * p2 - (j - 1.0) * p3) / j;
        }
        dp = N * (z * p1 - p2) / (z * z - 1.0);
        const double step = p1 / dp;
        z -= step;
        if (std::abs(step) < 1e-16) break;
      }
      node[i] = -z;
      node[N - 1 - i] = z;
      weight[i] = weight[N - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
  }
};

const GaussLegendre<64>& Rule64() {
  static const GaussLegendre<64> rule;
  return rule;
}

// The middle part E[phi(U) 1{|U| <= sqrt 2}], U ~ N(a, b^2), by quadrature in
// u over [-sqrt 2, sqrt 2]. Accurate when b is not small compared with the
// interval or the Gaussian's mass there is negligible (the caller's regime).
double MiddleByQuadrature(double a, double b) {
  const GaussLegendre<64>& rule = Rule64();
  double sum = 0.0;
  for (int i = 0; i < 64; ++i) {
    const double u = kSqrt2 * rule.node[i];
    const double z = (u - a) / b;
    sum += rule.weight[i] * (u - u * u * u / 6.0) * std::exp(-0.5 * z * z);
  }
  return sum * kSqrt2 * kInvSqrt2Pi / b;
}

double Clamp(double v) {
  return std::clamp(v, -kCatoniGiuliniBound, kCatoniGiuliniBound);
}

}  // namespace

double CatoniGiuliniPhi(double u) {
  if (u > kSqrt2) return kCatoniGiuliniBound;
  if (u < -kSqrt2) return -kCatoniGiuliniBound;
  return u - u * u * u / 6.0;
}

// wang-dp-gradient-em Appendix D, term by term (robust_mean_closed_form.h).
double CatoniGiuliniCorrection(double a, double b) { return internal::ClosedFormCorrection(a, b); }

// wang-dp-gradient-em eq. (12).
double SmoothedTruncationClosedForm(double a, double b) { return internal::ClosedForm(a, b); }

double SmoothedTruncation(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || b < 0.0) return 0.0;
  if (std::isinf(b)) return 0.0;  // An infinitely wide symmetric spread: mean 0.
  if (std::isinf(a)) return a > 0 ? kCatoniGiuliniBound : -kCatoniGiuliniBound;
  if (b < kClosedFormMinSmoothing) return CatoniGiuliniPhi(a);  // b = 0 included.
  if (std::max(std::abs(a), b) <= kClosedFormLimit) {
    return Clamp(SmoothedTruncationClosedForm(a, b));
  }
  // P(U > sqrt 2) - P(U < -sqrt 2) for U = a + b Z, each tail by erfc.
  const double upper = UpperTail(internal::VMinus(a, b));
  const double lower = UpperTail(internal::VPlus(a, b));
  const double tails = kCatoniGiuliniBound * (upper - lower);
  return Clamp(tails + MiddleByQuadrature(a, b));
}

namespace {

// psi(x) / s by the careful path (SmoothedTruncation), for the values the
// closed form of the kernel does not take.
double CarefulTruncatedValue(double x, const RobustMeanParameters& p) {
  if (std::isnan(x)) return 0.0;
  const double root_beta = std::sqrt(p.beta);
  const double a = x / p.scale;
  const double b = std::abs(x) / (p.scale * root_beta);
  if (!std::isfinite(a) || !std::isfinite(b)) {
    // x infinite, or so large that x/s overflows: the limit along
    // b/|a| = 1/sqrt(beta), sign(x) * bound * (1 - 2 Phi(-sqrt beta)).
    const double limit = kCatoniGiuliniBound * std::erf(root_beta / kSqrt2);
    return x > 0 ? limit : -limit;
  }
  return SmoothedTruncation(a, b);
}

}  // namespace

void SmoothedTruncatedValues(const double* x, Eigen::Index n, const RobustMeanParameters& p,
                             double* out) {
  constexpr int kLanes = internal::kClosedFormLanes;
  const double root_beta = std::sqrt(p.beta);
  for (Eigen::Index start = 0; start < n; start += kLanes) {
    const int lanes = static_cast<int>(std::min<Eigen::Index>(kLanes, n - start));
    // The lanes the closed form takes (SmoothedTruncation's regular case:
    // b >= kClosedFormMinSmoothing and max(|a|, b) <= kClosedFormLimit);
    // the others, and the padding of a last partial group, compute a = 0,
    // b = 1 and are replaced.
    double a[kLanes], b[kLanes], closed[kLanes];
    bool regular[kLanes];
    for (int t = 0; t < kLanes; ++t) {
      const double v = t < lanes ? x[start + t] : 0.0;
      a[t] = v / p.scale;
      b[t] = std::abs(v) / (p.scale * root_beta);
      regular[t] = t < lanes && b[t] >= kClosedFormMinSmoothing &&
                   std::max(std::abs(a[t]), b[t]) <= kClosedFormLimit;
      if (!regular[t]) a[t] = 0.0, b[t] = 1.0;
    }
    internal::ClosedFormOfEight(a, b, closed);
    for (int t = 0; t < lanes; ++t) {
      const double v = regular[t] ? Clamp(closed[t]) : CarefulTruncatedValue(x[start + t], p);
      out[start + t] = p.scale * v;
    }
  }
}

Eigen::VectorXd SmoothedTruncatedValues(const Eigen::Ref<const Eigen::VectorXd>& x,
                                        const RobustMeanParameters& p) {
  Eigen::VectorXd out(x.size());
  SmoothedTruncatedValues(x.data(), x.size(), p, out.data());
  return out;
}

double SmoothedTruncatedValue(double x, const RobustMeanParameters& p) {
  double out = 0.0;
  SmoothedTruncatedValues(&x, 1, p, &out);
  return out;
}

namespace {
Status ValidateParameters(const RobustMeanParameters& p) {
  if (!(p.scale > 0.0 && std::isfinite(p.scale))) {
    return InvalidArgumentError("the scale s must be finite and > 0");
  }
  if (!(p.beta > 0.0 && std::isfinite(p.beta))) {
    return InvalidArgumentError("the smoothing beta must be finite and > 0");
  }
  return OkStatus();
}
}  // namespace

// Values summed from zero per block before the exact sum (<= 2^16, the
// block bound of kComputedSumMargin).
constexpr Eigen::Index kRobustMeanBlock = 4096;

StatusOr<double> RobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                            const RobustMeanParameters& p) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(p));
  if (x.size() == 0) return InvalidArgumentError("the sample is empty");
  // Blocks of kRobustMeanBlock values, each summed from zero, the block sums
  // added exactly (engine/exact_sum.h): neighbours' sums differ by one
  // block's rounding, whatever n (docs/privacy.md, section 8).
  internal::ExactSum exact(1);
  for (Eigen::Index start = 0; start < x.size(); start += kRobustMeanBlock) {
    const Eigen::Index count = std::min<Eigen::Index>(x.size() - start, kRobustMeanBlock);
    const Eigen::VectorXd values = SmoothedTruncatedValues(x.segment(start, count), p);
    double block = 0.0;
    for (Eigen::Index i = 0; i < count; ++i) block += values(i);
    exact.FoldAndZero({{&block, 1}});
  }
  double sum = 0.0;
  exact.WriteTo({{&sum, 1}});
  return sum / static_cast<double>(x.size());
}

double RobustMeanSensitivity(double scale, double n) {
  return 2.0 * kCatoniGiuliniBound * scale / n;
}

Status PrivateMeanOptions::Validate() const {
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) {
    return InvalidArgumentError("epsilon must be finite and > 0");
  }
  if (!(delta > 0.0 && delta < std::exp(-1.0))) {
    return InvalidArgumentError("delta must be in (0, 1/e) (the parameters use log^{1/4}(1/delta))");
  }
  if (!(tau > 0.0 && std::isfinite(tau))) {
    return InvalidArgumentError("tau (the public bound on E x^2) must be finite and > 0");
  }
  if (!(zeta > 0.0 && zeta < std::exp(-1.0))) {
    return InvalidArgumentError("zeta must be in (0, 1/e)");
  }
  if (calibration == RobustMeanCalibration::kClassic && epsilon >= 1.0) {
    return InvalidArgumentError("the classical Gaussian calibration needs epsilon < 1");
  }
  return OkStatus();
}

namespace {
// log(1/zeta) and log(1/delta), after checking the options and n.
StatusOr<std::pair<double, double>> LogTerms(double n, const PrivateMeanOptions& o) {
  DPEM_RETURN_IF_ERROR(o.Validate());
  if (!(n >= 1.0)) return InvalidArgumentError("n must be >= 1");
  return std::make_pair(std::log(1.0 / o.zeta), std::log(1.0 / o.delta));
}
}  // namespace

// wang-dp-gradient-em Theorem 2.
StatusOr<RobustMeanParameters> Theorem2Parameters(double n, const PrivateMeanOptions& o) {
  DPEM_ASSIGN_OR_RETURN(const auto logs, LogTerms(n, o));
  const auto [log_zeta, log_delta] = logs;
  return RobustMeanParameters{
      std::sqrt(n * o.epsilon * o.tau) / (log_zeta * std::pow(log_delta, 0.25)),
      std::sqrt(log_zeta)};
}

// Appendix F, with the scale corrected as the header explains.
StatusOr<RobustMeanParameters> LocalModelParameters(double n, const PrivateMeanOptions& o) {
  DPEM_ASSIGN_OR_RETURN(const auto logs, LogTerms(n, o));
  const auto [log_zeta, log_delta] = logs;
  const double beta = std::sqrt(log_zeta);
  return RobustMeanParameters{
      std::sqrt(o.tau * o.epsilon * std::sqrt(n) / (beta * log_zeta * std::sqrt(log_delta))),
      beta};
}

namespace {

StatusOr<double> NoiseMultiplier(const PrivateMeanOptions& o) {
  if (o.calibration == RobustMeanCalibration::kClassic) {
    return ClassicGaussianNoiseMultiplier(o.epsilon, o.delta);
  }
  // The release is discrete: calibrate through its Renyi curve.
  return CalibrateSingleGaussian(o.epsilon, o.delta, NoiseSampling::kDiscrete);
}

Status CheckSample(const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (x.size() == 0) return InvalidArgumentError("the sample is empty");
  if (x.hasNaN()) return InvalidArgumentError("the sample holds NaN");
  return OkStatus();
}

// Certifies the one recorded release for its sampling (SingleGaussianEpsilon:
// the Renyi conversion for discrete noise) and reports its noise: what was
// actually added (a discrete release records its charged sensitivity and
// grid noise scale, never below the calibrated ones).
Status Certify(PrivateMeanResult& r, double delta) {
  const Release& release = r.ledger.releases().front();
  r.noise_stddev = release.noise_scale;
  DPEM_ASSIGN_OR_RETURN(r.epsilon, SingleGaussianEpsilon(release.NoiseMultiplier(), delta,
                                                         release.sampling));
  r.delta = delta;
  return OkStatus();
}

}  // namespace

StatusOr<PrivateMeanResult> PrivateRobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                                              const PrivateMeanOptions& o, Generator& gen) {
  DPEM_RETURN_IF_ERROR(CheckSample(x));
  const double n = static_cast<double>(x.size());
  PrivateMeanResult r;
  DPEM_ASSIGN_OR_RETURN(r.parameters, Theorem2Parameters(n, o));
  DPEM_ASSIGN_OR_RETURN(const double z, NoiseMultiplier(o));
  DPEM_ASSIGN_OR_RETURN(const double mean, RobustMean(x, r.parameters));
  // One discrete Gaussian release (additive_noise.h, "Discrete noise"): the
  // mean rounded to the grid plus integer noise, recorded with its charge.
  Eigen::VectorXd released = Eigen::VectorXd::Constant(1, mean);
  const NoiseSpec spec{MechanismKind::kGaussian, RobustMeanSensitivity(r.parameters.scale, n),
                       z, "robust mean"};
  DPEM_RETURN_IF_ERROR(ReleaseVector(released, spec, gen, r.ledger));
  r.mean = released(0);
  DPEM_RETURN_IF_ERROR(Certify(r, o.delta));
  internal::AppendSeededGeneratorVoidReason(gen, /*is_private=*/true, r.void_reasons);
  r.guarantee_void = !r.void_reasons.empty();
  return r;
}

// Every record's report psi(x_i) is a one-coordinate discrete Gaussian
// release of sensitivity (4 sqrt 2/3) s, all on the same grid (planned from
// public values only): round(psi(x_i) / g) + N_i, N_i i.i.d. The ledger holds
// the one release each record takes part in, with the grid's charged
// sensitivity and noise scale.
StatusOr<PrivateMeanResult> LocalPrivateRobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                                                   const PrivateMeanOptions& o,
                                                   Generator& gen) {
  DPEM_RETURN_IF_ERROR(CheckSample(x));
  const double n = static_cast<double>(x.size());
  PrivateMeanResult r;
  DPEM_ASSIGN_OR_RETURN(r.parameters, LocalModelParameters(n, o));
  DPEM_ASSIGN_OR_RETURN(const double z, NoiseMultiplier(o));
  const double sensitivity = 2.0 * kCatoniGiuliniBound * r.parameters.scale;
  DPEM_ASSIGN_OR_RETURN(const internal::DiscreteGrid grid,
                        internal::PlanDiscreteGrid(MechanismKind::kGaussian, sensitivity, z, 1,
                                                   /*input_quantum=*/0.0));
  DPEM_RETURN_IF_ERROR(r.ledger.Record({MechanismKind::kGaussian, grid.sensitivity,
                                        grid.noise_scale, "local report (one per record)"}));
  Eigen::VectorXd reports = SmoothedTruncatedValues(x, r.parameters);
  internal::AddDiscreteNoise(reports, MechanismKind::kGaussian, grid, gen);
  r.mean = reports.sum() / n;
  DPEM_RETURN_IF_ERROR(Certify(r, o.delta));
  internal::AppendSeededGeneratorVoidReason(gen, /*is_private=*/true, r.void_reasons);
  r.guarantee_void = !r.void_reasons.empty();
  return r;
}

}  // namespace dpem
