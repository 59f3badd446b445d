// DP gradient EM (wang-dp-gradient-em Algorithms 1-3): see
// dpem/models/gradient_em/gradient_em.h.
#include "dpem/models/gradient_em/gradient_em.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/accounting/calibration.h"
#include "dpem/mechanisms/additive_noise.h"
#include "dpem/data/row_source.h"
#include "dpem/random/samplers.h"
#include "internal/guarantee.h"
#include "models/gradient_em/gradient_em_internal.h"
#include "engine/exact_sum.h"
#include "engine/rank_combine.h"

namespace dpem {
namespace {

// eps~ = sqrt(log(1/delta) + eps) - sqrt(log(1/delta)) (Algorithm 2, line 1),
// written without cancellation.
double EpsilonTilde(double epsilon, double delta) {
  const double l = std::log(1.0 / delta);
  return epsilon / (std::sqrt(l + epsilon) + std::sqrt(l));
}

StatusOr<Eigen::VectorXd> InitialBeta(const GradientEmOptions& o, Eigen::Index d,
                                      Generator& gen) {
  if (o.initial.size() > 0) {
    if (o.initial.size() != d || !o.initial.allFinite()) {
      return InvalidArgumentError("the initial beta must have d = " + std::to_string(d) +
                                  " finite coordinates");
    }
    return o.initial;
  }
  DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd dir, SampleGaussianVector(gen, d, 1.0));
  const double norm = dir.norm();
  if (!(norm > 0.0)) dir = Eigen::VectorXd::Unit(d, 0);
  return Eigen::VectorXd(dir / dir.norm() * o.init_norm);
}

// The per-iteration release: its L2 sensitivity and noise multiplier, and
// the epsilon a budget is charged for the whole fit.
struct NoisePlan {
  double sensitivity = 0.0;
  double multiplier = 0.0;
  RobustMeanParameters robust;
  double charged_epsilon = 0.0;
};

StatusOr<double> CalibratedMultiplier(const GradientEmOptions& o) {
  if (o.calibration == NoiseCalibrationRule::kPaperZcdp) {
    return PaperNoiseMultiplier(o.iterations, o.epsilon, o.delta);
  }
  CalibrationOptions c;
  c.epsilon = o.epsilon;
  c.delta = o.delta;
  c.iterations = o.iterations;
  c.accountant = o.accountant;
  c.pattern = {"gradient-em", {{MechanismKind::kGaussian, 1, 1.0, "gradient"}}};
  DPEM_ASSIGN_OR_RETURN(const CalibrationResult cal, Calibrate(c));
  return cal.noise_multipliers[0];
}

// What the accountant certifies for T Gaussian releases at `multiplier`, or
// the target if that is larger; FailedPrecondition above the tolerance. The
// paper's calibration is exact in zCDP, so the accountants' upward rounding
// (relative 1e-12) can put its certificate a hair above the target: the fit
// accepts up to kGradientEmEpsilonTolerance more, and whatever it accepts is
// what the budget must be charged (the charge must never be below the
// certificate, or a data set could be spent past its total).
StatusOr<double> ChargedEpsilon(const GradientEmOptions& o, double multiplier) {
  PrivacyLedger planned;
  DPEM_RETURN_IF_ERROR(planned.RecordRepeated(
      {MechanismKind::kGaussian, 1.0, multiplier, "planned gradient"},
      static_cast<std::size_t>(o.iterations)));
  DPEM_ASSIGN_OR_RETURN(const double certified, ComputeEpsilon(planned, o.delta, o.accountant));
  if (certified > o.epsilon * (1.0 + kGradientEmEpsilonTolerance)) {
    return FailedPreconditionError(
        "the " + std::string(AccountantName(o.accountant)) + " accountant certifies epsilon = " +
        std::to_string(certified) + " for this noise, above the target; choose another "
        "accountant or the accountant calibration");
  }
  return std::max(o.epsilon, certified);
}

StatusOr<NoisePlan> MakeNoisePlan(const GradientEmOptions& o, double n, double d) {
  NoisePlan plan;
  DPEM_ASSIGN_OR_RETURN(plan.multiplier, CalibratedMultiplier(o));
  DPEM_ASSIGN_OR_RETURN(plan.charged_epsilon, ChargedEpsilon(o, plan.multiplier));
  if (GradientEmUsesRobustMean(o.method)) {
    DPEM_ASSIGN_OR_RETURN(plan.robust, Algorithm2Parameters(n, d, o));
    if (!std::isnan(o.robust_scale)) plan.robust.scale = o.robust_scale;
    // d coordinates, each moving by at most (4 sqrt 2/3) s / n.
    plan.sensitivity = std::sqrt(d) * RobustMeanSensitivity(plan.robust.scale, n);
  } else {
    plan.sensitivity = 2.0 * o.clip / n;  // Replace-one: two clipped gradients.
  }
  return plan;
}

// Adds one block's rows to `sum` as the method's mean needs them: through
// the robust estimator per coordinate (kDp, kDpEm), scaled to L2 norm at most
// C (kClipped, Algorithm 1 line 3), or as they are.
void AccumulateRows(const DataMatrix& rows, const GradientEmOptions& o, const NoisePlan& plan,
                    Eigen::VectorXd& sum) {
  if (GradientEmUsesRobustMean(o.method)) {
    // Every entry's smoothed value (eight at a time), then summed in row order.
    DataMatrix values(rows.rows(), rows.cols());
    SmoothedTruncatedValues(rows.data(), rows.size(), plan.robust, values.data());
    for (Eigen::Index i = 0; i < rows.rows(); ++i) sum += values.row(i).transpose();
    return;
  }
  for (Eigen::Index i = 0; i < rows.rows(); ++i) {
    if (o.method == GradientEmMethod::kClipped) {
      // A gradient that overflowed carries no usable direction: it
      // contributes 0 (any vector of norm <= C keeps the sensitivity).
      if (!rows.row(i).allFinite()) continue;
      const double norm = rows.row(i).norm();
      if (!std::isfinite(norm)) continue;
      sum += (norm > o.clip ? o.clip / norm : 1.0) * rows.row(i).transpose();
    } else {
      sum += rows.row(i).transpose();
    }
  }
}

// One iteration's statistic (before noise): the (robust, clipped or plain)
// mean gradient, or for DP EM the robust mean of the EM maps; one pass on the
// engine, per-thread sums merged in thread order. The engine walks the rows
// of x; y and the mask are read at the same rows.
StatusOr<Eigen::VectorXd> IterationStatistic(const GradientEmData& data,
                                             const Eigen::VectorXd& beta,
                                             const GradientEmOptions& o, const NoisePlan& plan,
                                             const RowSource& rows, const Engine& engine) {
  if (!beta.allFinite()) return InvalidArgumentError("beta is not finite");  // As before.
  // A released statistic: each block's sum from zero, the block sums added
  // exactly (engine/exact_sum.h; the summands are bounded by the clip or the
  // robust mean's truncation). Non-private: plain sums (unbounded summands
  // would meet ExactSum's clamp).
  struct Worker {
    Eigen::VectorXd sum;
    DataMatrix block;
    internal::ExactSum exact;
  };
  const bool released = o.method != GradientEmMethod::kNonPrivate;
  const auto init = [&](Worker& w) {
    w.sum = Eigen::VectorXd::Zero(data.d());
    w.exact = internal::ExactSum(data.d());
  };
  DPEM_ASSIGN_OR_RETURN(
      std::vector<Worker> workers,
      engine.Reduce<Worker>(rows, 2 * data.d(), init,
                            [&](Worker& w, const RowBlock& block, Eigen::Index table_row) {
        // `data` holds the rows from LocalRows().begin on.
        const Eigen::Index first = table_row - rows.LocalRows().begin;
        w.block.resize(block.rows(), data.d());
        if (o.method == GradientEmMethod::kDpEm) {
          internal::GmmEmMapRows(data, beta, o.sigma, first, w.block);
        } else {
          internal::GradientRows(data, beta, o.sigma, first, w.block);
        }
        AccumulateRows(w.block, o, plan, w.sum);
        if (released) w.exact.FoldAndZero({{w.sum.data(), w.sum.size()}});
        return OkStatus();
      }));
  const std::vector<internal::StatisticArray> total = {{workers[0].sum.data(), data.d()}};
  if (released) {
    DPEM_RETURN_IF_ERROR(internal::WriteExactSumOverRanks(
        rows.collective(), internal::MergeExactSums(workers, &Worker::exact), total));
  } else {
    for (size_t t = 1; t < workers.size(); ++t) workers[0].sum += workers[t].sum;
    DPEM_RETURN_IF_ERROR(internal::SumInRankOrder(rows.collective(), total));
  }
  return Eigen::VectorXd(workers[0].sum / static_cast<double>(rows.rows()));
}

// Re-accounts the releases made. Each recorded a noise multiplier at least
// the plan's (a discrete release rounds its noise scale up), so the
// accountant certifies at most what the plan charges; a certificate above the
// charge would mean an under-charged budget, and fails the fit.
Status Reaccount(const GradientEmOptions& o, const NoisePlan& plan, GradientEmGuarantee& g) {
  if (g.ledger.size() != static_cast<std::size_t>(o.iterations)) {
    return InternalError("the fit made " + std::to_string(g.ledger.size()) +
                         " releases but budgeted " + std::to_string(o.iterations));
  }
  DPEM_ASSIGN_OR_RETURN(g.epsilon, ComputeEpsilon(g.ledger, o.delta, o.accountant));
  if (g.epsilon > plan.charged_epsilon) {
    return InternalError("the " + std::string(AccountantName(o.accountant)) +
                         " accountant certifies epsilon = " + std::to_string(g.epsilon) +
                         " for the releases made, above the " +
                         std::to_string(plan.charged_epsilon) + " charged for the plan");
  }
  return OkStatus();
}

// A private update is post-processing of released values: one that overflows
// (a huge public step) is projected onto the finite doubles, the box
// [-DBL_MAX, DBL_MAX]^d, so the next pass never refuses beta.
void ProjectOntoFinite(Eigen::VectorXd& beta) {
  const double largest = std::numeric_limits<double>::max();
  beta = beta.cwiseMax(-largest).cwiseMin(largest);
}

GradientEmGuarantee NewGuarantee(const GradientEmOptions& o, const NoisePlan& plan) {
  GradientEmGuarantee g;
  StartGuarantee(o.IsPrivate(), o.epsilon, o.delta, o.accountant, g);
  if (!g.is_private) return g;
  g.calibration = o.calibration;
  g.noise_multiplier = plan.multiplier;
  g.sensitivity = plan.sensitivity;
  g.noise_stddev = plan.multiplier * plan.sensitivity;
  g.robust = plan.robust;
  return g;
}

}  // namespace

