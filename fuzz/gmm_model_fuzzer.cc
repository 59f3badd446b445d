// libFuzzer target: GmmModelIo::FromJson on arbitrary text. Any crash, sanitizer
// report or uncaught exception is a bug; a model that parses must pass
// ValidateParameters again.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dpem/models/gmm/gmm_model_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const dpem::StatusOr<dpem::GmmFit> fit = dpem::GmmModelIo::FromJson(text);
  if (fit.ok() && !dpem::ValidateParameters(fit->parameters).ok()) std::abort();
  return 0;
}
