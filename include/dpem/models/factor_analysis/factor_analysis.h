// Factor analysis, non-private and differentially private (park2017 Sec. 6).
//
// Model: x = mu + W z + e with z ~ N(0, I_L) and e ~ N(0, Psi), Psi diagonal,
// so x ~ N(mu, C) with C = W W^T + Psi. The mean mu is NOT estimated: it is
// the public centre c of the data domain (data/domain.h; the origin by
// default), as in park2017, whose model has no mean and whose statistic is the
// uncentred second moment. Pass a public centre (e.g. mid-range of the
// features) to model centred data; never a data mean (that voids the
// guarantee, see docs/privacy.md).
//
// Private fit (park2017 Sec. 6; docs/factor_analysis.md):
//   1. Records are clipped to the public ball ||x - c|| <= R and mapped to the
//      unit ball, u = (x - c) / R (MapToUnitBall).
//   2. ONE release: the second-moment sum T = sum_i u_i u_i^T by Analyze Gauss
//      (mechanisms/analyze_gauss.h, DTTZ 2014 Alg. 1; park2017 eq. 16-18),
//      with Frobenius sensitivity kFaSecondMomentSensitivity = sqrt(2) under
//      replace-one neighbours (proof below) and discrete Gaussian noise
//      calibrated to (eps, delta) through its Renyi curve
//      (CalibrateSingleGaussian; docs/accounting.md, "Discrete noise").
//      N is public, so S = T~ / N is post-processing.
//   3. Post-processing: S is repaired so that its eigenvalues are >=
//      eigenvalue_floor (by default shifted, S + c I, with c taken back out
//      of Psi after EM; or projected, the eigenvalues below the floor raised
//      to it: FaEigenvalueRepair), then EM runs on S alone for J iterations
//      (park2017's updates of W and Psi, Sec. 6), initialised from S's top L
//      eigenpairs. The data are never read again: EM costs no privacy.
//
// Sensitivity (replace-one, ||u||, ||v|| <= 1): T(D) - T(D') = u u^T - v v^T,
//   ||u u^T - v v^T||_F^2 = ||u||^4 + ||v||^4 - 2 (u . v)^2 <= 1 + 1 - 0 = 2,
// with equality for orthonormal u, v; so the Frobenius sensitivity is exactly
// sqrt(2) (R^2 sqrt(2) in the original units). The vec_upper norm Analyze
// Gauss needs is at most the Frobenius norm (analyze_gauss.h) and equals it at
// u = e_1, v = e_2 (a diagonal difference), so sqrt(2) is tight there too.
// (park2017 Sec. 3 uses 2 |T| / N = 2/N for the normalised moment, which is
// valid but sqrt(2) times looser.)
//
// Thread safety: all functions are reentrant; they use only their arguments.
#ifndef DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_H_
#define DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_H_

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dpem/accounting/guarantee.h"
#include "dpem/accounting/ledger.h"
#include "dpem/data/domain.h"
#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/engine/engine.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// Frobenius (and vec_upper L2) sensitivity of sum_i u_i u_i^T over the unit
// ball under replace-one neighbours (file comment).
inline constexpr double kFaSecondMomentSensitivity = 1.4142135623730951;  // sqrt(2)

// Parameters of a factor analysis model.
struct FaParameters {
  Eigen::VectorXd mean;             // mu, d entries.
  Eigen::MatrixXd loadings;         // W, d x L.
  Eigen::VectorXd noise_variances;  // diag(Psi), d entries, all > 0.

  Eigen::Index dimension() const { return loadings.rows(); }
  Eigen::Index factors() const { return loadings.cols(); }
};

// OK if the shapes agree (d >= 1, 1 <= L <= d), every entry is finite and
// every noise variance is > 0; InvalidArgument naming the problem otherwise.
Status ValidateFaParameters(const FaParameters& p);

// The mean log-likelihood (1/N) sum_i log N(x_i; mu, W W^T + Psi), by the
// matrix determinant lemma and Woodbury identity with a Cholesky factor of
// the L x L matrix I + W^T Psi^{-1} W (O(N d L)). Requires valid parameters
// and x with d columns, >= 1 row, finite values.
StatusOr<double> FaMeanLogLikelihood(const FaParameters& p, const DataMatrix& x);

