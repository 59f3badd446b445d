// Gaussian mixture parameters: names, validation, statistics arithmetic,
// likelihood, prediction, sampling and rescaling.
#include "dpem/models/gmm/gmm.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "dpem/random/samplers.h"
#include "internal/enum_names.h"

namespace dpem {
namespace {

std::string Str(Eigen::Index i) { return std::to_string(i); }

// Shapes and finiteness of weights and means; the simplex constraint.
Status ValidateWeightsAndMeans(const GmmParameters& p) {
  const Eigen::Index k = p.components();
  if (k < 1) return InvalidArgumentError("a mixture needs >= 1 component");
  if (p.dimension() < 1) return InvalidArgumentError("dimension must be >= 1");
  if (p.means.rows() != k) {
    return InvalidArgumentError("means have " + Str(p.means.rows()) +
                                " rows, weights " + Str(k));
  }
  if (!p.weights.allFinite() || !p.means.allFinite()) {
    return InvalidArgumentError("weights or means contain a non-finite entry");
  }
  if (p.weights.minCoeff() < 0) {
    return InvalidArgumentError("weights must be non-negative");
  }
  if (std::fabs(p.weights.sum() - 1.0) > kWeightSumTolerance) {
    return InvalidArgumentError("weights must sum to 1");
  }
  return OkStatus();
}

// Symmetry and the structure of `type` for one covariance.
Status ValidateStructure(const Eigen::MatrixXd& cov, CovarianceType type) {
  const double scale = cov.cwiseAbs().maxCoeff();
  const double tol = kCovarianceStructureTolerance * scale;
  if ((cov - cov.transpose()).cwiseAbs().maxCoeff() > tol) {
    return InvalidArgumentError("is not symmetric");
  }
  if (type == CovarianceType::kFull) return OkStatus();
  const Eigen::MatrixXd off = cov - Eigen::MatrixXd(cov.diagonal().asDiagonal());
  if (!off.isZero(0.0)) return InvalidArgumentError("is not diagonal");
  if (type == CovarianceType::kSpherical &&
      cov.diagonal().maxCoeff() - cov.diagonal().minCoeff() > tol) {
    return InvalidArgumentError("is not a multiple of the identity");
  }
  return OkStatus();
}

Status ValidateCovariance(const Eigen::MatrixXd& cov, Eigen::Index d,
                          CovarianceType type) {
  if (cov.rows() != d || cov.cols() != d) {
    return InvalidArgumentError("is not " + Str(d) + " x " + Str(d));
  }
  if (!cov.allFinite()) return InvalidArgumentError("has a non-finite entry");
  DPEM_RETURN_IF_ERROR(ValidateStructure(cov, type));
  Eigen::LLT<Eigen::MatrixXd> llt(cov);
  if (llt.info() != Eigen::Success) {
    return InvalidArgumentError("is not positive definite");
  }
  return OkStatus();
}

// The component of one draw: the first k whose cumulative weight exceeds u,
// falling back on the last component of positive weight (rounding).
Eigen::Index PickComponent(const Eigen::VectorXd& cumulative, double u,
                           Eigen::Index last_positive) {
  for (Eigen::Index k = 0; k < cumulative.size(); ++k) {
    if (u < cumulative(k)) return k;
  }
  return last_positive;
}

}  // namespace

constexpr internal::EnumName<CovarianceType> kCovarianceNames[] = {
    {CovarianceType::kFull, "full"},
    {CovarianceType::kDiagonal, "diag"},
    {CovarianceType::kSpherical, "spherical"}};
constexpr internal::EnumName<Estimator> kEstimatorNames[] = {{Estimator::kMle, "mle"},
                                                             {Estimator::kMap, "map"}};

std::string_view CovarianceTypeName(CovarianceType type) {
  return internal::NameOf(kCovarianceNames, type);
}

StatusOr<CovarianceType> ParseCovarianceType(std::string_view name) {
  return internal::ParseName(kCovarianceNames, name, "covariance type");
}

std::string_view EstimatorName(Estimator estimator) {
  return internal::NameOf(kEstimatorNames, estimator);
}

StatusOr<Estimator> ParseEstimator(std::string_view name) {
  return internal::ParseName(kEstimatorNames, name, "estimator");
}

Status ValidateParameters(const GmmParameters& params) {
  DPEM_RETURN_IF_ERROR(ValidateWeightsAndMeans(params));
  if (static_cast<Eigen::Index>(params.covariances.size()) !=
      params.components()) {
    return InvalidArgumentError("expected " + Str(params.components()) +
                                " covariances, got " +
                                Str(params.covariances.size()));
  }
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    const Status s = ValidateCovariance(params.covariances[k],
                                        params.dimension(), params.type);
    if (!s.ok()) {
      return InvalidArgumentError("covariance " + Str(k) + " (" +
                                  std::string(CovarianceTypeName(params.type)) +
                                  ") " + s.message());
    }
  }
  return OkStatus();
}

