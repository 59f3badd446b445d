// The (private) factor analysis fit: one Analyze Gauss release of the second
// moment, then EM as post-processing (dpem/models/factor_analysis.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/models/factor_analysis.h"
#include "dpem/data/row_source.h"
#include "engine/exact_sum.h"
#include "models/factor_analysis_internal.h"
#include "internal/guarantee.h"

namespace dpem {
namespace {

// Releases T = sum u u^T through ReleaseFaSecondMoment, and certifies the
// ledger's one release (no composition) for the sampling it records
// (SingleGaussianEpsilon: the Renyi conversion for discrete noise).
StatusOr<Eigen::MatrixXd> ReleaseAndCertify(const RowSource& unit, const FaFitOptions& o,
                                            const Engine& engine, Generator& gen,
                                            FaGuarantee& g) {
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd t, ReleaseFaSecondMoment(unit, o.epsilon, o.delta,
                                                                 engine, gen, g.ledger));
  if (g.ledger.size() != 1) return InternalError("the fit must make exactly one release");
  const Release& r = g.ledger.releases().front();
  g.noise_multiplier = r.NoiseMultiplier();
  DPEM_ASSIGN_OR_RETURN(g.epsilon, SingleGaussianEpsilon(g.noise_multiplier, o.delta, r.sampling));
  if (g.epsilon > o.epsilon) {
    return InternalError("the release costs more than the target epsilon");
  }
  return t;
}

// sum_i u_i u_i^T (d x d), by symmetric rank updates per block on the
// engine's threads (merged in thread order), and the largest squared row norm.
struct SecondMoment {
  Eigen::MatrixXd sum;
  double largest_squared_norm = 0.0;
};

// Each block's rank update starts from zero and is summed exactly
// (engine/exact_sum.h); the strict upper triangle stays zero until the end.
StatusOr<SecondMoment> SecondMomentSum(const RowSource& unit, const Engine& engine) {
  const Eigen::Index d = unit.cols();
  std::vector<SecondMoment> parts(static_cast<size_t>(engine.threads()),
                                  SecondMoment{Eigen::MatrixXd::Zero(d, d), 0.0});
  std::vector<internal::ExactSum> exact(parts.size(), internal::ExactSum(d * d));
  const auto released = [](SecondMoment& p) {
    return std::vector<internal::StatisticArray>{{p.sum.data(), p.sum.size()}};
  };
  DPEM_RETURN_IF_ERROR(engine.ForEachBlock(
      unit, d, [&](int thread, const RowBlock& block, Eigen::Index) {
        SecondMoment& p = parts[static_cast<size_t>(thread)];
        p.sum.selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
        exact[static_cast<size_t>(thread)].FoldAndZero(released(p));
        p.largest_squared_norm =
            std::max(p.largest_squared_norm, block.rowwise().squaredNorm().maxCoeff());
        return OkStatus();
      }));
  SecondMoment total = std::move(parts[0]);
  for (size_t t = 1; t < parts.size(); ++t) {
    total.largest_squared_norm = std::max(total.largest_squared_norm, parts[t].largest_squared_norm);
  }
  internal::MergeExactSums(exact).WriteTo(released(total));
  total.sum.triangularView<Eigen::StrictlyUpper>() = total.sum.transpose();
  return total;
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
  if (unit.rows() == 0 || unit.cols() == 0 || !unit.allFinite()) {
    return InvalidArgumentError("the released records must be finite and in the unit ball");
  }
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(unit));
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create({1, 0}));
  return ReleaseFaSecondMoment(source, epsilon, delta, engine, gen, ledger);
}

StatusOr<Eigen::MatrixXd> ReleaseFaSecondMoment(const RowSource& unit, double epsilon,
                                                double delta, const Engine& engine,
                                                Generator& gen, PrivacyLedger& ledger) {
  if (!(epsilon > 0.0 && std::isfinite(epsilon)) || !(delta > 0.0 && delta < 1.0)) {
    return InvalidArgumentError("the release needs finite epsilon > 0 and delta in (0, 1)");
  }
  if (unit.rows() == 0 || unit.cols() == 0) {
    return InvalidArgumentError("the released records must be finite and in the unit ball");
  }
  const NoiseSpec spec_sampling;  // The default sampling: discrete.
  DPEM_ASSIGN_OR_RETURN(const double z,
                        CalibrateSingleGaussian(epsilon, delta, spec_sampling.sampling));
  const NoiseSpec spec{MechanismKind::kGaussian, kFaSecondMomentSensitivity, z,
                       "second moment sum_i u_i u_i^T", spec_sampling.sampling};
  DPEM_ASSIGN_OR_RETURN(SecondMoment t, SecondMomentSum(unit, engine));
  if (!(t.largest_squared_norm <= 1.0)) {  // Checked before anything is drawn.
    return InvalidArgumentError("the released records must be finite and in the unit ball");
  }
  DPEM_RETURN_IF_ERROR(ReleaseSymmetric(t.sum, spec, gen, ledger));
  return std::move(t.sum);
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
  DPEM_ASSIGN_OR_RETURN(const MatrixRowSource source, MatrixRowSource::Borrow(x));
  return FitFactorAnalysis(source, options, gen);
}

// Row sources are checked for non-finite values when they are opened.
StatusOr<FaFit> FitFactorAnalysis(const RowSource& x, const FaFitOptions& options,
                                  Generator& gen) {
  DPEM_RETURN_IF_ERROR(options.Validate());
  if (x.rows() == 0 || x.cols() == 0) return InvalidArgumentError("the data is empty");
  if (options.em.factors > x.cols()) {
    return InvalidArgumentError("factors L = " + std::to_string(options.em.factors) +
                                " exceeds the dimension d = " + std::to_string(x.cols()));
  }
  DPEM_ASSIGN_OR_RETURN(const Engine engine, Engine::Create(options.engine));
  FaFit fit;
  fit.guarantee = NewGuarantee(options);
  DPEM_ASSIGN_OR_RETURN(fit.domain, ResolveFitDomain(x, options.domain, options.IsPrivate(),
                                                     &fit.guarantee.void_reasons));
  internal::AppendSeededGeneratorVoidReason(gen, options.IsPrivate(),
                                            fit.guarantee.void_reasons);
  fit.guarantee.guarantee_void = !fit.guarantee.void_reasons.empty();
  DPEM_ASSIGN_OR_RETURN(const UnitBallRowSource unit, UnitBallRowSource::Create(x, fit.domain));
  const double n = static_cast<double>(x.rows());
  FaParameters unit_params;
  if (options.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd t,
                          ReleaseAndCertify(unit, options, engine, gen, fit.guarantee));
    internal::Eigenpairs eig;  // One decomposition: the floor and the start.
    DPEM_ASSIGN_OR_RETURN(const Eigen::MatrixXd s,
                          internal::FloorEigenvalues(t / n, options.eigenvalue_floor, &eig));
    DPEM_ASSIGN_OR_RETURN(unit_params, internal::FitFaWithEigenpairs(s, eig, options.em));
  } else {
    DPEM_ASSIGN_OR_RETURN(const SecondMoment t, SecondMomentSum(unit, engine));
    DPEM_ASSIGN_OR_RETURN(unit_params, FitFaToSecondMoment(t.sum / n, options.em));
  }
  fit.parameters = ToOriginalUnits(unit_params, fit.domain);
  fit.n = x.rows();
  fit.iterations = options.em.iterations;
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