Status GradientEmOptions::Validate() const {
  if (iterations < 1 || iterations > kMaxGradientEmIterations) {
    return InvalidArgumentError("iterations T must be in [1, 100000]");
  }
  if (!(step > 0.0 && std::isfinite(step))) return InvalidArgumentError("step must be finite and > 0");
  if (!(sigma > 0.0 && std::isfinite(sigma))) {
    return InvalidArgumentError("sigma (the model's public noise level) must be finite and > 0");
  }
  if (!(init_norm > 0.0 && std::isfinite(init_norm))) {
    return InvalidArgumentError("init norm must be finite and > 0");
  }
  if (!IsPrivate()) return OkStatus();
  if (!(epsilon > 0.0 && std::isfinite(epsilon))) {
    return InvalidArgumentError("epsilon must be finite and > 0");
  }
  if (!(delta > 0.0 && delta < 1.0)) return InvalidArgumentError("delta must be in (0, 1)");
  if (GradientEmUsesRobustMean(method)) {
    if (!(tau > 0.0 && std::isfinite(tau))) {
      return InvalidArgumentError("tau (the public second-moment bound) must be finite and > 0");
    }
    if (!(zeta > 0.0 && zeta < 1.0)) return InvalidArgumentError("zeta must be in (0, 1)");
    if (!std::isnan(robust_scale) && !(robust_scale > 0.0 && std::isfinite(robust_scale))) {
      return InvalidArgumentError("the robust scale s must be finite and > 0");
    }
  }
  if (method == GradientEmMethod::kClipped && !(clip > 0.0 && std::isfinite(clip))) {
    return InvalidArgumentError("the clipping threshold C must be finite and > 0");
  }
  return OkStatus();
}