Status GmmStatistics::Add(const GmmStatistics& other) {
  if (counts.size() == 0 && n == 0) {
    *this = other;
    return OkStatus();
  }
  const bool match =
      type == other.type && counts.size() == other.counts.size() &&
      sums.rows() == other.sums.rows() && sums.cols() == other.sums.cols() &&
      second_full.size() == other.second_full.size() &&
      second_diag.rows() == other.second_diag.rows() &&
      second_diag.cols() == other.second_diag.cols() &&
      second_trace.size() == other.second_trace.size();
  bool full_match = match;
  for (size_t k = 0; full_match && k < second_full.size(); ++k) {
    full_match = second_full[k].rows() == other.second_full[k].rows() &&
                 second_full[k].cols() == other.second_full[k].cols();
  }
  if (!full_match) {
    return InvalidArgumentError("statistics to add differ in type or shape");
  }
  counts += other.counts;
  sums += other.sums;
  for (size_t k = 0; k < second_full.size(); ++k) {
    second_full[k] += other.second_full[k];
  }
  second_diag += other.second_diag;
  second_trace += other.second_trace;
  log_likelihood += other.log_likelihood;
  n += other.n;
  return OkStatus();
}

namespace {

// A record whose log-density is -inf or NaN (so far from every component that
// double precision overflows) has no defined responsibilities or score.
Status CheckFiniteLogDensities(const Eigen::VectorXd& log_density, Eigen::Index first_row) {
  for (Eigen::Index i = 0; i < log_density.size(); ++i) {
    if (!std::isfinite(log_density(i))) {
      return NumericalError("record " + std::to_string(first_row + i + 1) +
                            " has no finite log-density under the model (it is too far from "
                            "every component for double precision)");
    }
  }
  return OkStatus();
}

// Validates `params` and `x`, then calls visit(first row, log-densities,
// responsibilities) for each block of kEStepChunkRows rows of `x`, the
// log-densities all finite (NumericalError naming the record otherwise).
template <typename Visit>
Status ForEachResponsibilityBlock(const GmmParameters& params, const DataMatrix& x,
                                  Visit visit) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  DPEM_RETURN_IF_ERROR(ValidateData(params, x));
  Eigen::MatrixXd gamma;
  for (Eigen::Index start = 0; start < x.rows(); start += kEStepChunkRows) {
    const Eigen::Index rows = std::min(kEStepChunkRows, x.rows() - start);
    const Eigen::VectorXd ll = evaluator.Responsibilities(x.middleRows(start, rows), &gamma);
    DPEM_RETURN_IF_ERROR(CheckFiniteLogDensities(ll, start));
    visit(start, ll, gamma);
  }
  return OkStatus();
}

}  // namespace

StatusOr<double> MeanLogLikelihood(const GmmParameters& params,
                                   const DataMatrix& x) {
  if (x.rows() < 1) return InvalidArgumentError("no records");
  double total = 0;
  DPEM_RETURN_IF_ERROR(ForEachResponsibilityBlock(
      params, x, [&](Eigen::Index, const Eigen::VectorXd& ll, const Eigen::MatrixXd&) {
        total += ll.sum();
      }));
  return total / static_cast<double>(x.rows());
}