// The log-density log N(x_i; mu, W W^T + Psi) of each record (N entries),
// computed as FaMeanLogLikelihood computes their mean. Same requirements.
StatusOr<Eigen::VectorXd> FaLogDensities(const FaParameters& p, const DataMatrix& x);

// The mean log-likelihood of data whose second moment about p.mean is S
// (S = (1/N) sum (x_i - mu)(x_i - mu)^T): -(d log 2 pi + log det C +
// tr(C^{-1} S)) / 2. Requires S symmetric d x d.
StatusOr<double> FaSecondMomentLogLikelihood(const FaParameters& p, const Eigen::MatrixXd& s);

// Posterior means E[z | x_i] = (I + W^T Psi^{-1} W)^{-1} W^T Psi^{-1} (x_i - mu),
// one row per record (N x L). Same requirements as FaMeanLogLikelihood.
StatusOr<DataMatrix> FaTransform(const FaParameters& p, const DataMatrix& x);

// `n` draws x = mu + W z + Psi^{1/2} e from the model. Requires n >= 1.
StatusOr<DataMatrix> FaSample(const FaParameters& p, Eigen::Index n, Generator& gen);

// The default FaEmOptions::dense_max_dimension. Not a crossover in speed:
// the top 10 eigenpairs by Lanczos took as long as LAPACK's or less from
// d = 64 on (BM_FaLeadingEigenpairs: 0.1 to 0.7 ms against 0.3 to 0.9 ms at
// d = 64 and 128; at d = 4096, 0.2 s (plain) and 1.7 s (a noisy release)
// against 7 s). Up to d = 128, where both take under a millisecond, the fit
// keeps LAPACK's eigenpairs, exact to rounding (Lanczos's are to ~1e-10).
inline constexpr Eigen::Index kFaDenseMaxDimension = 128;

// The default FaEmOptions::tolerance: scikit-learn's FactorAnalysis `tol`,
// on the same quantity (the total log-likelihood of the N records).
inline constexpr double kFaEmTolerance = 1e-2;

// Options of EM on a second-moment matrix (the post-processing of a fit).
struct FaEmOptions {
  int factors = 0;     // L, 1 <= L <= d. No default.
  int iterations = 0;  // J >= 1 EM iterations at most. No default.
  // EM stops after an iteration that raised the total log-likelihood of S,
  // `records` times its mean per record (nats), by less than this, as
  // scikit-learn's FactorAnalysis stops at its `tol` (on the total too). 0
  // runs all J. For a private fit S is the release, so stopping is
  // post-processing (N is public). >= 0.
  double tolerance = kFaEmTolerance;
  // N, the number of records whose mean S is (FitFactorAnalysis sets it);
  // the default 1 makes `tolerance` a bound on the mean's gain. >= 1.
  double records = 1.0;
  // Lower bound on each noise variance psi_j (units of S), applied after
  // every M-step, as scikit-learn floors at 1e-12 (keeps Psi invertible).
  double variance_floor = 1e-6;
  // Threads of the d x d products (0: all cores; FitFactorAnalysis passes its
  // engine's). The results do not depend on it.
  int threads = 0;
  // Eigenpairs of S come from LAPACK (O(d^3)) when d <= dense_max_dimension,
  // and from the Lanczos method (Spectra; O(d^2) per product) above it, or
  // from LAPACK if Lanczos cannot take L of them (L + 30 >= d) or does not
  // converge. The two agree to about 1e-10 relative. >= 0.
  Eigen::Index dense_max_dimension = kFaDenseMaxDimension;
  // Called after each iteration with (iteration, mean log-likelihood of S).
  std::function<void(int, double)> progress;
  Status Validate() const;
};