// Algorithm 2, line 1 (see the header on s).
StatusOr<RobustMeanParameters> Algorithm2Parameters(double n, double d,
                                                    const GradientEmOptions& o) {
  if (!(n >= 1.0 && d >= 1.0)) return InvalidArgumentError("n and d must be >= 1");
  RobustMeanParameters p;
  p.beta = std::sqrt(std::log(d / o.zeta));
  p.scale = std::sqrt(n * o.tau * EpsilonTilde(o.epsilon, o.delta)) / (2.0 * p.beta);
  if (!(p.scale > 0.0 && std::isfinite(p.scale))) {
    return InvalidArgumentError("the robust scale s is not finite and positive");
  }
  return p;
}

// Algorithm 2, line 3: sigma^2 = 16 s^2 d T / (9 n^2 eps~^2) over the L2
// sensitivity^2 = 32 s^2 d / (9 n^2) gives z^2 = T / (2 eps~^2): each
// iteration is eps~^2 / T-zCDP (Lemma 18), T of them eps~^2-zCDP.
double PaperNoiseMultiplier(int iterations, double epsilon, double delta) {
  return std::sqrt(static_cast<double>(iterations) / 2.0) / EpsilonTilde(epsilon, delta);
}

StatusOr<double> GradientEmChargedEpsilon(const GradientEmOptions& options) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (!options.IsPrivate()) {
    return InvalidArgumentError("a non-private fit cannot be charged to a privacy budget");
  }
  DPEM_ASSIGN_OR_RETURN(const double multiplier, CalibratedMultiplier(options));
  return ChargedEpsilon(options, multiplier);
}

