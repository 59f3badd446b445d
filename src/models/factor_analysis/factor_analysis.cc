// Factor analysis: densities, posterior means, sampling and EM on a second
// moment (dpem/models/factor_analysis/factor_analysis.h). The private fit is in
// factor_analysis_fit.cc.
#include "dpem/models/factor_analysis/factor_analysis.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "dpem/random/samplers.h"
#include "internal/symmetric_product.h"
#include "models/factor_analysis/factor_analysis_internal.h"

namespace dpem {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The L x L matrix M = I + W^T Psi^{-1} W, its Cholesky factor, and
// A = Psi^{-1} W (d x L): what every density and posterior needs.
struct Woodbury {
  Eigen::MatrixXd a;
  Eigen::LLT<Eigen::MatrixXd> m;
};

StatusOr<Woodbury> Factorise(const FaParameters& p) {
  Woodbury w;
  w.a = p.noise_variances.cwiseInverse().asDiagonal() * p.loadings;
  const Eigen::Index l = p.factors();
  w.m.compute(Eigen::MatrixXd::Identity(l, l) + p.loadings.transpose() * w.a);
  if (w.m.info() != Eigen::Success) {
    return NumericalError("factor analysis: I + W^T Psi^-1 W is not positive definite");
  }
  return w;
}

// log det(W W^T + Psi) = sum log psi + log det M (matrix determinant lemma).
double LogDetCovariance(const FaParameters& p, const Woodbury& w) {
  const Eigen::MatrixXd lm = w.m.matrixL();
  return p.noise_variances.array().log().sum() + 2.0 * lm.diagonal().array().log().sum();
}

Status CheckData(const FaParameters& p, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(ValidateFaParameters(p));
  if (x.rows() == 0) return InvalidArgumentError("the data has no rows");
  if (x.cols() != p.dimension()) {
    return InvalidArgumentError("the data has " + std::to_string(x.cols()) +
                                " columns but the model has dimension " +
                                std::to_string(p.dimension()));
  }
  if (!x.allFinite()) return InvalidArgumentError("the data holds NaN or infinite values");
  return OkStatus();
}

// The initial parameters from S's top L eigenpairs (probabilistic PCA).
FaParameters InitialParameters(const Eigen::MatrixXd& s, const internal::Eigenpairs& top,
                               const FaEmOptions& o) {
  const Eigen::Index d = s.rows();
  const Eigen::VectorXd values = top.values.head(o.factors);
  const double rest = s.trace() - values.sum();
  const double s2 = d > o.factors ? std::max(rest / static_cast<double>(d - o.factors), 0.0)
                                  : 0.0;
  FaParameters p;
  p.mean = Eigen::VectorXd::Zero(d);
  const Eigen::VectorXd scale = (values.array() - s2).cwiseMax(0.0).sqrt();
  p.loadings = top.vectors.leftCols(o.factors) * scale.asDiagonal();
  p.noise_variances = (s.diagonal() - p.loadings.rowwise().squaredNorm())
                          .cwiseMax(std::max(s2, o.variance_floor));
  return p;
}

// Parameters with what an EM iteration and the log-likelihood need of them:
// their Woodbury factors and SA = S Psi^{-1} W (d x L), the one product with
// the d x d matrix S.
struct EmState {
  FaParameters p;
  Woodbury w;
  Eigen::MatrixXd sa;
};

StatusOr<EmState> Prepare(FaParameters p, const Eigen::MatrixXd& s, int threads) {
  DPEM_ASSIGN_OR_RETURN(Woodbury w, Factorise(p));
  Eigen::MatrixXd sa = internal::SymmetricProduct(s, w.a, threads);
  return EmState{std::move(p), std::move(w), std::move(sa)};
}

// -(d log 2 pi + log det C + tr(C^-1 S)) / 2, where tr(C^-1 S) =
// sum S_ii / psi_i - tr(M^-1 A^T S A) (Woodbury), from S's diagonal and SA.
double SecondMomentLogLikelihood(const EmState& e, const Eigen::VectorXd& s_diagonal) {
  const double correction = e.w.m.solve(e.w.a.transpose() * e.sa).trace();
  const double trace = s_diagonal.cwiseQuotient(e.p.noise_variances).sum() - correction;
  const double d = static_cast<double>(e.p.dimension());
  return -0.5 * (d * std::log(2.0 * std::numbers::pi) + LogDetCovariance(e.p, e.w) + trace);
}

// One EM iteration on S (park2017 Sec. 6) from e's parameters, O(d L^2)
// given SA: S B^T = S A G, since B^T = A G^T and G is symmetric.
Status EmStep(const EmState& e, const Eigen::VectorXd& s_diagonal, double floor,
              FaParameters& next) {
  const Eigen::Index l = e.p.factors();
  const Eigen::MatrixXd g = e.w.m.solve(Eigen::MatrixXd::Identity(l, l));
  const Eigen::MatrixXd b = e.w.m.solve(e.w.a.transpose());  // G W^T Psi^-1, L x d.
  const Eigen::MatrixXd sb = e.sa * g;                        // S B^T, d x L.
  const Eigen::MatrixXd ezz = g + b * sb;                     // G + B S B^T.
  const Eigen::LLT<Eigen::MatrixXd> ezz_llt(ezz);
  if (ezz_llt.info() != Eigen::Success) {
    return NumericalError("factor analysis EM: G + B S B^T is not positive definite");
  }
  next = e.p;
  next.loadings = ezz_llt.solve(sb.transpose()).transpose();
  next.noise_variances =
      (s_diagonal - next.loadings.cwiseProduct(sb).rowwise().sum()).cwiseMax(floor);
  return OkStatus();
}

// Rotates W to orthogonal columns of decreasing norm with positive sums (W
// unchanged if the L x L eigen-solver fails: any rotation is the same model).
void Canonicalise(FaParameters& p) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(p.loadings.transpose() * p.loadings);
  if (eig.info() != Eigen::Success) return;
  Eigen::MatrixXd rotated = p.loadings * eig.eigenvectors().rowwise().reverse();
  for (Eigen::Index j = 0; j < rotated.cols(); ++j) {
    if (rotated.col(j).sum() < 0) rotated.col(j) *= -1.0;
  }
  p.loadings = rotated;
}

}  // namespace

