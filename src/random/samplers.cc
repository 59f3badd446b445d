// Continuous noise samplers. See samplers.h. Every draw comes from the
// Generator passed in; no <random> distribution or Eigen Random() is used, as
// their algorithms differ between standard libraries.
#include "dpem/random/samplers.h"

#include <Eigen/Cholesky>
#include <cmath>
#include <cstdio>
#include <string>

namespace dpem {
namespace {

// `value` formatted with enough digits to round-trip ("nan", "inf" too).
std::string FormatDouble(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// OK if `value` is finite and > 0; otherwise InvalidArgument naming
// `function` and `parameter`.
Status CheckPositiveFinite(const char* function, const char* parameter,
                          double value) {
  if (std::isfinite(value) && value > 0.0) return OkStatus();
  return InvalidArgumentError(std::string(function) + ": " + parameter +
                              " must be finite and > 0, got " +
                              FormatDouble(value));
}

// OK if `n` >= `minimum`; otherwise InvalidArgument.
Status CheckAtLeast(const char* function, const char* parameter,
                    Eigen::Index n, Eigen::Index minimum) {
  if (n >= minimum) return OkStatus();
  return InvalidArgumentError(std::string(function) + ": " + parameter +
                              " must be >= " + std::to_string(minimum) +
                              ", got " + std::to_string(n));
}

// Two independent N(0, 1) draws by Marsaglia's polar method. u and v are odd
// multiples of 2^-53, never 0, so s > 0; the s == 0 guard is defensive.
void StandardNormalPair(Generator& gen, double& z0, double& z1) {
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * gen.UniformOpen01() - 1.0;
    v = 2.0 * gen.UniformOpen01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double m = std::sqrt(-2.0 * std::log(s) / s);
  z0 = u * m;
  z1 = v * m;
}

// Fills `out` with i.i.d. N(0, stddev^2) draws, two per polar-method pair.
void FillGaussian(Generator& gen, double stddev, double* out, Eigen::Index n) {
  double z0 = 0.0;
  double z1 = 0.0;
  Eigen::Index i = 0;
  for (; i + 1 < n; i += 2) {
    StandardNormalPair(gen, z0, z1);
    out[i] = stddev * z0;
    out[i + 1] = stddev * z1;
  }
  if (i < n) out[i] = stddev * SampleStandardNormal(gen);
}

// Gamma(shape, 1) for shape >= 1: Marsaglia and Tsang (2000), "A simple
// method for generating gamma variables", ACM TOMS 26(3).
double StandardGammaAtLeastOne(Generator& gen, double shape) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = SampleStandardNormal(gen);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = gen.UniformOpen01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Gamma(shape, 1) for any shape > 0. For shape < 1, Gamma(shape + 1) times
// U^(1/shape) (Marsaglia and Tsang, section 6); for very small shapes the
// result may underflow to 0, the nearest double to the true tiny value.
double StandardGammaUnchecked(Generator& gen, double shape) {
  if (shape >= 1.0) return StandardGammaAtLeastOne(gen, shape);
  const double g = StandardGammaAtLeastOne(gen, shape + 1.0);
  return g * std::exp(std::log(gen.UniformOpen01()) / shape);
}

// Validates a Wishart scale matrix: square, d >= 1, finite, symmetric to a
// relative tolerance. Positive definiteness is checked by the caller's LLT.
Status CheckWishartScale(const Eigen::MatrixXd& scale) {
  constexpr char kFn[] = "SampleWishart";
  if (scale.rows() != scale.cols() || scale.rows() < 1) {
    return InvalidArgumentError(
        std::string(kFn) + ": scale must be a non-empty square matrix, got " +
        std::to_string(scale.rows()) + "x" + std::to_string(scale.cols()));
  }
  if (!scale.allFinite()) {
    return InvalidArgumentError(std::string(kFn) +
                                ": scale must have only finite entries");
  }
  const double tolerance = 1e-10 * scale.cwiseAbs().maxCoeff();
  if ((scale - scale.transpose()).cwiseAbs().maxCoeff() > tolerance) {
    return InvalidArgumentError(
        std::string(kFn) +
        ": scale must be symmetric (to relative tolerance 1e-10)");
  }
  return OkStatus();
}

// The Bartlett factor A: lower triangular, A_ii = sqrt(chi2(dof - i)),
// A_ij ~ N(0, 1) below the diagonal. Requires dof > d - 1.
Eigen::MatrixXd BartlettFactor(Generator& gen, double dof, Eigen::Index d) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(d, d);
  for (Eigen::Index i = 0; i < d; ++i) {
    const double chi2 =
        2.0 * StandardGammaUnchecked(gen, 0.5 * (dof - static_cast<double>(i)));
    a(i, i) = std::sqrt(chi2);
    for (Eigen::Index j = 0; j < i; ++j) a(i, j) = SampleStandardNormal(gen);
  }
  return a;
}

// A vector of n draws of `function`: checks n (>= 0) and the noise scale
// named `scale_name` (finite, > 0), then lets `fill` write the n entries.
template <typename Fill>
StatusOr<Eigen::VectorXd> CheckedVector(const char* function, const char* scale_name,
                                        Eigen::Index n, double scale, Fill fill) {
  DPEM_RETURN_IF_ERROR(CheckAtLeast(function, "n", n, 0));
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite(function, scale_name, scale));
  Eigen::VectorXd out(n);
  fill(out);
  return out;
}

}  // namespace