// EM for factor analysis on the second moment S about the (given) mean:
// initial W = U_L diag(sqrt(max(l - s2, 0))), the top L eigenpairs (U_L, l)
// of S with s2 the mean of the remaining eigenvalues, (tr S - sum l) / (d - L)
// (the probabilistic-PCA solution; data-free given S; no other eigenvalue is
// needed), Psi = max(diag(S - W W^T), floor); then J iterations of park2017
// Sec. 6:
//   G = (I + W^T Psi^{-1} W)^{-1},  B = G W^T Psi^{-1},
//   W <- S B^T (G + B S B^T)^{-1},  Psi <- max(diag(S - W B S), floor),
// with S B^T = (S Psi^{-1} W) G from one product S Psi^{-1} W, which also
// gives the iteration's log-likelihood. Each iteration costs one d x d by
// d x L product (O(d^2 L), reading S's lower triangle) and O(d L^2) more;
// the start costs L eigenpairs (FaEmOptions::dense_max_dimension). An
// iteration that fails numerically (a matrix not positive definite,
// non-finite parameters) ends EM with the previous parameters instead of an
// error. Finally W is rotated to orthogonal columns sorted by decreasing norm
// (W V, V the eigenvectors of W^T W; the model W W^T + Psi is unchanged),
// each with a positive sum. The returned mean is zero. Requires S symmetric,
// finite, d x d, and options valid.
StatusOr<FaParameters> FitFaToSecondMoment(const Eigen::MatrixXd& s, const FaEmOptions& options);

// The one release of a private fit: T = sum_i u_i u_i^T of the unit-ball
// records `unit` plus Analyze Gauss noise (ReleaseSymmetric) with sensitivity
// kFaSecondMomentSensitivity and the discrete Gaussian's multiplier for
// (epsilon, delta) (CalibrateSingleGaussian), recorded in `ledger`. Returns
// the noisy d x d sum (not divided by N). Requires finite epsilon > 0,
// 0 < delta < 1 and finite rows (InvalidArgument otherwise, before anything
// is drawn). Never refuses the records' values: a row whose norm, as the pass
// computes it, exceeds 1 - 1e-12 (rounding after MapToUnitBall, or a row
// outside the ball) is scaled to that norm, and one whose norm overflows
// contributes 0, so every contribution lies in the unit ball.
StatusOr<Eigen::MatrixXd> ReleaseFaSecondMoment(const DataMatrix& unit, double epsilon,
                                                double delta, Generator& gen,
                                                PrivacyLedger& ledger);

// The same over a row source, summed on the fitting engine's threads (the
// re-projection is made in the same pass).
StatusOr<Eigen::MatrixXd> ReleaseFaSecondMoment(const RowSource& unit, double epsilon,
                                                double delta, const Engine& engine,
                                                Generator& gen, PrivacyLedger& ledger);

// How a private fit makes the released S~ = T~ / N positive definite before
// EM (post-processing; docs/factor_analysis.md, "The eigenvalue repair").
// All leave S~ unchanged when its smallest eigenvalue is >= the floor.
enum class FaEigenvalueRepair {
  // kShift for EM, then the shift taken back out of the noise variances:
  // Psi <- max(Psi - c, psi_min), psi_min the larger of
  // FaEmOptions::variance_floor and FaFitOptions::variance_noise_floor
  // standard deviations of the release's noise on a diagonal entry of S~.
  // The shift is neutral for the factor model (S = W W^T + Psi exactly gives
  // S + c I = W W^T + (Psi + c I)), so c belongs to Psi; kShift leaves it
  // there and kFloor adds about as much through its correction's diagonal,
  // which is why both overstate Psi by orders of magnitude when N < d. The
  // default: the cost of kShift (no O(d^3)), a higher likelihood than both.
  kShiftBack,
  // S~ + c I with c = max(0, floor - lambda_min(S~)): every eigenvalue moves
  // up by c, eigenvectors unchanged. Needs lambda_min and the top L
  // eigenpairs only (Lanczos for large d; never O(d^3) there).
  kShift,
  // The Frobenius-nearest matrix with eigenvalues >= floor: the eigenvalues
  // below the floor are raised to it (FloorEigenvalues). Changes the whole
  // eigenspace below the floor, so it needs every eigenpair: one O(d^3)
  // LAPACK decomposition whenever lambda_min < floor (at d = 4096, 5 to 20 s
  // here; about half of a release's eigenvalues are negative when N < d).
  kFloor,
};

// The default FaFitOptions::variance_noise_floor: one standard deviation.
inline constexpr double kFaVarianceNoiseFloor = 1.0;

