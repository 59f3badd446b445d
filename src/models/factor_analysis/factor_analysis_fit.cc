// The (private) factor analysis fit: one Analyze Gauss release of the second
// moment, then EM as post-processing (dpem/models/factor_analysis/factor_analysis.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpem/accounting/accountant.h"
#include "dpem/mechanisms/analyze_gauss.h"
#include "dpem/models/factor_analysis/factor_analysis.h"
#include "dpem/data/row_source.h"
#include "engine/exact_sum.h"
#include "engine/rank_combine.h"
#include "internal/unit_ball.h"
#include "models/factor_analysis/factor_analysis_internal.h"
#include "pipeline/fit_steps.h"

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

// Adds sum_i u_i u_i^T of `block` to the lower triangle of `sum`. Re-projects
// instead of refusing: every row goes through internal::ShrinkIntoUnitBall
// (the domain map's rounding, or a caller's row outside the ball, is scaled
// to norm 1 - 1e-12; a row whose norm overflows contributes 0). Nothing
// depends on the data but the rows' own contributions.
void AddSecondMoment(const RowBlock& block, Eigen::MatrixXd& sum, DataMatrix& projected) {
  const Eigen::VectorXd squared = block.rowwise().squaredNorm();
  if ((squared.array() <= internal::kInsideSquared).all()) {
    sum.selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
    return;
  }
  projected = block;
  for (Eigen::Index i = 0; i < projected.rows(); ++i) {
    internal::ShrinkIntoUnitBall(projected.row(i), squared(i));
  }
  sum.selfadjointView<Eigen::Lower>().rankUpdate(projected.transpose());
}

// One thread's share of the pass: its latest block partial (lower triangle;
// allocated at its first block) and the exact sum of its earlier ones
// (allocated at its second block).
struct SecondMomentWorker {
  Eigen::MatrixXd sum;
  bool unfolded = false;  // `sum` holds a partial not yet in `exact`.
  DataMatrix projected;
  internal::ExactSum exact;
};

// The lower triangle (what rankUpdate writes), column by column: half the
// memory and folding of the whole matrix.
std::vector<internal::StatisticArray> LowerTriangle(Eigen::MatrixXd& m) {
  std::vector<internal::StatisticArray> columns;
  columns.reserve(static_cast<size_t>(m.cols()));
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    columns.push_back({m.col(j).data() + j, m.rows() - j});
  }
  return columns;
}

void FoldPartial(SecondMomentWorker& w) {
  // d (d + 1) / 2 entries of 32 bytes each, 268 MB at d = 4096.
  if (w.exact.size() == 0) w.exact = internal::ExactSum(w.sum.rows() * (w.sum.rows() + 1) / 2);
  w.exact.FoldAndZero(LowerTriangle(w.sum));
  w.unfolded = false;
}

// The exact sum of the workers' partials, in the lower triangle of one
// worker's matrix. One partial in all (N <= 1024 rows: one block) is rounded
// to the quantum in place (SingleFoldValue: the same bits as an ExactSum of
// it, without the 268 MB of units at d = 4096); more are folded and merged.
// On a rank of a distributed fit, every rank's partials are folded and the
// ranks' exact sums added (rank_combine.h); a rank with no rows contributes
// an empty exact sum.
StatusOr<Eigen::MatrixXd> ExactTotal(std::vector<SecondMomentWorker>& workers,
                                     const RowSource& unit) {
  const Collective* c = unit.collective();
  if (!IsSingleProcess(c)) {
    const Eigen::Index d = unit.cols();
    internal::ExactSum local(d * (d + 1) / 2);
    for (SecondMomentWorker& w : workers) {
      if (w.unfolded) FoldPartial(w);
      if (w.exact.size() > 0) local.Add(w.exact);
    }
    Eigen::MatrixXd total = Eigen::MatrixXd::Zero(d, d);
    DPEM_RETURN_IF_ERROR(internal::WriteExactSumOverRanks(c, local, LowerTriangle(total)));
    return total;
  }
  int unfolded = 0;
  bool any_folded = false;
  for (const SecondMomentWorker& w : workers) {
    unfolded += w.unfolded ? 1 : 0;
    any_folded = any_folded || w.exact.size() > 0;
  }
  const auto has = [](const SecondMomentWorker& w) { return w.sum.size() > 0; };
  if (unfolded == 1 && !any_folded) {
    Eigen::MatrixXd total = std::move(std::find_if(workers.begin(), workers.end(), has)->sum);
    for (const internal::StatisticArray& column : LowerTriangle(total)) {
      for (Eigen::Index i = 0; i < column.second; ++i) {
        column.first[i] = internal::SingleFoldValue(column.first[i]);
      }
    }
    return total;
  }
  for (SecondMomentWorker& w : workers) {
    if (w.unfolded) FoldPartial(w);  // Leaves w.sum zero.
  }
  Eigen::MatrixXd total = std::move(std::find_if(workers.begin(), workers.end(), has)->sum);
  internal::MergeExactSums(workers, &SecondMomentWorker::exact).WriteTo(LowerTriangle(total));
  return total;
}

