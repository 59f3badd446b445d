// DP gradient EM with statistical guarantees (wang-dp-gradient-em): the
// symmetric two-component Gaussian mixture (eq. 4), the mixture of linear
// regressions (eq. 5) and linear regression with missing covariates (eq. 6).
//
// Methods (GradientEmMethod):
//   kDp          Algorithm 2: every coordinate of the mean gradient is the
//                robust smoothed mean of the per-record gradient coordinates
//                (mechanisms/robust_mean.h), then Gaussian noise.
//   kClipped     Algorithm 1: per-record gradients clipped to L2 norm C,
//                averaged, Gaussian noise (the DP-SGD-style baseline).
//   kDpEm        Algorithm 3 (GMM only): the EM map M_n(beta) = mean of
//                f_i = (2 w(y_i) - 1) y_i, released by the robust estimator.
//   kNonPrivate  Gradient EM of Balakrishnan et al. (2017): no noise.
//
// Privacy (replace-one neighbours; docs/gradient_em.md has the argument):
//   * Each iteration releases ONE d-vector by the Gaussian mechanism. Its L2
//     sensitivity is sqrt(d) (4 sqrt 2/3) s / n for kDp and kDpEm (each of the
//     d smoothed coordinate means moves by at most (4 sqrt 2/3) s / n,
//     whatever the records are) and 2 C / n for kClipped. T iterations are T
//     releases in the ledger; the accountant certifies their composition.
//   * The noise multiplier is calibrated by the chosen accountant
//     (NoiseCalibrationRule::kAccountant, default rdp). The paper's
//     sigma^2 = 16 s^2 d T / (9 n^2 eps~^2) (Algorithm 2, line 3) is
//     kPaperZcdp; it is exactly eps~^2-zCDP, i.e. (epsilon, delta)-DP by the
//     conversion of Bun and Steinke (Lemma 17).
//   * Everything the mechanism's scale depends on is public and not computed
//     from the data: n, d, T, epsilon, delta, zeta, the second-moment bound
//     tau, the model's noise level sigma, the clipping threshold C, the step,
//     and the initial beta (drawn from the generator unless given).
//
// Thread safety: FitGradientEm is reentrant; it uses only its arguments.
#ifndef DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_H_
#define DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_H_

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "dpem/accounting/guarantee.h"
#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/matrix.h"
#include "dpem/engine/engine.h"
#include "dpem/mechanisms/robust_mean.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

enum class GradientEmModel { kGmm, kMrm, kRmc };
enum class GradientEmMethod { kDp, kClipped, kDpEm, kNonPrivate };
// How the per-iteration noise multiplier is chosen (see the file comment).
enum class NoiseCalibrationRule { kAccountant, kPaperZcdp };

// "gmm", "mrm", "rmc"; "dp", "clipped", "dp-em", "nonprivate";
// "accountant", "paper".
std::string_view GradientEmModelName(GradientEmModel m);
std::string_view GradientEmMethodName(GradientEmMethod m);
std::string_view NoiseCalibrationRuleName(NoiseCalibrationRule r);
StatusOr<GradientEmModel> ParseGradientEmModel(std::string_view name);
StatusOr<GradientEmMethod> ParseGradientEmMethod(std::string_view name);
StatusOr<NoiseCalibrationRule> ParseNoiseCalibrationRule(std::string_view name);

// The most iterations T a fit runs.
inline constexpr int kMaxGradientEmIterations = 100000;

// Whether `m` releases its means by the robust estimator (kDp, kDpEm: the
// public tau, zeta and robust scale apply) rather than by clipping.
inline bool GradientEmUsesRobustMean(GradientEmMethod m) {
  return m == GradientEmMethod::kDp || m == GradientEmMethod::kDpEm;
}

// The observed data of one model.
//   kGmm: x holds y_1..y_n (n x d); y and observed are empty.
//   kMrm: x holds the covariates (n x d), y the responses (n).
//   kRmc: x the covariates (n x d) with missing entries set to 0, observed
//         the indicator z (1 observed, 0 missing), y the responses.
struct GradientEmData {
  GradientEmModel model = GradientEmModel::kGmm;
  DataMatrix x;
  Eigen::VectorXd y;
  DataMatrix observed;
  Eigen::Index n() const { return x.rows(); }
  Eigen::Index d() const { return x.cols(); }
  // Shapes agree, values finite, observed entries 0 or 1, n >= 1, d >= 1.
  Status Validate() const;
};

// Per-record gradients grad q_i(beta; beta) (Appendix C, eq. 23-27), one row
// per record, for the model's noise level sigma > 0.
StatusOr<DataMatrix> PerRecordGradients(const GradientEmData& data,
                                        const Eigen::VectorXd& beta, double sigma);

// Per-record EM maps f_i(beta) = (2 w_beta(y_i) - 1) y_i of the GMM
// (Appendix I): their mean is M_n(beta). GMM data only.
StatusOr<DataMatrix> PerRecordGmmEmMaps(const GradientEmData& data,
                                        const Eigen::VectorXd& beta, double sigma);

// The log-likelihood of each record under the model with parameters beta
// and sigma > 0, computed without overflow for any finite record:
//   kGmm: log p(y_i) = log(N(y_i; beta, sigma^2 I) / 2 + N(y_i; -beta,
//         sigma^2 I) / 2);
//   kMrm: log p(y_i | x_i) = log(N(y_i; <x_i, beta>, sigma^2) / 2 +
//         N(y_i; -<x_i, beta>, sigma^2) / 2);
//   kRmc: log p(y_i | the observed x_ij) = log N(y_i; sum of the observed
//         x_ij beta_j, sigma^2 + sum of the missing beta_j^2) (x ~ N(0, I)).
// Post-processing of a released beta: no privacy cost. InvalidArgument if
// beta has not d finite entries or sigma is not finite and > 0.
StatusOr<Eigen::VectorXd> GradientEmLogLikelihoods(const GradientEmData& data,
                                                   const Eigen::VectorXd& beta, double sigma);