// Options of FitFactorAnalysis.
struct FaFitOptions {
  FaEmOptions em;  // factors and iterations have no defaults.
  // Privacy. No defaults; epsilon = +infinity fits without privacy (no
  // release; then a missing data_norm is taken from the data, as for GMMs,
  // and no guarantee is claimed).
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double delta = std::numeric_limits<double>::quiet_NaN();
  DataDomain domain;  // R has no default (data/domain.h).
  // Post-processing of the noisy S = T~ / N (unit-ball units): its
  // eigenvalues are made >= this floor by `eigenvalue_repair`, so that EM sees
  // a positive definite matrix. Private fits only. > 0.
  double eigenvalue_floor = 1e-6;
  // How the floor is enforced. kShiftBack by default: on Olivetti about
  // 6,600 nats per face above kFloor (the default before 2026-11-24) and
  // 9,800 above kShift at every epsilon (docs/factor_analysis.md, "The
  // eigenvalue repair"), without kFloor's O(d^3) decomposition.
  FaEigenvalueRepair eigenvalue_repair = FaEigenvalueRepair::kShiftBack;
  // kShiftBack's floor of the noise variances, in standard deviations of the
  // release's noise on one diagonal entry of S~ (noise_scale / N: public). A
  // variance below it cannot be told from zero in the release. >= 0.
  double variance_noise_floor = kFaVarianceNoiseFloor;
  // EM's start on the release from approximate top L eigenpairs, by
  // randomized subspace iteration (Halko, Martinsson and Tropp 2011; a few
  // products with a block of L + 10 vectors), where Lanczos would take them
  // (d above FaEmOptions::dense_max_dimension): the top of a noisy release is
  // a dense cluster, on which Lanczos needs hundreds of products (about 0.5 s
  // of a 1.5 s fit at d = 4096), and EM moves from the start anyway. False:
  // Lanczos's, exact to 1e-10. Private fits only (kFloor's start comes from
  // its full decomposition whenever an eigenvalue is below the floor).
  bool approximate_start = true;
  // Threads and block size of the fitting engine's one pass over the data.
  EngineOptions engine;

  bool IsPrivate() const { return epsilon != std::numeric_limits<double>::infinity(); }
  Status Validate() const;
};

// A factor analysis fit's guarantee: the shared fields
// (dpem/accounting/guarantee.h), with `epsilon` that of the fit's one
// Gaussian release at `delta` for the sampling its ledger entry records
// (SingleGaussianEpsilon: the Renyi curve for the default discrete noise,
// the exact profile only for continuous noise; `accountant` is kRdp), and the
// release's noise multiplier. When the pipeline released the domain from the
// data (RunFit, --data-norm auto), the ledger lists the bounds' releases
// first and `epsilon` and `target_epsilon` include them (ComposeBoundsWithFit).
struct FaGuarantee : PrivacyGuarantee {
  double noise_multiplier = 0.0;  // sigma / sensitivity of the release.
};

// A fitted model.
struct FaFit {
  FaParameters parameters;  // ORIGINAL units: mean c, loadings R W, Psi R^2.
  DataDomain domain;
  FaGuarantee guarantee;
  Eigen::Index n = 0;  // Number of records (public under replace-one).
  int iterations = 0;  // J, the cap (FaEmOptions::iterations).
  // EM iterations run: J, or fewer when EM converged (FaEmOptions::tolerance)
  // or a step failed. 0 when unknown (a model file written before it).
  int iterations_run = 0;
  // EM's FaEmOptions::tolerance; 0 for a model file written before it (all J
  // ran then).
  double tolerance = 0.0;
  std::optional<std::uint64_t> seed;  // The generator's seed, if seeded.
};

// Fits factor analysis to `x` (original units), privately unless epsilon is
// infinite (file comment). Requires options.Validate() OK, N >= 1, finite x,
// 1 <= L <= d, and a domain centre that is empty or has d entries. A private
// fit with a seeded generator runs, but its guarantee is void.
StatusOr<FaFit> FitFactorAnalysis(const DataMatrix& x, const FaFitOptions& options,
                                  Generator& gen);

// The same on a row source, read once, block by block through the domain
// (never copied whole; a memory-mapped file larger than memory streams).
StatusOr<FaFit> FitFactorAnalysis(const RowSource& x, const FaFitOptions& options,
                                  Generator& gen);

}  // namespace dpem

#endif  // DPEM_MODELS_FACTOR_ANALYSIS_FACTOR_ANALYSIS_H_
