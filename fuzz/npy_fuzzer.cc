// libFuzzer target: ReadNpy and OpenNpyRowSource on arbitrary bytes. Any
// crash, sanitizer report, or a matrix breaking the reader's contract (empty,
// non-finite) is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "dpem/data/npy.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = dpem::fuzzing::AsFile(data, size);
  const dpem::StatusOr<dpem::DataMatrix> x = dpem::ReadNpy(path);
  if (x.ok() && (x->rows() < 1 || x->cols() < 1 || !x->allFinite())) std::abort();
  // An error message is one line (header text is quoted, control bytes '?').
  if (!x.ok() && x.status().message().find('\n') != std::string::npos) std::abort();
  const auto source = dpem::OpenNpyRowSource(path);
  // The mapped reader refuses a superset of what ReadNpy refuses.
  if (source.ok() && !x.ok()) std::abort();
  return 0;
}
