// The robust private mean estimator of wang-dp-gradient-em (Sec. 4.2,
// Theorem 2; local variant Appendix F, Theorem 8), built on the soft
// truncation of Catoni and Giulini (2017) and the multiplicative-noise
// smoothing of Holland (2019).
//
// For a scale s > 0 and a smoothing parameter beta > 0, each value x becomes
//   psi(x) = s * E_eta phi((x + eta x) / s),  eta ~ N(0, 1/beta)      (eq. 11)
// where phi is the soft truncation of eq. (9). With a = x/s and
// b = |x| / (s sqrt(beta)), (x + eta x)/s = a + b Z for Z ~ N(0, 1), and the
// expectation has the closed form of eq. (12) with the correction C-hat of
// Appendix D. Because |phi| <= 2 sqrt(2)/3, every psi(x) lies in
// [-2 sqrt(2)/3 s, 2 sqrt(2)/3 s], whatever x is: the mean of n such values
// has sensitivity (4 sqrt(2)/3) s / n under replace-one neighbours, with no
// bound on the data. dpem enforces that bound on the floating-point value too
// (SmoothedTruncation clamps), so the guarantee does not rest on round-off.
//
// The scale s and beta must not depend on the data: they are computed from
// public quantities only (n, epsilon, delta, d, the failure probability zeta
// and the public second-moment bound tau).
//
// Thread safety: pure functions, except those taking a Generator (as safe as
// the Generator and ledger passed in).
#ifndef DPEM_MECHANISMS_ROBUST_MEAN_H_
#define DPEM_MECHANISMS_ROBUST_MEAN_H_

#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpem/accounting/accountant.h"
#include "dpem/accounting/ledger.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

// sup |phi| = 2 sqrt(2) / 3 (eq. 9).
inline constexpr double kCatoniGiuliniBound = 0.94280904158206336587;

// The soft truncation of Catoni and Giulini (2017), wang-dp-gradient-em
// eq. (9): u - u^3/6 on [-sqrt(2), sqrt(2)], +-2 sqrt(2)/3 outside.
double CatoniGiuliniPhi(double u);

// The correction C-hat(a, b) of Appendix D, exactly as printed (T1 + ... + T5,
// with Phi by erfc). Requires b > 0. Exact in real arithmetic; in floating
// point its terms grow like max(|a|, b)^3 and cancel, so use it for moderate
// arguments (the tests check it to 1e-9 for |a|, b <= 5) and
// SmoothedTruncation for everything else.
double CatoniGiuliniCorrection(double a, double b);

// E phi(a + b Z), Z ~ N(0, 1), by the closed form of eq. (12):
// a (1 - b^2/2) - a^3/6 + C-hat(a, b). Requires b > 0. Same caveat.
double SmoothedTruncationClosedForm(double a, double b);

// E phi(a + b Z), Z ~ N(0, 1), for every real a and b >= 0, computed stably:
// the closed form where max(|a|, b) <= kClosedFormLimit and b >=
// kClosedFormMinSmoothing, phi(a) below that b, elsewhere the two
// flat tails by erfc plus the polynomial middle by 64-point Gauss-Legendre
// quadrature. The result is clamped to [-kCatoniGiuliniBound,
// kCatoniGiuliniBound] (the true value lies there; the clamp makes the
// sensitivity bound hold for the computed value). With b finite, a = +-inf
// gives +-kCatoniGiuliniBound; b = +inf with a finite gives 0; NaN gives 0.
double SmoothedTruncation(double a, double b);
inline constexpr double kClosedFormLimit = 8.0;
// The smallest b the closed form takes. Below it (b > 0) SmoothedTruncation
// returns phi(a), the limit b -> 0, which E phi(a + b Z) equals to within
// b^2 (phi is continuously differentiable): the closed form's
// ((sqrt 2 +- a) / b)^2 overflows for b below about 1e-154, and an
// infinite v^2 times exp(-v^2 / 2) = 0 gave NaN (until 2026-11-25: a
// record with a value of magnitude below about 1e-154 turned a robust mean
// into NaN).
inline constexpr double kClosedFormMinSmoothing = 1e-100;

// Scale and smoothing of the estimator.
struct RobustMeanParameters {
  double scale = 0.0;  // s > 0.
  double beta = 0.0;   // The precision of the multiplicative noise, > 0.
};

// psi(x) = s E phi((x + eta x)/s), eta ~ N(0, 1/beta) (eq. 11 for one value):
// s * SmoothedTruncation(x/s, |x|/(s sqrt(beta))). Always within
// [-kCatoniGiuliniBound s, kCatoniGiuliniBound s]; +-inf maps to the limit of
// the finite values, NaN to 0. Precondition: p.scale > 0, p.beta > 0.
// Computed as SmoothedTruncatedValues computes it.
double SmoothedTruncatedValue(double x, const RobustMeanParameters& p);

// SmoothedTruncatedValue of x[0], ..., x[n - 1] into out[0..n) (out must
// not overlap x), eight at a time: where max(|a|, b) <= kClosedFormLimit
// the closed form with erfc and exp vectorised where the build has glibc's
// vector math (within about 1e-13 of SmoothedTruncation's value there; the
// tests check 1e-12), elsewhere SmoothedTruncation itself, each clamped as
// SmoothedTruncation clamps. A value's result does not depend on the other
// values of the call or its position among them (the sensitivity argument
// of a released sum needs each record's term to be its own), and it is what
// SmoothedTruncatedValue returns for it. Precondition as above.
void SmoothedTruncatedValues(const double* x, Eigen::Index n, const RobustMeanParameters& p,
                             double* out);
