#include "dpem/mechanisms/joint_release.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dpem/random/samplers.h"
#include "internal/discrete_noise.h"

namespace dpem {
namespace {

// Records in different components (one-hot g = e_i, g' = e_j, i != j):
// every block's two contributions are orthogonal, each of norm at most 1.
double DifferentComponents(const JointNoiseScales& s) {
  return 2.0 / (s.counts * s.counts) + 2.0 / (s.sums * s.sums) + 2.0 / (s.second * s.second);
}

// Records in the same component (g = g' = e_i), full or diagonal second
// moments, unit vectors with t = x . x': (2 - 2t)/a + (2 - 2t^2)/b, maximised
// over t in [-1, 1] at t* = -b/(2a) (or t = -1).
double SameComponentMatrix(double a, double b) {
  if (b <= 2.0 * a) return 2.0 / a + 2.0 / b + b / (2.0 * a * a);
  return 4.0 / a;
}

// Spherical: ||x - x'||^2 / a + (||x||^2 - ||x'||^2)^2 / b, whose maximum over
// the ball is exactly 4/a (docs/privacy.md, Theorem 1 (2)).
double SameComponentTrace(double a) { return 4.0 / a; }

// Grid of log10 ratios searched by DefaultJointNoiseSplit.
constexpr int kSplitGridPoints = 81;
constexpr double kSplitGridHalfWidth = 2.0;  // Ratios from 1e-2 to 1e2.

}  // namespace

double JointSensitivity(CovarianceType type, const JointNoiseScales& s) {
  const double a = s.sums * s.sums, b = s.second * s.second;
  const double same = type == CovarianceType::kSpherical ? SameComponentTrace(a)
                                                         : SameComponentMatrix(a, b);
  return std::sqrt(std::max(DifferentComponents(s), same));
}

JointNoiseScales DefaultJointNoiseSplit(CovarianceType type, Eigen::Index dimension,
                                        Eigen::Index components) {
  const double d = static_cast<double>(dimension);
  const double m = type == CovarianceType::kFull        ? d * d
                   : type == CovarianceType::kDiagonal ? d
                                                        : 1.0 / d;
  const double wn = 1.0 + 1.0 / static_cast<double>(components);
  JointNoiseScales best;
  double best_loss = INFINITY;
  for (int i = 0; i < kSplitGridPoints; ++i) {
    for (int j = 0; j < kSplitGridPoints; ++j) {
      const double step = 2.0 * kSplitGridHalfWidth / (kSplitGridPoints - 1);
      JointNoiseScales s{std::pow(10.0, -kSplitGridHalfWidth + i * step), 1.0,
                         std::pow(10.0, -kSplitGridHalfWidth + j * step)};
      const double scale = JointSensitivity(type, s);  // Normalise to sensitivity 1.
      s = {s.counts * scale, s.sums * scale, s.second * scale};
      const double loss = wn * s.counts * s.counts + d * s.sums * s.sums +
                          m * s.second * s.second;
      if (loss < best_loss) {
        best_loss = loss;
        best = s;
      }
    }
  }
  return best;
}

namespace {

// The public half of the checks: sampling, split and multiplier.
Status ValidateJointScales(const JointNoiseScales& split, double noise_multiplier,
                           NoiseSampling sampling) {
  if (sampling != NoiseSampling::kDiscrete && sampling != NoiseSampling::kContinuous) {
    return InvalidArgumentError("joint release: unknown noise sampling");
  }
  for (double v : {split.counts, split.sums, split.second, noise_multiplier}) {
    if (!(std::isfinite(v) && v > 0.0)) {
      return InvalidArgumentError("joint release: noise scales must be finite and > 0");
    }
  }
  return OkStatus();
}

Status ValidateJointRelease(const GmmStatistics& stats, const JointNoiseScales& split,
                            double noise_multiplier, NoiseSampling sampling) {
  DPEM_RETURN_IF_ERROR(ValidateJointScales(split, noise_multiplier, sampling));
  bool finite = stats.counts.allFinite() && stats.sums.allFinite() &&
                stats.second_diag.allFinite() && stats.second_trace.allFinite();
  for (const Eigen::MatrixXd& m : stats.second_full) finite = finite && m.allFinite();
  if (!finite) return InvalidArgumentError("joint release: statistics must be finite");
  return OkStatus();
}

void AddNoise(Eigen::Ref<Eigen::MatrixXd> block, double sd, Generator& gen) {
  for (Eigen::Index j = 0; j < block.cols(); ++j) {
    for (Eigen::Index i = 0; i < block.rows(); ++i) block(i, j) += sd * SampleStandardNormal(gen);
  }
}

// Diagonal N(0, sd^2), off-diagonal N(0, sd^2 / 2) mirrored.
void AddSymmetricNoise(Eigen::MatrixXd& m, double sd, Generator& gen) {
  const double off = sd / std::sqrt(2.0);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    m(i, i) += sd * SampleStandardNormal(gen);
    for (Eigen::Index j = i + 1; j < m.cols(); ++j) {
      const double e = off * SampleStandardNormal(gen);
      m(i, j) += e;
      m(j, i) += e;
    }
  }
}

// Calls f(value, weight) for every released coordinate of `stats`, in a fixed
// order: counts, sums, then second moments (full: the upper triangle, row by
// row). value / weight is the block-normalised coordinate: weight = s_n,
// s_1, s_2, and s_2 / sqrt(2) for an off-diagonal entry (whose normalised
// value sqrt(2) m_ij / s_2 is the sqrt(2)-scaled upper triangle).
template <typename F>
void ForEachCoordinate(GmmStatistics& stats, const JointNoiseScales& split, F&& f) {
  for (double& v : stats.counts.reshaped()) f(v, split.counts);
  for (double& v : stats.sums.reshaped()) f(v, split.sums);
  const double off = split.second / std::sqrt(2.0);
  for (Eigen::MatrixXd& m : stats.second_full) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = i; j < m.cols(); ++j) f(m(i, j), i == j ? split.second : off);
    }
  }
  for (double& v : stats.second_diag.reshaped()) f(v, split.second);
  for (double& v : stats.second_trace.reshaped()) f(v, split.second);
}