StatusOr<Eigen::VectorXd> LogDensities(const GmmParameters& params, const DataMatrix& x) {
  Eigen::VectorXd out(x.rows());
  DPEM_RETURN_IF_ERROR(ForEachResponsibilityBlock(
      params, x, [&](Eigen::Index start, const Eigen::VectorXd& ll, const Eigen::MatrixXd&) {
        out.segment(start, ll.size()) = ll;
      }));
  return out;
}

StatusOr<Eigen::VectorXi> Predict(const GmmParameters& params,
                                  const DataMatrix& x) {
  DPEM_ASSIGN_OR_RETURN(const GmmDensityEvaluator evaluator,
                        GmmDensityEvaluator::Create(params));
  DPEM_RETURN_IF_ERROR(ValidateData(params, x));
  Eigen::VectorXi labels(x.rows());
  Eigen::MatrixXd log_joint;
  for (Eigen::Index start = 0; start < x.rows(); start += kEStepChunkRows) {
    const Eigen::Index rows = std::min(kEStepChunkRows, x.rows() - start);
    evaluator.LogJoint(x.middleRows(start, rows), &log_joint);
    DPEM_RETURN_IF_ERROR(CheckFiniteLogDensities(log_joint.rowwise().maxCoeff(), start));
    for (Eigen::Index i = 0; i < rows; ++i) {
      Eigen::Index best = 0;
      log_joint.row(i).maxCoeff(&best);
      labels(start + i) = static_cast<int>(best);
    }
  }
  return labels;
}

StatusOr<DataMatrix> PredictProba(const GmmParameters& params,
                                  const DataMatrix& x) {
  DataMatrix proba(x.rows(), params.components());
  DPEM_RETURN_IF_ERROR(ForEachResponsibilityBlock(
      params, x,
      [&](Eigen::Index start, const Eigen::VectorXd& ll, const Eigen::MatrixXd& gamma) {
        proba.middleRows(start, ll.size()) = gamma;
      }));
  return proba;
}

StatusOr<DataMatrix> Sample(const GmmParameters& params, Eigen::Index n,
                            Generator& gen, Eigen::VectorXi* components) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  if (n < 0) return InvalidArgumentError("sample size must be >= 0");
  const Eigen::Index d = params.dimension();
  std::vector<Eigen::MatrixXd> factors;
  for (const Eigen::MatrixXd& cov : params.covariances) {
    factors.push_back(Eigen::LLT<Eigen::MatrixXd>(cov).matrixL());
  }
  Eigen::VectorXd cumulative(params.components());
  std::partial_sum(params.weights.begin(), params.weights.end(),
                   cumulative.begin());
  Eigen::Index last_positive = 0;
  for (Eigen::Index k = 0; k < params.components(); ++k) {
    if (params.weights(k) > 0) last_positive = k;
  }
  DataMatrix draws(n, d);
  if (components != nullptr) components->resize(n);
  Eigen::VectorXd z(d);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index k =
        PickComponent(cumulative, gen.UniformOpen01(), last_positive);
    if (components != nullptr) (*components)(i) = static_cast<int>(k);
    for (Eigen::Index j = 0; j < d; ++j) z(j) = SampleStandardNormal(gen);
    draws.row(i) = params.means.row(k) +
                   (factors[k].triangularView<Eigen::Lower>() * z).transpose();
  }
  return draws;
}

StatusOr<GmmParameters> ScaleParameters(const GmmParameters& params,
                                        double r) {
  DPEM_RETURN_IF_ERROR(ValidateParameters(params));
  if (!(r > 0) || !std::isfinite(r)) {
    return InvalidArgumentError("scale factor must be positive and finite");
  }
  GmmParameters scaled = params;
  scaled.means *= r;
  for (Eigen::MatrixXd& cov : scaled.covariances) cov *= r * r;
  return scaled;
}

}  // namespace dpem