Status ValidateFaParameters(const FaParameters& p) {
  const Eigen::Index d = p.dimension();
  if (d < 1 || p.factors() < 1 || p.factors() > d) {
    return InvalidArgumentError("factor analysis: the loadings must be d x L with 1 <= L <= d");
  }
  if (p.mean.size() != d || p.noise_variances.size() != d) {
    return InvalidArgumentError(
        "factor analysis: mean and noise variances must have one entry per dimension");
  }
  if (!p.mean.allFinite() || !p.loadings.allFinite() || !p.noise_variances.allFinite()) {
    return InvalidArgumentError("factor analysis: parameters must be finite");
  }
  if (!(p.noise_variances.array() > 0.0).all()) {
    return InvalidArgumentError("factor analysis: noise variances must be > 0");
  }
  return OkStatus();
}

namespace {

// The parts of each record's log-density under p, -0.5 (constant + x^T C^-1
// x) with x centred: x^T C^-1 x = x^T Psi^-1 x - ||L^-1 A^T x||^2 (Woodbury),
// `plain` the first term per record and `proj` the columns L^-1 A^T x.
struct DensityParts {
  Eigen::VectorXd plain;
  Eigen::MatrixXd proj;
  double constant = 0.0;  // d log(2 pi) + log det C.
};

StatusOr<DensityParts> ComputeDensityParts(const FaParameters& p, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(CheckData(p, x));
  DPEM_ASSIGN_OR_RETURN(const Woodbury w, Factorise(p));
  const Eigen::MatrixXd centred = (x.rowwise() - p.mean.transpose()).transpose();  // d x N
  DensityParts parts;
  parts.plain = (p.noise_variances.cwiseInverse().asDiagonal() * centred.cwiseAbs2()).colwise().sum();
  parts.proj = w.m.matrixL().solve(w.a.transpose() * centred);
  const double d = static_cast<double>(p.dimension());
  parts.constant = d * std::log(2.0 * std::numbers::pi) + LogDetCovariance(p, w);
  return parts;
}

}  // namespace

StatusOr<double> FaMeanLogLikelihood(const FaParameters& p, const DataMatrix& x) {
  DPEM_ASSIGN_OR_RETURN(const DensityParts parts, ComputeDensityParts(p, x));
  const double quad =
      (parts.plain.sum() - parts.proj.squaredNorm()) / static_cast<double>(x.rows());
  return -0.5 * (parts.constant + quad);
}

StatusOr<Eigen::VectorXd> FaLogDensities(const FaParameters& p, const DataMatrix& x) {
  DPEM_ASSIGN_OR_RETURN(const DensityParts parts, ComputeDensityParts(p, x));
  const Eigen::VectorXd quad = parts.plain - parts.proj.colwise().squaredNorm().transpose();
  return Eigen::VectorXd(-0.5 * (quad.array() + parts.constant));
}

StatusOr<double> FaSecondMomentLogLikelihood(const FaParameters& p, const Eigen::MatrixXd& s) {
  DPEM_RETURN_IF_ERROR(ValidateFaParameters(p));
  if (s.rows() != p.dimension() || s.cols() != p.dimension()) {
    return InvalidArgumentError("the second moment must be d x d");
  }
  DPEM_ASSIGN_OR_RETURN(const EmState e, Prepare(p, s, 0));
  return SecondMomentLogLikelihood(e, s.diagonal());
}