// The same for a vector.
Eigen::VectorXd SmoothedTruncatedValues(const Eigen::Ref<const Eigen::VectorXd>& x,
                                        const RobustMeanParameters& p);

// The non-private robust mean x-hat of eq. (11) (Holland 2019). Requires a
// non-empty x and valid parameters.
StatusOr<double> RobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                            const RobustMeanParameters& p);

// L2 (= L1) sensitivity of the mean of n smoothed values under replace-one:
// (4 sqrt(2)/3) s / n (wang-dp-gradient-em Sec. 4.2, below Lemma 1).
double RobustMeanSensitivity(double scale, double n);

// How the noise of a private robust mean is calibrated.
enum class RobustMeanCalibration {
  // The analytic Gaussian mechanism (Balle and Wang 2018): the least noise
  // that is exactly (epsilon, delta)-DP. The default.
  kAnalytic,
  // The classical sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon of
  // Definition 6 (valid for epsilon < 1 only; refused otherwise).
  kClassic,
};

struct PrivateMeanOptions {
  // No defaults (Validate() refuses NaN).
  double epsilon = std::numeric_limits<double>::quiet_NaN();  // > 0, finite.
  double delta = std::numeric_limits<double>::quiet_NaN();    // In (0, 1).
  // Public bound on E x^2 (Theorem 2's tau); sets the scale, not the
  // privacy. No default.
  double tau = std::numeric_limits<double>::quiet_NaN();  // > 0, finite.
  // Failure probability zeta of the utility bound, in (0, 1).
  double zeta = 0.05;
  RobustMeanCalibration calibration = RobustMeanCalibration::kAnalytic;
  Status Validate() const;
};

// Theorem 2's parameters: beta = sqrt(log(1/zeta)),
// s = sqrt(n epsilon tau) / (log(1/zeta) log^{1/4}(1/delta)).
// Requires n >= 1 and valid options (zeta < 1/e so that log(1/zeta) > 1,
// delta < 1/e likewise; InvalidArgument otherwise).
StatusOr<RobustMeanParameters> Theorem2Parameters(double n, const PrivateMeanOptions& o);

// Local-model parameters (Appendix F). Theorem 8 states Theorem 2's s, but
// with that s the local noise term s log(1/zeta) sqrt(log 1/delta)/(eps sqrt n)
// of eq. (41) does not decay in n. Balancing it against tau/(s beta) gives
//   s = sqrt(tau eps sqrt(n) / (beta log(1/zeta) sqrt(log 1/delta))),
// beta = sqrt(log(1/zeta)), which attains the rate (39). dpem uses this.
StatusOr<RobustMeanParameters> LocalModelParameters(double n, const PrivateMeanOptions& o);

struct PrivateMeanResult {
  double mean = 0.0;
  RobustMeanParameters parameters;
  // The standard deviation of the noise actually added to the released mean
  // (central) or to each report (local): the ledger's noise scale.
  double noise_stddev = 0.0;
  PrivacyLedger ledger;  // One Gaussian release, as recorded (discrete).
  // Certified for the recorded release through its Renyi curve
  // (SingleGaussianEpsilon: the discrete Gaussian's).
  double epsilon = 0.0;
  double delta = 0.0;
  // True if the guarantee does not hold (a seeded generator: the noise is
  // reproducible from the seed); `void_reasons` says why.
  bool guarantee_void = false;
  std::vector<std::string> void_reasons;
};

// The central mechanism (13) with Theorem 2's parameters and noise calibrated
// to the sensitivity (4 sqrt 2/3) s/n. The noise is discrete, as every dpem
// release (additive_noise.h, "Discrete noise"; continuous floating-point
// noise leaks through its low-order bits, Mironov 2012): the mean is rounded
// to a grid g fixed by public values and discrete Gaussian noise is added,
// so the released mean is an integer multiple of g, and the ledger records
// the charged sensitivity (additive_noise.h, "What is computed": (4 sqrt
// 2/3) s/n (1 + 2^-19) + 2^-52 + (5/4) g) and the grid's noise scale (a
// multiplier never below the calibrated one, calibrated through the discrete
// Gaussian's Renyi curve). The sum of the n transformed values is an exact
// sum of 4096-value blocks. Requires x non-empty (N is public) and
// o.Validate() OK; the input domain is the extended reals without NaN: x
// may hold any finite or infinite values, and NaN is refused (as input
// validation: a NaN is not a record of the domain). A seeded `gen` voids the
// guarantee.
StatusOr<PrivateMeanResult> PrivateRobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                                              const PrivateMeanOptions& o, Generator& gen);

// The local mechanism (38): each record releases psi(x_i) plus discrete
// Gaussian noise calibrated to the per-record sensitivity (4 sqrt 2/3) s, on
// one public grid (each report a one-coordinate discrete release, as above),
// and the server averages. Every record's report is (epsilon, delta)-DP on
// its own (the ledger holds the one release each record takes part in, with
// its charged sensitivity and noise scale). Parameters: LocalModelParameters.
StatusOr<PrivateMeanResult> LocalPrivateRobustMean(const Eigen::Ref<const Eigen::VectorXd>& x,
                                                   const PrivateMeanOptions& o,
                                                   Generator& gen);

}  // namespace dpem

#endif  // DPEM_MECHANISMS_ROBUST_MEAN_H_
