#include "dpem/mechanisms/simplex.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace dpem {
namespace {

Status ValidateSimplexArguments(const Eigen::VectorXd& v, double floor) {
  if (v.size() == 0) {
    return InvalidArgumentError("ProjectToSimplex: the vector is empty");
  }
  if (!v.allFinite()) {
    return InvalidArgumentError(
        "ProjectToSimplex: the vector has a NaN or infinite entry");
  }
  if (!(std::isfinite(floor) && floor >= 0.0)) {
    return InvalidArgumentError("ProjectToSimplex: floor must be finite, >= 0");
  }
  if (!(static_cast<double>(v.size()) * floor < 1.0)) {
    return InvalidArgumentError(
        "ProjectToSimplex: K * floor must be < 1 for a non-trivial simplex");
  }
  return OkStatus();
}

// Duchi et al. (2008), Fig. 1: the threshold theta of the projection of `u`
// onto {x >= 0, sum x = radius}; the projection is max(u - theta, 0).
double SimplexThreshold(const Eigen::VectorXd& u, double radius) {
  std::vector<double> sorted(u.data(), u.data() + u.size());
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  double cumulative = 0.0;
  double theta = 0.0;
  for (std::size_t j = 0; j < sorted.size(); ++j) {
    cumulative += sorted[j];
    const double candidate = (cumulative - radius) / static_cast<double>(j + 1);
    // rho is the largest j with sorted[j] - candidate > 0; j = 0 always
    // qualifies, and the condition holds exactly for a prefix.
    if (j == 0 || sorted[j] - candidate > 0.0) theta = candidate;
  }
  return theta;
}

}  // namespace

StatusOr<Eigen::VectorXd> ProjectToSimplex(const Eigen::VectorXd& v,
                                           double floor) {
  DPEM_RETURN_IF_ERROR(ValidateSimplexArguments(v, floor));
  const double radius = 1.0 - static_cast<double>(v.size()) * floor;
  const Eigen::VectorXd shifted = v.array() - floor;
  const double theta = SimplexThreshold(shifted, radius);
  Eigen::VectorXd w = (shifted.array() - theta).cwiseMax(0.0) + floor;
  return w;
}

}  // namespace dpem