// sum_i u_i u_i^T (d x d), rows re-projected as AddSecondMoment says: each
// block's rank update starts from zero and is summed exactly
// (engine/exact_sum.h), so the sum is the same for any thread count and
// neighbours' sums differ by one block's partial; the strict upper triangle
// stays zero until the end. A thread folds its partial when it starts its
// next block, and the partials left at the end are folded then (or, if
// there is just one, rounded as its ExactSum would round it).
StatusOr<Eigen::MatrixXd> SecondMomentSum(const RowSource& unit, const Engine& engine) {
  const Eigen::Index d = unit.cols();
  // Blocks of 1024 rows (ChooseBlockRows(kFaRowDoubles)) rather than the
  // 64 that d doubles per row would give at d = 4096: every block pays a
  // fold of d (d + 1) / 2 entries into the exact sum, which costs about a
  // 64-row rank update's time.
  constexpr Eigen::Index kFaRowDoubles = 40;
  DPEM_ASSIGN_OR_RETURN(
      std::vector<SecondMomentWorker> workers,
      engine.Reduce<SecondMomentWorker>(
          unit, kFaRowDoubles, [](SecondMomentWorker&) {},
          [&](SecondMomentWorker& w, const RowBlock& block, Eigen::Index) {
        if (w.unfolded) FoldPartial(w);
        if (w.sum.size() == 0) w.sum = Eigen::MatrixXd::Zero(d, d);
        AddSecondMoment(block, w.sum, w.projected);
        w.unfolded = true;
        return OkStatus();
      }));
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd total, ExactTotal(workers, unit));
  total.triangularView<Eigen::StrictlyUpper>() = total.transpose();
  return total;
}

FaGuarantee NewGuarantee(const FaFitOptions& o) {
  FaGuarantee g;
  // The one release's epsilon is its exact Gaussian profile's
  // (ReleaseAndCertify); its model file names the Renyi curve it bounds.
  StartGuarantee(o.IsPrivate(), o.epsilon, o.delta, AccountantKind::kRdp, g);
  return g;
}

// Unit-ball parameters to original units: mu = c, W R, Psi R^2.
FaParameters ToOriginalUnits(FaParameters p, const DataDomain& d) {
  p.mean = d.center;
  p.loadings *= d.data_norm;
  p.noise_variances *= d.data_norm * d.data_norm;
  return p;
}

