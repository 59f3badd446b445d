// Calibrates the noise of a private 3-component mixture fit with an installed
// dpem, and checks the re-accounted guarantee. Exit code 0 on success.
#include <cstdio>

#include "dpem/accounting/calibration.h"
#include "dpem/random/generator.h"
#include "dpem/random/samplers.h"

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
  return result->epsilon <= options.epsilon && noise.ok() ? 0 : 1;
}
