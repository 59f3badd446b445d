#include "dpem/accounting/accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpem/accounting/analytic_gaussian.h"
#include "dpem/accounting/composition.h"
#include "dpem/accounting/rdp.h"
#include "internal/numeric.h"

namespace dpem {
namespace {

struct NamedAccountant {
  AccountantKind kind;
  std::string_view name;
};

constexpr NamedAccountant kAccountantNames[] = {
    {AccountantKind::kLinear, "linear"},   {AccountantKind::kAdvanced, "advanced"},
    {AccountantKind::kKov, "kov"},         {AccountantKind::kMcdp, "mcdp"},
    {AccountantKind::kZcdp, "zcdp"},       {AccountantKind::kZcdpTight, "zcdp-tight"},
    {AccountantKind::kMoments, "ma"},      {AccountantKind::kRdp, "rdp"},
};

// Grid resolution of DeltaSplitRule::kOptimised before golden refinement.
constexpr int kDeltaSplitGridPoints = 24;
constexpr int kDeltaSplitGoldenIterations = 30;
// The share of delta given to Gaussian releases ranges over
// [kMinDeltaShare, 1 - kMinDeltaShare].
constexpr double kMinDeltaShare = 1e-6;

std::size_t CountGaussian(const std::vector<ReleaseGroup>& groups) {
  std::size_t n = 0;
  for (const ReleaseGroup& g : groups) {
    if (g.mechanism == MechanismKind::kGaussian) n += g.count;
  }
  return n;
}

// Each release as an (eps_r, delta_r)-DP mechanism: Laplace, continuous or
// discrete, (1/z, 0) (both are pure (1/z)-DP: the discrete one on integer
// shifts of L1 norm at most Delta'_1 / g, additive_noise.h); a continuous
// Gaussian at its exact analytic eps at delta_r; a discrete Gaussian at the
// eps of its Renyi curve at delta_r (GaussianRdpEpsilonForDelta: no exact
// (eps, delta) curve is proven for the multivariate discrete Gaussian).
StatusOr<std::vector<EpsDelta>> PerReleaseGuarantees(
    const std::vector<ReleaseGroup>& groups, double gaussian_delta) {
  std::vector<EpsDelta> out;
  for (const ReleaseGroup& g : groups) {
    EpsDelta e{1.0 / g.noise_multiplier, 0.0};
    if (g.mechanism == MechanismKind::kGaussian) {
      DPEM_ASSIGN_OR_RETURN(e.epsilon, SingleGaussianEpsilon(g.noise_multiplier, gaussian_delta,
                                                             g.sampling));
      e.delta = gaussian_delta;
    }
    out.insert(out.end(), g.count, e);
  }
  return out;
}

StatusOr<double> LinearEpsilon(const std::vector<ReleaseGroup>& groups, double delta) {
  // Basic composition has no slack: all of delta goes to the Gaussian releases.
  const std::size_t n_gauss = CountGaussian(groups);
  const double per_release = n_gauss ? delta / static_cast<double>(n_gauss) : 0.0;
  DPEM_ASSIGN_OR_RETURN(std::vector<EpsDelta> mechs,
                        PerReleaseGuarantees(groups, per_release));
  DPEM_ASSIGN_OR_RETURN(EpsDelta total, ComposeLinear(mechs));
  return total.epsilon;
}

// Epsilon of a slack-based composition (advanced, kov) when the Gaussian
// releases get `share` of delta and the composition the rest.
StatusOr<double> SplitEpsilon(const std::vector<ReleaseGroup>& groups, double delta,
                              double share, AccountantKind kind) {
  const std::size_t n_gauss = CountGaussian(groups);
  const double per_release = n_gauss ? share * delta / static_cast<double>(n_gauss) : 0.0;
  DPEM_ASSIGN_OR_RETURN(std::vector<EpsDelta> mechs,
                        PerReleaseGuarantees(groups, per_release));
  if (kind == AccountantKind::kKov) return ComposeOptimalEpsilon(mechs, delta);
  DPEM_ASSIGN_OR_RETURN(EpsDelta total, ComposeAdvanced(mechs, (1.0 - share) * delta));
  return total.epsilon;
}

// DeltaSplitRule::kOptimised: minimise SplitEpsilon over the share, on a log
// grid of the slack's share and the releases' share, then golden-section
// refinement around the best grid point. Every share gives a valid bound.
StatusOr<double> OptimisedSplitEpsilon(const std::vector<ReleaseGroup>& groups,
                                       double delta, AccountantKind kind) {
  if (CountGaussian(groups) == 0) return SplitEpsilon(groups, delta, 0.0, kind);
  Status failure;
  auto eval = [&](double share) {
    StatusOr<double> e = SplitEpsilon(groups, delta, share, kind);
    if (!e.ok()) {
      failure = e.status();
      return std::numeric_limits<double>::infinity();
    }
    return *e;
  };
  // Shares symmetric in log scale around 1/2: 1e-6 ... 0.5 ... 1 - 1e-6.
  std::vector<double> shares;
  for (int i = 0; i < kDeltaSplitGridPoints; ++i) {
    const double t = std::pow(kMinDeltaShare, 1.0 - i / (kDeltaSplitGridPoints - 1.0)) * 0.5;
    shares.push_back(t);
    shares.push_back(1.0 - t);
  }
  std::size_t best = 0;
  std::vector<double> values(shares.size());
  for (std::size_t i = 0; i < shares.size(); ++i) {
    values[i] = eval(shares[i]);
    if (values[i] < values[best]) best = i;
  }
  if (!std::isfinite(values[best])) {
    return failure.ok() ? OutOfRangeError("no finite epsilon for any delta split") : failure;
  }
  // Refine between the neighbouring grid shares of the best one.
  double lo = shares[best], hi = shares[best];
  for (double s : shares) {
    if (s < shares[best] && (lo == shares[best] || s > lo)) lo = s;
    if (s > shares[best] && (hi == shares[best] || s < hi)) hi = s;
  }
  const double refined = internal::GoldenSectionMinimise(eval, lo, hi, kDeltaSplitGoldenIterations);
  return std::min(values[best], eval(refined));
}

// Renyi divergence of order alpha of one Laplace release: Mironov's exact
// value for the continuous Laplace; the bound of any pure (1/z)-DP mechanism
// for the discrete one (PureDpRdp).
double LaplaceRdpFor(const ReleaseGroup& g, double alpha) {
  return g.sampling == NoiseSampling::kContinuous ? LaplaceRdp(g.noise_multiplier, alpha)
                                                  : PureDpRdp(1.0 / g.noise_multiplier, alpha);
}

// mCDP: a discrete Gaussian on an integer shift v has privacy loss
// <v, Y> / t^2 + |v|^2 / (2 t^2), Y discrete Gaussian, whose mean is the
// continuous one's and whose centred part is sub-Gaussian with the same
// parameter (Canonne, Kamath and Steinke 2020, Cor. 9): GaussianMcdp holds
// for both samplings. Laplace: pure DP -> mCDP (PureDpToMcdp) for both.
StatusOr<double> McdpEpsilon(const std::vector<ReleaseGroup>& groups, double delta) {
  std::vector<MeanConcentrated> parts;
  for (const ReleaseGroup& g : groups) {
    const MeanConcentrated m = g.mechanism == MechanismKind::kGaussian
                                   ? GaussianMcdp(g.noise_multiplier)
                                   : PureDpToMcdp(1.0 / g.noise_multiplier);
    parts.insert(parts.end(), g.count, m);
  }
  return McdpToEpsilon(ComposeMcdp(parts), delta);
}

double TotalZcdp(const std::vector<ReleaseGroup>& groups) {
  double rho = 0.0;
  for (const ReleaseGroup& g : groups) {
    const double r = g.mechanism == MechanismKind::kGaussian
                         ? GaussianZcdp(g.noise_multiplier)
                         : PureDpToZcdp(1.0 / g.noise_multiplier);
    rho += static_cast<double>(g.count) * r;
  }
  return rho;
}

StatusOr<double> MomentsEpsilon(const std::vector<ReleaseGroup>& groups, double delta) {
  std::vector<double> moments(kMomentsMaxLambda, 0.0);
  for (int lambda = 1; lambda <= kMomentsMaxLambda; ++lambda) {
    for (const ReleaseGroup& g : groups) {
      const double m =
          g.mechanism == MechanismKind::kGaussian
              ? GaussianLogMoment(g.noise_multiplier, lambda)
          : g.sampling == NoiseSampling::kContinuous
              ? LaplaceLogMoment(g.noise_multiplier, lambda)
              : lambda * PureDpRdp(1.0 / g.noise_multiplier, lambda + 1.0);
      moments[lambda - 1] += static_cast<double>(g.count) * m;
    }
  }
  return LogMomentsToEpsilon(moments, delta);
}

StatusOr<double> RdpEpsilon(const std::vector<ReleaseGroup>& groups, double delta) {
  const std::vector<double>& orders = DefaultRdpOrders();
  std::vector<double> rdp(orders.size(), 0.0);
  for (std::size_t i = 0; i < orders.size(); ++i) {
    for (const ReleaseGroup& g : groups) {
      // The Gaussian's curve holds for the discrete Gaussian too (CKS 2020,
      // Thm. 14); the Laplace's does not (LaplaceRdpFor).
      const double r = g.mechanism == MechanismKind::kGaussian
                           ? GaussianRdp(g.noise_multiplier, orders[i])
                           : LaplaceRdpFor(g, orders[i]);
      rdp[i] += static_cast<double>(g.count) * r;
    }
  }
  return RdpToEpsilon(orders, rdp, delta);
}

}  // namespace

std::string_view AccountantName(AccountantKind kind) {
  for (const NamedAccountant& a : kAccountantNames) {
    if (a.kind == kind) return a.name;
  }
  return "unknown";
}

StatusOr<AccountantKind> ParseAccountantKind(std::string_view name) {
  for (const NamedAccountant& a : kAccountantNames) {
    if (a.name == name) return a.kind;
  }
  return InvalidArgumentError("unknown accountant '" + std::string(name) +
                              "' (accepted: " + AccountantNameList() + ")");
}

const std::vector<AccountantKind>& AllAccountants() {
  static const std::vector<AccountantKind> all = [] {
    std::vector<AccountantKind> v;
    for (const NamedAccountant& a : kAccountantNames) v.push_back(a.kind);
    return v;
  }();
  return all;
}

std::string AccountantNameList() {
  std::string out;
  for (const NamedAccountant& a : kAccountantNames) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

StatusOr<double> SingleGaussianEpsilon(double noise_multiplier, double delta,
                                       NoiseSampling sampling) {
  if (sampling == NoiseSampling::kContinuous) {
    return GaussianEpsilonForDelta(noise_multiplier, delta);
  }
  return GaussianRdpEpsilonForDelta(noise_multiplier, delta);
}

StatusOr<double> CalibrateSingleGaussian(double epsilon, double delta, NoiseSampling sampling) {
  if (sampling == NoiseSampling::kContinuous) return CalibrateAnalyticGaussian(epsilon, delta);
  return CalibrateGaussianRdp(epsilon, delta);
}

StatusOr<double> ComputeEpsilon(const PrivacyLedger& ledger, double delta,
                                AccountantKind kind) {
  if (!(delta > 0.0 && delta < 1.0)) {
    return InvalidArgumentError("delta must be in (0, 1)");
  }
  if (ledger.empty()) return 0.0;
  const std::vector<ReleaseGroup> groups = ledger.Groups();
  switch (kind) {
    case AccountantKind::kLinear: return LinearEpsilon(groups, delta);
    case AccountantKind::kAdvanced:
    case AccountantKind::kKov: return OptimisedSplitEpsilon(groups, delta, kind);
    case AccountantKind::kMcdp: return McdpEpsilon(groups, delta);
    case AccountantKind::kZcdp: return ZcdpToEpsilon(TotalZcdp(groups), delta);
    case AccountantKind::kZcdpTight: return ZcdpToEpsilonTight(TotalZcdp(groups), delta);
    case AccountantKind::kMoments: return MomentsEpsilon(groups, delta);
    case AccountantKind::kRdp: return RdpEpsilon(groups, delta);
  }
  return InternalError("unhandled accountant");
}

}  // namespace dpem
