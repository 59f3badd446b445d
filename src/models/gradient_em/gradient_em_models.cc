// The three models of wang-dp-gradient-em: names, data checks and the
// per-record gradients of Appendix C. See dpem/models/gradient_em/gradient_em.h.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "dpem/models/gradient_em/gradient_em.h"
#include "internal/enum_names.h"
#include "models/gradient_em/gradient_em_internal.h"

namespace dpem {
namespace {

// The posterior weight of the "+" component, 1 / (1 + exp(-2 t / sigma^2)),
// written as 2 w - 1 = tanh(t / sigma^2). Appendix C prints exp(-t / sigma^2)
// (no factor 2); that w is not the posterior of eq. (4)/(5), and with it
// beta* is not a fixed point of the population EM map. dpem uses the
// posterior of Balakrishnan et al. (2017), for which it is (tested).
double TwoWMinusOne(double t, double sigma) { return std::tanh(t / (sigma * sigma)); }

Status CheckBeta(const GradientEmData& data, const Eigen::VectorXd& beta, double sigma) {
  if (beta.size() != data.d()) {
    return InvalidArgumentError("beta has " + std::to_string(beta.size()) +
                                " coordinates but the data has d = " + std::to_string(data.d()));
  }
  if (!beta.allFinite()) return InvalidArgumentError("beta is not finite");
  if (!(sigma > 0.0 && std::isfinite(sigma))) {
    return InvalidArgumentError("sigma must be finite and > 0");
  }
  return OkStatus();
}

// eq. (26): the conditional mean of x given the observed part and y.
Eigen::VectorXd RmcConditionalMean(const Eigen::VectorXd& x, const Eigen::VectorXd& z, double y,
                                   const Eigen::VectorXd& beta, double sigma) {
  const Eigen::VectorXd observed_x = z.cwiseProduct(x);
  const Eigen::VectorXd missing_beta = (Eigen::VectorXd::Ones(z.size()) - z).cwiseProduct(beta);
  const double denominator = sigma * sigma + missing_beta.squaredNorm();
  return observed_x + (y - beta.dot(observed_x)) / denominator * missing_beta;
}

// log(2 pi).
const double kLog2Pi = std::log(2.0 * std::numbers::pi);

// log(N(u; v, s2 I_k) / 2 + N(u; -v, s2 I_k) / 2) for vectors u, v of k
// entries, given near = min(||u - v||^2, ||u + v||^2) and inner = <u, v>:
// the nearer mean's term times 1 + exp(-2 |inner| / s2), so that nothing
// overflows. The GMM's density (k = d) and the MRM's (k = 1).
double SymmetricMixtureLogDensity(double near, double inner, double s2, Eigen::Index k) {
  return -0.5 * static_cast<double>(k) * (kLog2Pi + std::log(s2)) - near / (2.0 * s2) +
         std::log1p(std::exp(-2.0 * std::abs(inner) / s2)) - std::log(2.0);
}

// log N(y; <x_obs, beta>, sigma^2 + ||beta_missing||^2) of RMC record i.
double RmcLogDensity(const GradientEmData& data, Eigen::Index i, const Eigen::VectorXd& beta,
                     double s2) {
  const Eigen::VectorXd missing =
      Eigen::VectorXd::Ones(data.d()) - data.observed.row(i).transpose();
  const double variance = s2 + missing.dot(beta.cwiseProduct(beta));
  const double residual = data.y(i) - data.x.row(i).dot(beta);
  return -0.5 * (kLog2Pi + std::log(variance)) - residual * residual / (2.0 * variance);
}

}  // namespace

constexpr internal::EnumName<GradientEmModel> kModelNames[] = {
    {GradientEmModel::kGmm, "gmm"}, {GradientEmModel::kMrm, "mrm"}, {GradientEmModel::kRmc, "rmc"}};
constexpr internal::EnumName<GradientEmMethod> kMethodNames[] = {
    {GradientEmMethod::kDp, "dp"},
    {GradientEmMethod::kClipped, "clipped"},
    {GradientEmMethod::kDpEm, "dp-em"},
    {GradientEmMethod::kNonPrivate, "nonprivate"}};
constexpr internal::EnumName<NoiseCalibrationRule> kCalibrationNames[] = {
    {NoiseCalibrationRule::kAccountant, "accountant"},
    {NoiseCalibrationRule::kPaperZcdp, "paper"}};

std::string_view GradientEmModelName(GradientEmModel m) {
  return internal::NameOf(kModelNames, m);
}

std::string_view GradientEmMethodName(GradientEmMethod m) {
  return internal::NameOf(kMethodNames, m);
}

std::string_view NoiseCalibrationRuleName(NoiseCalibrationRule r) {
  return internal::NameOf(kCalibrationNames, r);
}

StatusOr<GradientEmModel> ParseGradientEmModel(std::string_view name) {
  return internal::ParseName(kModelNames, name, "model");
}

StatusOr<GradientEmMethod> ParseGradientEmMethod(std::string_view name) {
  return internal::ParseName(kMethodNames, name, "method");
}

StatusOr<NoiseCalibrationRule> ParseNoiseCalibrationRule(std::string_view name) {
  return internal::ParseName(kCalibrationNames, name, "calibration");
}

Status GradientEmData::Validate() const {
  if (x.rows() < 1 || x.cols() < 1) return InvalidArgumentError("the data is empty");
  if (!x.allFinite()) return InvalidArgumentError("the data holds NaN or infinite values");
  const bool needs_y = model != GradientEmModel::kGmm;
  if (needs_y && y.size() != x.rows()) {
    return InvalidArgumentError("the model needs one response y per record");
  }
  if (needs_y && !y.allFinite()) return InvalidArgumentError("a response y is not finite");
  if (model != GradientEmModel::kRmc) return OkStatus();
  if (observed.rows() != x.rows() || observed.cols() != x.cols()) {
    return InvalidArgumentError("the missing-covariate model needs an n x d observed mask");
  }
  for (Eigen::Index i = 0; i < observed.rows(); ++i) {
    for (Eigen::Index j = 0; j < observed.cols(); ++j) {
      const double v = observed(i, j);
      if (v != 0.0 && v != 1.0) {
        return InvalidArgumentError("observed-mask entries must be 0 or 1 (record " +
                                    std::to_string(i + 1) + ")");
      }
    }
  }
  return OkStatus();
}

// Appendix C, eq. (23) (GMM), (24) (MRM), (25) (RMC).
StatusOr<DataMatrix> PerRecordGradients(const GradientEmData& data,
                                        const Eigen::VectorXd& beta, double sigma) {
  DPEM_RETURN_IF_ERROR(CheckBeta(data, beta, sigma));
  DataMatrix g(data.n(), data.d());
  internal::GradientRows(data, beta, sigma, 0, g);
  return g;
}

// Appendix I: M_n(beta) = (1/n) sum_i (2 w_beta(y_i) - 1) y_i.
StatusOr<DataMatrix> PerRecordGmmEmMaps(const GradientEmData& data,
                                        const Eigen::VectorXd& beta, double sigma) {
  if (data.model != GradientEmModel::kGmm) {
    return InvalidArgumentError("DP EM (Algorithm 3) is defined for the GMM only");
  }
  DPEM_RETURN_IF_ERROR(CheckBeta(data, beta, sigma));
  DataMatrix f(data.n(), data.d());
  internal::GmmEmMapRows(data, beta, sigma, 0, f);
  return f;
}

StatusOr<Eigen::VectorXd> GradientEmLogLikelihoods(const GradientEmData& data,
                                                   const Eigen::VectorXd& beta, double sigma) {
  DPEM_RETURN_IF_ERROR(CheckBeta(data, beta, sigma));
  const double s2 = sigma * sigma;
  Eigen::VectorXd out(data.n());
  for (Eigen::Index i = 0; i < data.n(); ++i) {
    switch (data.model) {
      case GradientEmModel::kGmm: {
        const auto x = data.x.row(i);
        const double near = std::min((x - beta.transpose()).squaredNorm(),
                                     (x + beta.transpose()).squaredNorm());
        out(i) = SymmetricMixtureLogDensity(near, x.dot(beta), s2, data.d());
        break;
      }
      case GradientEmModel::kMrm: {
        const double m = data.x.row(i).dot(beta), y = data.y(i);
        const double gap = std::abs(y) - std::abs(m);
        out(i) = SymmetricMixtureLogDensity(gap * gap, y * m, s2, 1);
        break;
      }
      case GradientEmModel::kRmc:
        out(i) = RmcLogDensity(data, i, beta, s2);
        break;
    }
  }
  return out;
}

}  // namespace dpem

