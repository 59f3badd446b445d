// DP gradient EM (wang-dp-gradient-em) as a task of the private-fit pipeline
// (dpem/pipeline/fit_pipeline.h). Its records carry their own layout (y, x,
// z per model: FromDataMatrix) and its own clipping, so it has no public
// domain to release; its result is a "dpem-gradient-em" model file
// (gradient_em_model_io.h), which the pipeline writes to the request's
// output and `dpem score` reads.
//
// Thread safety: one RunFit at a time per task.
#ifndef DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_FIT_TASK_H_
#define DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_FIT_TASK_H_

#include <string>
#include <utility>

#include "dpem/models/gradient_em/gradient_em.h"
#include "dpem/pipeline/fit_pipeline.h"

namespace dpem {

class GradientEmFitTask final : public FitTask {
 public:
  // Fits `model` with `options` (as FitGradientEm); ModelJson lists
  // beta^0..beta^T too if `trajectory`.
  GradientEmFitTask(GradientEmModel model, GradientEmOptions options, bool trajectory)
      : model_(model), options_(std::move(options)), trajectory_(trajectory) {}

  Status Validate() const override;
  // What the accountant certifies for the calibrated noise, never less than
  // the target (GradientEmChargedEpsilon); infinite for the plain method.
  StatusOr<double> ChargedEpsilon() const override;
  double ChargedDelta() const override { return options_.delta; }
  DataDomain* MutableDomain() override { return nullptr; }
  double* MutableEpsilon() override { return &options_.epsilon; }
  Status Fit(const RowSource& x, Generator& gen) override;
  PrivacyGuarantee& MutableGuarantee() override { return fit_.guarantee; }
  // The model file (GradientEmModelIo::ToJson), with beta^0..beta^T if
  // `trajectory`.
  std::string ModelJson() const override;

  // The fit, after a successful RunFit.
  const GradientEmFit& fit() const { return fit_; }

 private:
  GradientEmModel model_;
  GradientEmOptions options_;
  bool trajectory_;
  Eigen::Index n_ = 0;
  GradientEmFit fit_;
};

}  // namespace dpem

#endif  // DPEM_MODELS_GRADIENT_EM_GRADIENT_EM_FIT_TASK_H_