StatusOr<DataMatrix> FaTransform(const FaParameters& p, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(CheckData(p, x));
  DPEM_ASSIGN_OR_RETURN(const Woodbury w, Factorise(p));
  const Eigen::MatrixXd centred = (x.rowwise() - p.mean.transpose()).transpose();
  return DataMatrix(w.m.solve(w.a.transpose() * centred).transpose());
}

StatusOr<DataMatrix> FaSample(const FaParameters& p, Eigen::Index n, Generator& gen) {
  DPEM_RETURN_IF_ERROR(ValidateFaParameters(p));
  if (n < 1) return InvalidArgumentError("the number of samples must be >= 1");
  const Eigen::VectorXd sd = p.noise_variances.cwiseSqrt();
  DataMatrix out(n, p.dimension());
  for (Eigen::Index i = 0; i < n; ++i) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd z, SampleGaussianVector(gen, p.factors(), 1.0));
    DPEM_ASSIGN_OR_RETURN(const Eigen::VectorXd e, SampleGaussianVector(gen, p.dimension(), 1.0));
    out.row(i) = (p.mean + p.loadings * z + sd.cwiseProduct(e)).transpose();
  }
  return out;
}

Status FaEmOptions::Validate() const {
  if (factors < 1) return InvalidArgumentError("factors L must be >= 1");
  if (iterations < 1) return InvalidArgumentError("iterations J must be >= 1");
  if (!(variance_floor > 0.0 && std::isfinite(variance_floor))) {
    return InvalidArgumentError("variance floor must be finite and > 0");
  }
  if (!(tolerance >= 0.0 && std::isfinite(tolerance))) {
    return InvalidArgumentError("EM tolerance must be finite and >= 0");
  }
  if (!(records >= 1.0 && std::isfinite(records))) {
    return InvalidArgumentError("records must be finite and >= 1");
  }
  if (threads < 0) return InvalidArgumentError("threads must be >= 0 (0 = all cores)");
  if (dense_max_dimension < 0) return InvalidArgumentError("dense_max_dimension must be >= 0");
  return OkStatus();
}

StatusOr<FaParameters> FitFaToSecondMoment(const Eigen::MatrixXd& s, const FaEmOptions& o) {
  DPEM_RETURN_IF_ERROR(o.Validate());
  if (s.rows() != s.cols() || s.rows() == 0 || !s.allFinite()) {
    return InvalidArgumentError("the second moment must be a finite, non-empty square matrix");
  }
  if (o.factors > s.rows()) {
    return InvalidArgumentError("factors L = " + std::to_string(o.factors) +
                                " exceeds the dimension d = " + std::to_string(s.rows()));
  }
  DPEM_ASSIGN_OR_RETURN(const internal::Eigenpairs top,
                        internal::LeadingEigenpairs(s, o.factors, o));
  return internal::FitFaWithEigenpairs(s, top, o);
}

}  // namespace dpem

namespace dpem::internal {

StatusOr<FaParameters> FitFaWithEigenpairs(const Eigen::MatrixXd& s, const Eigenpairs& top,
                                           const FaEmOptions& o, int* iterations_run) {
  DPEM_RETURN_IF_ERROR(o.Validate());
  if (top.values.size() < o.factors || top.vectors.rows() != s.rows()) {
    return InvalidArgumentError("too few eigenpairs for the number of factors");
  }
  FaParameters p = InitialParameters(s, top, o);
  const Eigen::VectorXd s_diagonal = s.diagonal();
  // EM is post-processing of S (a release, for a private fit): a step that
  // fails or leaves the parameters non-finite (an ill-conditioned noisy S,
  // a tiny floor) ends EM with the last valid parameters instead of failing
  // the fit.
  StatusOr<EmState> state = Prepare(p, s, o.threads);
  double log_likelihood =
      state.ok() ? SecondMomentLogLikelihood(*state, s_diagonal) : -kInfinity;
  int run = 0;
  for (int it = 1; it <= o.iterations && state.ok(); ++it) {
    FaParameters next;
    if (!EmStep(*state, s_diagonal, o.variance_floor, next).ok() ||
        !ValidateFaParameters(next).ok()) {
      break;
    }
    p = next;
    run = it;
    if (it == o.iterations && !o.progress) break;  // No product left to need.
    state = Prepare(std::move(next), s, o.threads);
    if (!state.ok()) break;
    const double previous = std::exchange(log_likelihood,
                                          SecondMomentLogLikelihood(*state, s_diagonal));
    if (o.progress) o.progress(it, log_likelihood);
    // Converged (FaEmOptions::tolerance). Tolerance 0 runs all J: a gain
    // below 0 there is rounding at the optimum, not a reason to stop.
    if (o.tolerance > 0.0 && o.records * (log_likelihood - previous) < o.tolerance) break;
  }
  if (iterations_run != nullptr) *iterations_run = run;
  Canonicalise(p);
  return p;
}

}  // namespace dpem::internal