namespace dpem::internal {

void GradientRows(const GradientEmData& data, const Eigen::VectorXd& beta, double sigma,
                  Eigen::Index first, DataMatrix& g) {
  for (Eigen::Index r = 0; r < g.rows(); ++r) {
    const Eigen::Index i = first + r;
    const Eigen::VectorXd x = data.x.row(i).transpose();
    switch (data.model) {
      case GradientEmModel::kGmm:
        g.row(r) = (TwoWMinusOne(beta.dot(x), sigma) * x - beta).transpose();
        break;
      case GradientEmModel::kMrm: {
        const double y = data.y(i);
        g.row(r) = (TwoWMinusOne(y * beta.dot(x), sigma) * y * x - x * x.dot(beta)).transpose();
        break;
      }
      case GradientEmModel::kRmc: {
        // grad = y m - K beta with K = E[x x^T | x_obs, y] = m m^T + Cov, and
        // Cov the conditional covariance of the missing block:
        // diag(1 - z) - b b^T / (sigma^2 + ||b||^2), b = (1 - z) (.) beta.
        const Eigen::VectorXd z = data.observed.row(i).transpose();
        const double y = data.y(i);
        const Eigen::VectorXd m = RmcConditionalMean(x, z, y, beta, sigma);
        const Eigen::VectorXd b = (Eigen::VectorXd::Ones(z.size()) - z).cwiseProduct(beta);
        const double denominator = sigma * sigma + b.squaredNorm();
        const Eigen::VectorXd k_beta =
            m * m.dot(beta) + b - b * (b.dot(beta) / denominator);
        g.row(r) = (y * m - k_beta).transpose();
        break;
      }
    }
  }
}

void GmmEmMapRows(const GradientEmData& data, const Eigen::VectorXd& beta, double sigma,
                  Eigen::Index first, DataMatrix& f) {
  for (Eigen::Index r = 0; r < f.rows(); ++r) {
    f.row(r) = TwoWMinusOne(data.x.row(first + r).dot(beta), sigma) * data.x.row(first + r);
  }
}

}  // namespace dpem::internal
