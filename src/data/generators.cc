// Synthetic data of wang-dp-gradient-em's models: see dpem/data/generators.h.
#include "dpem/data/generators.h"

#include <cmath>
#include <string>

#include "dpem/random/samplers.h"

namespace dpem {
namespace {

double Rademacher(Generator& gen) { return (gen() & 1u) ? 1.0 : -1.0; }

StatusOr<Eigen::VectorXd> TrueBeta(const GeneratorOptions& o, Generator& gen) {
  Eigen::VectorXd dir;
  do {
    DPEM_ASSIGN_OR_RETURN(dir, SampleGaussianVector(gen, o.d, 1.0));
  } while (!(dir.norm() > 0.0));
  return Eigen::VectorXd(dir / dir.norm() * (o.snr * o.sigma));
}

// One record of the model into row i.
Status DrawRecord(const GeneratorOptions& o, const Eigen::VectorXd& beta, Eigen::Index i,
                  Generator& gen, GradientEmData& out) {
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd noise_d, SampleGaussianVector(gen, o.d, o.sigma));
  if (o.model == GradientEmModel::kGmm) {
    out.x.row(i) = (Rademacher(gen) * beta + noise_d).transpose();
    return OkStatus();
  }
  DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd x, SampleGaussianVector(gen, o.d, 1.0));
  const double v = noise_d(0);  // N(0, sigma^2)
  if (o.model == GradientEmModel::kMrm) {
    out.x.row(i) = x.transpose();
    out.y(i) = Rademacher(gen) * beta.dot(x) + v;
    return OkStatus();
  }
  out.y(i) = beta.dot(x) + v;
  for (Eigen::Index j = 0; j < o.d; ++j) {
    const bool observed = !(gen.UniformOpen01() < o.missing_prob);
    out.observed(i, j) = observed ? 1.0 : 0.0;
    out.x(i, j) = observed ? x(j) : 0.0;
  }
  return OkStatus();
}

}  // namespace

Status GeneratorOptions::Validate() const {
  if (n < 1) return InvalidArgumentError("n must be >= 1");
  if (d < 1) return InvalidArgumentError("d must be >= 1");
  if (!(snr > 0.0 && std::isfinite(snr))) return InvalidArgumentError("snr must be finite and > 0");
  if (!(sigma > 0.0 && std::isfinite(sigma))) {
    return InvalidArgumentError("sigma must be finite and > 0");
  }
  if (!(missing_prob >= 0.0 && missing_prob < 1.0)) {
    return InvalidArgumentError("missing probability must be in [0, 1)");
  }
  if (missing_prob > 0.0 && model != GradientEmModel::kRmc) {
    return InvalidArgumentError("a missing probability applies to the rmc model only");
  }
  return OkStatus();
}

StatusOr<GeneratedData> GenerateGradientEmData(const GeneratorOptions& o, Generator& gen) {
  DPEM_RETURN_IF_ERROR(o.Validate());
  GeneratedData g;
  g.sigma = o.sigma;
  DPEM_ASSIGN_OR_RETURN(g.beta, TrueBeta(o, gen));
  g.data.model = o.model;
  g.data.x.resize(o.n, o.d);
  if (o.model != GradientEmModel::kGmm) g.data.y.resize(o.n);
  if (o.model == GradientEmModel::kRmc) g.data.observed.resize(o.n, o.d);
  for (Eigen::Index i = 0; i < o.n; ++i) {
    DPEM_RETURN_IF_ERROR(DrawRecord(o, g.beta, i, gen, g.data));
  }
  return g;
}

DataMatrix ToDataMatrix(const GradientEmData& data) {
  const Eigen::Index n = data.n(), d = data.d();
  if (data.model == GradientEmModel::kGmm) return data.x;
  const Eigen::Index cols = data.model == GradientEmModel::kMrm ? 1 + d : 1 + 2 * d;
  DataMatrix m(n, cols);
  m.col(0) = data.y;
  m.middleCols(1, d) = data.x;
  if (data.model == GradientEmModel::kRmc) m.rightCols(d) = data.observed;
  return m;
}

StatusOr<GradientEmData> FromDataMatrix(GradientEmModel model, const DataMatrix& m) {
  GradientEmData data;
  data.model = model;
  const Eigen::Index cols = m.cols();
  if (model == GradientEmModel::kGmm) {
    data.x = m;
  } else if (model == GradientEmModel::kMrm) {
    if (cols < 2) return InvalidArgumentError("mrm data needs columns y, x_1..x_d (>= 2)");
    data.y = m.col(0);
    data.x = m.rightCols(cols - 1);
  } else {
    if (cols < 3 || cols % 2 == 0) {
      return InvalidArgumentError("rmc data needs columns y, x_1..x_d, z_1..z_d (2d + 1), got " +
                                  std::to_string(cols));
    }
    const Eigen::Index d = (cols - 1) / 2;
    data.y = m.col(0);
    data.x = m.middleCols(1, d);
    data.observed = m.rightCols(d);
    // A missing covariate carries no value: zero it whatever the file says.
    data.x = data.x.cwiseProduct(data.observed);
  }
  DPEM_RETURN_IF_ERROR(data.Validate());
  return data;
}

}  // namespace dpem