struct GradientEmOptions {
  GradientEmMethod method = GradientEmMethod::kDp;
  int iterations = 0;  // T >= 1; no default.
  // Step size eta. Theorem 4 takes eta = 2 / (mu + nu) = 1 (mu = nu = 1 for
  // all three models, Lemmas 3, 5, 7). Unused by kDpEm.
  double step = 1.0;
  // The model's noise standard deviation sigma (eq. 4-6), public; no default.
  double sigma = std::numeric_limits<double>::quiet_NaN();
  // Privacy (not used by kNonPrivate). No defaults.
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double delta = std::numeric_limits<double>::quiet_NaN();
  // kDp / kDpEm: the public bound tau on E (grad_j q)^2 (Assumption 1) or
  // E f_j^2 (Assumption 2). No default.
  double tau = std::numeric_limits<double>::quiet_NaN();
  // kDp / kDpEm: failure probability zeta of Algorithm 2 (beta_s =
  // sqrt(log(d / zeta))). In (0, 1).
  double zeta = 0.1;
  // kDp / kDpEm: the robust scale s, public. NaN (the default) means
  // Algorithm 2's s = sqrt(n tau eps~) / (2 beta_s); a given s replaces it
  // (the sensitivity and the noise follow s, so privacy is unchanged).
  double robust_scale = std::numeric_limits<double>::quiet_NaN();
  // kClipped: the clipping threshold C; no default.
  double clip = std::numeric_limits<double>::quiet_NaN();
  AccountantKind accountant = kDefaultAccountant;
  NoiseCalibrationRule calibration = NoiseCalibrationRule::kAccountant;
  // The initial beta; empty means: drawn from the generator, uniform on the
  // sphere of radius init_norm (the paper's random initialisation).
  Eigen::VectorXd initial;
  double init_norm = 1.0;
  // Threads and block size of the fitting engine. Released statistics are
  // exact sums (engine/exact_sum.h): they do not depend on the thread count;
  // the block size changes their last bits.
  EngineOptions engine;

  bool IsPrivate() const { return method != GradientEmMethod::kNonPrivate; }
  // Checks everything that does not need the data.
  Status Validate() const;
};

// A gradient EM fit's guarantee: the shared fields
// (dpem/accounting/guarantee.h) and the calibration of its releases.
struct GradientEmGuarantee : PrivacyGuarantee {
  NoiseCalibrationRule calibration = NoiseCalibrationRule::kAccountant;
  double noise_multiplier = 0.0;  // sigma_noise / L2 sensitivity, per iteration.
  double sensitivity = 0.0;       // L2 sensitivity of each iteration's release.
  double noise_stddev = 0.0;      // Per coordinate.
  RobustMeanParameters robust;    // kDp / kDpEm: the scale s and beta_s.
};

struct GradientEmFit {
  Eigen::VectorXd beta;                 // beta^T.
  std::vector<Eigen::VectorXd> trajectory;  // beta^0, ..., beta^T.
  GradientEmGuarantee guarantee;
  std::optional<std::uint64_t> seed;
};

// Algorithm 2's parameters: eps~ = sqrt(log(1/delta) + epsilon) -
// sqrt(log(1/delta)), beta_s = sqrt(log(d/zeta)) and s = sqrt(n tau eps~) /
// (2 beta_s) (the s that makes line 3's two expressions for sigma^2 agree;
// line 1 prints 2 log(1/delta) in place of 2 beta_s).
StatusOr<RobustMeanParameters> Algorithm2Parameters(double n, double d,
                                                    const GradientEmOptions& o);

// The paper's per-iteration noise multiplier sqrt(T) / (sqrt(2) eps~): with the
// sensitivity above, sigma^2 = 16 s^2 d T / (9 n^2 eps~^2).
double PaperNoiseMultiplier(int iterations, double epsilon, double delta);

// The relative excess over the target epsilon that a fit accepts from its
// accountant (the paper's calibration under accountants' upward rounding);
// whatever is accepted is charged (GradientEmChargedEpsilon).
inline constexpr double kGradientEmEpsilonTolerance = 1e-9;

// The epsilon to charge to a privacy budget for a private fit with `options`,
// known before the data is read: what options.accountant certifies for
// options.iterations Gaussian releases at the calibrated noise multiplier, or
// the target epsilon if that is larger (the paper's calibration is exact in
// zCDP, so an accountant's upward rounding can certify a hair above the
// target). FitGradientEm never certifies more than this: its discrete
// releases only add noise, and it fails rather than exceed it.
// FailedPrecondition if the accountant certifies more than the target allows
// (target x (1 + kGradientEmEpsilonTolerance)), as FitGradientEm would;
// InvalidArgument for invalid options or a non-private method.
StatusOr<double> GradientEmChargedEpsilon(const GradientEmOptions& options);

// Runs options.iterations iterations of the chosen method on `data`. A
// private fit with a seeded generator runs, but its guarantee is void.
StatusOr<GradientEmFit> FitGradientEm(const GradientEmData& data,
                                      const GradientEmOptions& options, Generator& gen);

}  // namespace dpem

#endif  // DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_H_
