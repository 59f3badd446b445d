// libFuzzer target: ReadCsv on arbitrary bytes. Any crash, sanitizer report,
// or a returned matrix that breaks the reader's contract (empty, non-finite)
// is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "dpem/data/csv.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dpem::StatusOr<dpem::DataMatrix> x = dpem::ReadCsv(dpem::fuzzing::AsFile(data, size));
  if (x.ok() && (x->rows() < 1 || x->cols() < 1 || !x->allFinite())) std::abort();
  if (!x.ok() && x.status().message().find('\n') != std::string::npos) std::abort();
  return 0;
}
