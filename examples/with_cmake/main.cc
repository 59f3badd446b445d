// Calibrates the noise of a private 3-component mixture fit with an installed
// dpem, checks the re-accounted guarantee, and runs a private fit through the
// library's pipeline (RunFit). Exit code 0 on success.
#include <cstdio>

#include "dpem/accounting/calibration.h"
#include "dpem/data/row_source.h"
#include "dpem/models/gmm/gmm_fit_task.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

namespace {

// A seeded private fit of 400 records in two clusters, through RunFit:
// true if it ran and certified at most its target epsilon.
bool PipelineFitWorks() {
  dpem::Generator data_gen = dpem::Generator::FromSeed(2);
  dpem::DataMatrix x(400, 2);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      x(i, j) = (i % 2 ? 3.0 : -3.0) + dpem::SampleGaussian(data_gen, 0.5).value();
    }
  }
  dpem::StatusOr<dpem::MatrixRowSource> source = dpem::MatrixRowSource::Borrow(x);
  if (!source.ok()) return false;
  dpem::GmmFitOptions options;
  options.components = 2;
  options.epsilon = 1.0;
  options.delta = 1e-5;
  options.domain.data_norm = 6.0;
  dpem::GmmFitTask task = dpem::MakeGmmFitTask(options);
  dpem::FitRequest request;
  request.source = &*source;
  request.seed = 3;  // Reproducible, hence NOT private: the guarantee is void.
  const dpem::Status status = dpem::RunFit(task, request);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return false;
  }
  const dpem::GmmGuarantee& g = task.fitted().guarantee;
  std::printf("pipeline fit: %zu releases, epsilon %.4f (target %.1f), void: %s\n",
              g.ledger.size(), g.epsilon, g.target_epsilon, g.guarantee_void ? "yes" : "no");
  return g.epsilon <= g.target_epsilon && g.guarantee_void;
}

}  // namespace

int main() {
  dpem::CalibrationOptions options;
  options.epsilon = 1.0;
  options.delta = 1e-5;
  options.iterations = 10;
  dpem::StatusOr<dpem::ReleasePattern> pattern = dpem::GggPattern(3);
  if (!pattern.ok()) return 1;
  options.pattern = *pattern;
  dpem::StatusOr<dpem::CalibrationResult> result = dpem::Calibrate(options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
    return 1;
  }
  dpem::Generator gen = dpem::Generator::FromSeed(1);
  dpem::StatusOr<double> noise = dpem::SampleGaussian(gen, result->noise_multipliers[0]);
  std::printf("noise multiplier %.4f, re-accounted epsilon %.6f at delta %g, a draw %.3f\n",
              result->noise_multipliers[0], result->epsilon, result->delta,
              noise.ok() ? *noise : 0.0);
  const bool pipeline = PipelineFitWorks();
  return result->epsilon <= options.epsilon && noise.ok() && pipeline ? 0 : 1;
}
