// The (private) factor analysis fit: one Analyze Gauss release of the second
// moment, then EM as post-processing (dpem/models/factor_analysis.h).
#include <cmath>
#include <limits>
#include <string>

#include "dpem/accounting/analytic_gaussian.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/models/factor_analysis.h"
#include "dpem/data/row_source.h"
#include "models/factor_analysis_internal.h"

namespace dpem {
namespace {

// Releases T = sum u u^T through ReleaseFaSecondMoment, and certifies the
// ledger's one release by the exact Gaussian profile (no composition).
StatusOr<Eigen::MatrixXd> ReleaseAndCertify(const DataMatrix& unit, const FaFitOptions& o,
                                            Generator& gen, FaGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd t,
                        ReleaseFaSecondMoment(unit, o.epsilon, o.delta, gen, g.ledger));
  if (g.ledger.size() != 1) return InternalError("the fit must make exactly one release");
  const Release& r = g.ledger.releases().front();
  g.noise_multiplier = r.NoiseMultiplier();
  DPEM_ASSIGN_OR_RETURN(g.epsilon, GaussianEpsilonForDelta(g.noise_multiplier, o.delta));
  if (g.epsilon > o.epsilon) {
    return InternalError("the release costs more than the target epsilon");
  }
  return t;
}

// sum_i u_i u_i^T (d x d), by a symmetric rank-N update.
Eigen::MatrixXd SecondMomentSum(const DataMatrix& unit) {
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(unit.cols(), unit.cols());
  t.selfadjointView<Eigen::Lower>().rankUpdate(unit.transpose());
  t.triangularView<Eigen::StrictlyUpper>() = t.transpose();
  return t;
}

FaGuarantee NewGuarantee(const FaFitOptions& o) {
  FaGuarantee g;
  g.is_private = o.IsPrivate();
  g.target_epsilon = o.epsilon;
  g.target_delta = o.delta;
  g.delta = o.delta;
  return g;
}

// Unit-ball parameters to original units: mu = c, W R, Psi R^2.
FaParameters ToOriginalUnits(FaParameters p, const DataDomain& d) {
  p.mean = d.center;
  p.loadings *= d.data_norm;
  p.noise_variances *= d.data_norm * d.data_norm;
  return p;
}

}  // namespace

StatusOr<Eigen::MatrixXd> ReleaseFaSecondMoment(const DataMatrix& unit, double epsilon,
                                                double delta, Generator& gen,
                                                PrivacyLedger& ledger) {
  if (!(epsilon > 0.0 && std::isfinite(epsilon)) || !(delta > 0.0 && delta < 1.0)) {
    return InvalidArgumentError("the release needs finite epsilon > 0 and delta in (0, 1)");
  }
  if (unit.rows() == 0 || unit.cols() == 0 || !unit.allFinite() ||
      unit.rowwise().norm().maxCoeff() > 1.0) {
    return InvalidArgumentError("the released records must be finite and in the unit ball");
  }
  DPEM_ASSIGN_OR_RETURN(const double z, CalibrateAnalyticGaussian(epsilon, delta));
  const NoiseSpec spec{MechanismKind::kGaussian, kFaSecondMomentSensitivity, z,
                       "second moment sum_i u_i u_i^T"};
  Eigen::MatrixXd t = SecondMomentSum(unit);
  DPEM_RETURN_IF_ERROR(ReleaseSymmetric(t, spec, gen, ledger));
  return t;
}

Status FaFitOptions::Validate() const {
  DPEM_RETURN_IF_ERROR(em.Validate());
  if (!(epsilon > 0.0)) {
    return InvalidArgumentError("epsilon must be > 0 (or infinity for non-private EM)");
  }
  if (!(eigenvalue_floor > 0.0 && std::isfinite(eigenvalue_floor))) {
    return InvalidArgumentError("eigenvalue floor must be finite and > 0");
  }
  if (!IsPrivate()) return OkStatus();
  if (!(delta > 0.0 && delta < 1.0)) return InvalidArgumentError("delta must be in (0, 1)");
  if (domain.from_data && !std::isfinite(domain.data_norm)) return OkStatus();
  return ValidateDomain(domain);
}

StatusOr<FaFit> FitFactorAnalysis(const DataMatrix& x, const FaFitOptions& options,
                                  Generator& gen) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (!x.allFinite()) return InvalidArgumentError("the data holds NaN or infinite values");
  if (options.em.factors > x.cols()) {
    return InvalidArgumentError("factors L = " + std::to_string(options.em.factors) +
                                " exceeds the dimension d = " + std::to_string(x.cols()));
  }
  FaFit fit;
  fit.guarantee = NewGuarantee(options);
  std::string void_reason;
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  DPEM_ASSIGN_OR_RETURN(fit.domain, ResolveFitDomain(source, options.domain,
                                                     options.IsPrivate(), &void_reason));
  if (!void_reason.empty()) {
    fit.guarantee.guarantee_void = true;
    fit.guarantee.void_reasons.push_back(void_reason);
  }
  DPEM_ASSIGN_OR_RETURN(const DataMatrix unit, MapToUnitBall(x, fit.domain, nullptr));
  const double n = static_cast<double>(x.rows());
  FaParameters unit_params;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd t,
                          ReleaseAndCertify(unit, options, gen, fit.guarantee));
    internal::Eigenpairs eig;  // One decomposition: the floor and the start.
    DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd s,
                          internal::FloorEigenvalues(t / n, options.eigenvalue_floor, &eig));
    DPEM_ASSIGN_OR_RETURN(unit_params, internal::FitFaWithEigenpairs(s, eig, options.em));
  } else {
    DPEM_ASSIGN_OR_RETURN(unit_params, FitFaToSecondMoment(SecondMomentSum(unit) / n, options.em));
  }
  fit.parameters = ToOriginalUnits(unit_params, fit.domain);
  fit.n = x.rows();
  fit.iterations = options.em.iterations;
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