Eigen::Index CountCoordinates(GmmStatistics& stats, const JointNoiseScales& split) {
  Eigen::Index m = 0;
  ForEachCoordinate(stats, split, [&](double&, double) { ++m; });
  return m;
}

Status ReleaseContinuous(GmmStatistics& stats, const JointNoiseScales& split,
                         double noise_multiplier, const std::string& label, Generator& gen,
                         PrivacyLedger& ledger) {
  const double sensitivity = JointSensitivity(stats.type, split);
  const double sigma =
      std::nextafter(noise_multiplier * sensitivity, std::numeric_limits<double>::infinity());
  DPEM_RETURN_IF_ERROR(ledger.Record(
      Release{MechanismKind::kGaussian, sensitivity, sigma, label,
                                             NoiseSampling::kContinuous}));
  AddNoise(stats.counts, split.counts * sigma, gen);
  AddNoise(stats.sums, split.sums * sigma, gen);
  const double sd2 = split.second * sigma;
  for (Eigen::MatrixXd& m : stats.second_full) AddSymmetricNoise(m, sd2, gen);
  AddNoise(stats.second_diag, sd2, gen);
  AddNoise(stats.second_trace, sd2, gen);
  return OkStatus();
}

// The grid of a discrete joint release of m coordinates: the exact sums'
// quantum in block-normalised units is divided by the smallest weight (an
// off-diagonal entry's is s_2 / sqrt(2)).
StatusOr<internal::DiscreteGrid> PlanJointGrid(CovarianceType type, const JointNoiseScales& split,
                                               double noise_multiplier, Eigen::Index m) {
  const double smallest_weight =
      std::min({split.counts, split.sums, split.second / std::sqrt(2.0)});
  return internal::PlanDiscreteGrid(MechanismKind::kGaussian, JointSensitivity(type, split),
                                    noise_multiplier, m,
                                    internal::kExactSumQuantum / smallest_weight);
}

