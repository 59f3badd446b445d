// Synthetic data of the three models of wang-dp-gradient-em (eq. 4-6), every
// draw from dpem's Generator and samplers.
//
//   gmm: y = Z beta* + V,          Z Rademacher, V ~ N(0, sigma^2 I_d)
//   mrm: y = Z <beta*, x> + V,     x ~ N(0, I_d), V ~ N(0, sigma^2)
//   rmc: y = <x, beta*> + V,       x ~ N(0, I_d), each x_j missing with
//                                  probability p_m (independently)
// beta* is uniform on the sphere of radius snr * sigma (Appendix J: SNR =
// ||beta*||_2 / sigma).
//
// Thread safety: as safe as the Generator passed in.
#ifndef DPEM_DATA_GENERATORS_H_
#define DPEM_DATA_GENERATORS_H_

#include <limits>

#include <Eigen/Core>

#include "dpem/data/matrix.h"
#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/random/generator.h"
#include "dpem/status.h"

namespace dpem {

struct GeneratorOptions {
  GradientEmModel model = GradientEmModel::kGmm;
  Eigen::Index n = 0;  // >= 1; no default.
  Eigen::Index d = 0;  // >= 1; no default.
  double snr = std::numeric_limits<double>::quiet_NaN();  // > 0; no default.
  double sigma = 1.0;            // > 0.
  double missing_prob = 0.0;     // rmc only, in [0, 1).
  Status Validate() const;
};

struct GeneratedData {
  GradientEmData data;
  Eigen::VectorXd beta;  // beta*.
  double sigma = 0.0;
};

// Draws beta* and n records of the model.
StatusOr<GeneratedData> GenerateGradientEmData(const GeneratorOptions& o, Generator& gen);

// The records as one matrix, the documented CSV layout of `dpem generate`:
//   gmm: y_1 .. y_d
//   mrm: y, x_1 .. x_d
//   rmc: y, x_1 .. x_d, z_1 .. z_d  (z_j = 1 observed, 0 missing; a missing
//        x_j is written as 0)
DataMatrix ToDataMatrix(const GradientEmData& data);

// The inverse of ToDataMatrix for `model`: InvalidArgument if the number of
// columns does not fit (mrm: >= 2; rmc: odd and >= 3) or values are invalid.
StatusOr<GradientEmData> FromDataMatrix(GradientEmModel model, const DataMatrix& m);

}  // namespace dpem

#endif  // DPEM_DATA_GENERATORS_H_