StatusOr<GradientEmFit> FitGradientEm(const GradientEmData& data,
                                      const GradientEmOptions& options, Generator& gen) {
  DPEM_RETURN_IF_ERROR(data.Validate());
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource rows, MatrixRowSource::Borrow(data.x));
  return internal::FitGradientEmOnRows(data, rows, options, gen);
}

namespace internal {

StatusOr<GradientEmFit> FitGradientEmOnRows(const GradientEmData& data, const RowSource& rows,
                                            const GradientEmOptions& options, Generator& gen) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (options.method == GradientEmMethod::kDpEm && data.model != GradientEmModel::kGmm) {
    return InvalidArgumentError("DP EM (Algorithm 3) is defined for the GMM only");
  }
  const double n = static_cast<double>(rows.rows());
  NoisePlan plan;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(plan, MakeNoisePlan(options, n, static_cast<double>(data.d())));
  }
  GradientEmFit fit;
  fit.guarantee = NewGuarantee(options, plan);
  internal::AppendSeededGeneratorVoidReason(gen, options.IsPrivate(),
                                            fit.guarantee.void_reasons);
  fit.guarantee.guarantee_void = !fit.guarantee.void_reasons.empty();
  NoiseSpec spec{MechanismKind::kGaussian, plan.sensitivity, plan.multiplier, ""};
  // Refuse, before the data is read, what a release would refuse after.
  if (options.IsPrivate()) DPEM_RETURN_IF_ERROR(CheckRelease(spec, data.d()));
  DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd beta, InitialBeta(options, data.d(), gen));
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create(options.engine));
  fit.trajectory.push_back(beta);
  for (int t = 1; t <= options.iterations; ++t) {
    DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd stat,
                          IterationStatistic(data, beta, options, plan, rows, engine));
    if (options.IsPrivate()) {
      spec.label = "iteration " + std::to_string(t) + " / " +
                   std::string(GradientEmMethodName(options.method));
      DPEM_RETURN_IF_ERROR(ReleaseVector(stat, spec, gen, fit.guarantee.ledger));
    }
    if (options.method == GradientEmMethod::kDpEm) {
      beta = stat;  // Algorithm 3, line 5.
    } else {
      beta += options.step * stat;  // Algorithms 1 and 2: the gradient step.
    }
    if (options.IsPrivate()) ProjectOntoFinite(beta);
    fit.trajectory.push_back(beta);
  }
  if (options.IsPrivate()) {
    DPEM_RETURN_IF_ERROR(Reaccount(options, plan, fit.guarantee));
    // What was recorded (a discrete release charges its rounding, so its
    // sensitivity and noise are a little above the plan's).
    const Release& last = fit.guarantee.ledger.releases().back();
    fit.guarantee.sensitivity = last.sensitivity;
    fit.guarantee.noise_stddev = last.noise_scale;
  }
  fit.beta = beta;
  fit.seed = gen.seed();
  return fit;
}

}  // namespace internal
}  // namespace dpem