double SampleStandardNormal(Generator& gen) {
  double z0 = 0.0;
  double z1 = 0.0;
  StandardNormalPair(gen, z0, z1);
  return z0;
}

StatusOr<double> SampleGaussian(Generator& gen, double stddev) {
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite("SampleGaussian", "stddev", stddev));
  return stddev * SampleStandardNormal(gen);
}

StatusOr<double> SampleLaplace(Generator& gen, double scale) {
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite("SampleLaplace", "scale", scale));
  return SampleLaplaceUnchecked(gen, scale);
}

double SampleLaplaceUnchecked(Generator& gen, double scale) {
  // u - 1/2 is exact (u is a multiple of 2^-54) and never 0.
  const double centred = gen.UniformOpen01() - 0.5;
  const double magnitude = -scale * std::log1p(-2.0 * std::fabs(centred));
  return centred < 0.0 ? -magnitude : magnitude;
}

StatusOr<double> SampleGamma(Generator& gen, double shape, double scale) {
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite("SampleGamma", "shape", shape));
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite("SampleGamma", "scale", scale));
  return scale * StandardGammaUnchecked(gen, shape);
}

StatusOr<Eigen::VectorXd> SampleGaussianVector(Generator& gen, Eigen::Index n,
                                               double stddev) {
  return CheckedVector("SampleGaussianVector", "stddev", n, stddev, [&](Eigen::VectorXd& out) {
    FillGaussian(gen, stddev, out.data(), n);
  });
}

StatusOr<Eigen::VectorXd> SampleLaplaceVector(Generator& gen, Eigen::Index n,
                                              double scale) {
  return CheckedVector("SampleLaplaceVector", "scale", n, scale, [&](Eigen::VectorXd& out) {
    for (Eigen::Index i = 0; i < n; ++i) out[i] = SampleLaplaceUnchecked(gen, scale);
  });
}

StatusOr<Eigen::MatrixXd> SampleSymmetricGaussianMatrix(Generator& gen,
                                                        Eigen::Index d,
                                                        double stddev) {
  constexpr char kFn[] = "SampleSymmetricGaussianMatrix";
  DPEM_RETURN_IF_ERROR(CheckAtLeast(kFn, "d", d, 1));
  DPEM_RETURN_IF_ERROR(CheckPositiveFinite(kFn, "stddev", stddev));
  Eigen::VectorXd upper(d * (d + 1) / 2);
  FillGaussian(gen, stddev, upper.data(), upper.size());
  Eigen::MatrixXd out(d, d);
  Eigen::Index k = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i <= j; ++i) {
      out(i, j) = upper[k++];
      out(j, i) = out(i, j);
    }
  }
  return out;
}

StatusOr<Eigen::MatrixXd> SampleWishart(Generator& gen, double dof,
                                        const Eigen::MatrixXd& scale) {
  DPEM_RETURN_IF_ERROR(CheckWishartScale(scale));
  const Eigen::Index d = scale.rows();
  if (!std::isfinite(dof) || !(dof > static_cast<double>(d - 1))) {
    return InvalidArgumentError(
        "SampleWishart: dof must be finite and > d - 1 = " +
        std::to_string(d - 1) + ", got " + FormatDouble(dof));
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(scale);
  if (llt.info() != Eigen::Success) {
    return InvalidArgumentError(
        "SampleWishart: scale must be positive definite (Cholesky failed)");
  }
  const Eigen::MatrixXd la = llt.matrixL() * BartlettFactor(gen, dof, d);
  const Eigen::MatrixXd product = la * la.transpose();
  // Mirror the lower triangle so that the result is exactly symmetric.
  Eigen::MatrixXd w = product.selfadjointView<Eigen::Lower>();
  return w;
}

}  // namespace dpem