// The discrete release (additive_noise.h, "Discrete noise"). Privacy proof
// (docs/privacy.md, "What is computed"): let u(D) = W^{-1} c(D) be the m
// block-normalised coordinates (W the diagonal of ForEachCoordinate's
// weights) of the statistics AS COMPUTED: exact sums (engine/exact_sum.h) of
// block partials, each computed from zero in floating point. Replacing one
// record changes one block's partial only; its computed value is within
// gamma_{B+2} B C of the exact one (C = the largest normalised contribution
// of one record, <= Delta), so u changes in L2 by at most Delta (1 +
// kComputedSumMargin) (Delta = JointSensitivity(type, split), Theorem 1 of
// docs/privacy.md, whose off-diagonal coordinates are exactly the sqrt(2)
// m_ij / s_2 used here), plus the quantum of the exact sums, q / min(w) per
// coordinate. AddDiscreteNoise releases g (r(D) + N) with r(D) =
// round(clamp(u(D) / g)) and N i.i.d. discrete Gaussian of sigma = t grid
// units. Clamping is a contraction; the conversion of the exact sum to a
// double and the division by w are two roundings, at most (1/16) g per
// coordinate and neighbour below the clamp at 2^48 g; rounding to the grid
// moves each coordinate by at most g/2. By the triangle inequality the
// integer vectors r(D), r(D') differ by at most grid.sensitivity / g
// (PlanDiscreteGrid: kRoundingChargeFactor = 2 (1/2 + 1/8) covers the g/2
// and g/16 per side), so the release is a discrete Gaussian mechanism of
// sensitivity Delta' = grid.sensitivity and noise scale t g =
// grid.noise_scale, whose multiplier t g / Delta' >= noise_multiplier
// (PlanDiscreteGrid rounds t up); that is what the ledger records.
// Multiplying back by W is post-processing of the integers r(D) + N. The
// grid depends on Delta, the multiplier, m and the public block bound only,
// never on the values.
Status ReleaseDiscrete(GmmStatistics& stats, const JointNoiseScales& split,
                       double noise_multiplier, const std::string& label, Generator& gen,
                       PrivacyLedger& ledger) {
  const Eigen::Index m = CountCoordinates(stats, split);
  DPEM_ASSIGN_OR_RETURN(const internal::DiscreteGrid grid,
                        PlanJointGrid(stats.type, split, noise_multiplier, m));
  DPEM_RETURN_IF_ERROR(ledger.Record(
      Release{MechanismKind::kGaussian, grid.sensitivity, grid.noise_scale, label}));
  Eigen::VectorXd u(m);
  Eigen::Index i = 0;
  ForEachCoordinate(stats, split, [&](double& v, double w) { u[i++] = v / w; });
  internal::AddDiscreteNoise(u, MechanismKind::kGaussian, grid, gen);
  i = 0;
  ForEachCoordinate(stats, split, [&](double& v, double w) { v = u[i++] * w; });
  for (Eigen::MatrixXd& s : stats.second_full) {  // Mirror the released upper triangle.
    s.triangularView<Eigen::StrictlyLower>() = s.transpose();
  }
  return OkStatus();
}

}  // namespace

Status CheckJointRelease(CovarianceType type, const JointNoiseScales& split,
                         double noise_multiplier, Eigen::Index components,
                         Eigen::Index dimension, NoiseSampling sampling) {
  DPEM_RETURN_IF_ERROR(ValidateJointScales(split, noise_multiplier, sampling));
  if (sampling == NoiseSampling::kContinuous) return OkStatus();
  const Eigen::Index second = type == CovarianceType::kFull ? dimension * (dimension + 1) / 2
                              : type == CovarianceType::kDiagonal ? dimension
                                                                   : 1;
  const Eigen::Index m = components * (1 + dimension + second);
  return PlanJointGrid(type, split, noise_multiplier, m).status();
}

Status ReleaseJointStatistics(GmmStatistics& stats, const JointNoiseScales& split,
                              double noise_multiplier, const std::string& label,
                              Generator& gen, PrivacyLedger& ledger, NoiseSampling sampling) {
  DPEM_RETURN_IF_ERROR(ValidateJointRelease(stats, split, noise_multiplier, sampling));
  if (sampling == NoiseSampling::kDiscrete) {
    DPEM_RETURN_IF_ERROR(ReleaseDiscrete(stats, split, noise_multiplier, label, gen, ledger));
  } else {
    DPEM_RETURN_IF_ERROR(ReleaseContinuous(stats, split, noise_multiplier, label, gen, ledger));
  }
  stats.log_likelihood = std::numeric_limits<double>::quiet_NaN();
  return OkStatus();
}

}  // namespace dpem