// The model of the unit-ball records: from the released second moment,
// its eigenvalues repaired (private), or from the exact one (plain); the
// number of EM iterations made goes to `iterations_run`.
StatusOr<FaParameters> FitInUnitBall(const internal::FitStart& start, const FaFitOptions& o,
                                     Generator& gen, FaGuarantee& g, int& iterations_run) {
  const double n = static_cast<double>(start.unit.rows());
  FaEmOptions em = o.em;
  if (em.threads == 0) em.threads = start.engine.threads();
  em.records = n;  // The tolerance is on the total log-likelihood (N is public).
  Eigen::MatrixXd s;  // T / N, divided in place (d x d: 128 MiB at d = 4096).
  if (!o.IsPrivate()) {
    DPEM_ASSIGN_OR_RETURN(s, SecondMomentSum(start.unit, start.engine));
    s /= n;
    DPEM_ASSIGN_OR_RETURN(const internal::Eigenpairs top,
                          internal::LeadingEigenpairs(s, em.factors, em));
    return internal::FitFaWithEigenpairs(s, top, em, &iterations_run);
  }
  DPEM_ASSIGN_OR_RETURN(s, ReleaseAndCertify(start.unit, o, start.engine, gen, g));
  s /= n;
  DPEM_ASSIGN_OR_RETURN(const internal::RepairedSpectrum repaired,
                        internal::RepairEigenvalues(s, o.eigenvalue_floor, o.eigenvalue_repair,
                                                    em, o.approximate_start));
  DPEM_ASSIGN_OR_RETURN(FaParameters p, internal::FitFaWithEigenpairs(s, repaired.top, em,
                                                                      &iterations_run));
  if (o.eigenvalue_repair == FaEigenvalueRepair::kShiftBack) {
    // The release's noise on one diagonal entry of S~ = T~ / N: public. The
    // ledger holds the second moment's release alone here (ReleaseAndCertify
    // checks it; a released domain's releases are composed in later).
    const double diagonal_noise = g.ledger.releases().back().noise_scale / n;
    internal::TakeShiftBack(p, repaired.shift,
                            std::max(em.variance_floor, o.variance_noise_floor * diagonal_noise));
  }
  return p;
}

}  // namespace

StatusOr<Eigen::MatrixXd> ReleaseFaSecondMoment(const DataMatrix& unit, double epsilon,
                                                double delta, Generator& gen,
                                                PrivacyLedger& ledger) {
  if (unit.rows() == 0 || unit.cols() == 0 || !unit.allFinite()) {
    return InvalidArgumentError("the released records must be finite (and are re-projected "
                                "into the unit ball)");
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
  if (unit.rows() == 0 || unit.cols() == 0) return InvalidArgumentError("no records to release");
  const NoiseSpec spec_sampling;  // The default sampling: discrete.
  DPEM_ASSIGN_OR_RETURN(const double z,
                        CalibrateSingleGaussian(epsilon, delta, spec_sampling.sampling));
  const NoiseSpec spec{MechanismKind::kGaussian, kFaSecondMomentSensitivity, z,
                       "second moment sum_i u_i u_i^T", spec_sampling.sampling};
  // Refuse, before the data is read, what the release would refuse after.
  DPEM_RETURN_IF_ERROR(CheckRelease(spec, unit.cols() * (unit.cols() + 1) / 2));
  DPEM_ASSIGN_OR_RETURN(Eigen::MatrixXd t, SecondMomentSum(unit, engine));
  DPEM_RETURN_IF_ERROR(ReleaseSymmetric(t, spec, gen, ledger, engine.threads()));
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
  if (eigenvalue_repair != FaEigenvalueRepair::kShiftBack &&
      eigenvalue_repair != FaEigenvalueRepair::kShift &&
      eigenvalue_repair != FaEigenvalueRepair::kFloor) {
    return InvalidArgumentError("eigenvalue repair must be kShiftBack, kShift or kFloor");
  }
  if (!(variance_noise_floor >= 0.0 && std::isfinite(variance_noise_floor))) {
    return InvalidArgumentError("variance noise floor must be finite and >= 0");
  }
  if (!IsPrivate()) return OkStatus();
  if (!(delta > 0.0 && delta < 1.0)) return InvalidArgumentError("delta must be in (0, 1)");
  if (domain.from_data && !std::isfinite(domain.data_norm)) return OkStatus();
  return ValidateModelDomain(domain);
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
  FaFit fit;
  DPEM_ASSIGN_OR_RETURN(const internal::FitStart start,
                        internal::BeginModelFit(x, options, NewGuarantee(options), gen, fit));
  DPEM_ASSIGN_OR_RETURN(const FaParameters unit_params,
                        FitInUnitBall(start, options, gen, fit.guarantee, fit.iterations_run));
  fit.parameters = ToOriginalUnits(unit_params, fit.domain);
  fit.n = x.rows();
  fit.iterations = options.em.iterations;
  fit.tolerance = options.em.tolerance;
  fit.seed = gen.seed();
  return fit;
}

}  // namespace dpem
