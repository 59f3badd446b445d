// Reading and writing data matrices by file name: the format is chosen by the
// extension, ".csv" (csv.h) or ".npy" (npy.h), compared case-insensitively.
//
// Every reader returns only finite values and at least one row and one column;
// every writer writes atomically (a temporary file `path + ".tmp.<pid>"` is
// renamed over `path`), so a failed write never leaves a partial file at
// `path`.
//
// Thread safety: all functions are reentrant. Concurrent writes to the same
// path from one process are not supported (they share the temporary name).
#ifndef DPEM_DATA_IO_H_
#define DPEM_DATA_IO_H_

#include <memory>
#include <string>
#include <string_view>

#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/status.h"

namespace dpem {

// Reads `path` with ReadCsv or ReadNpy according to its extension. Any other
// extension: InvalidArgument "unsupported input format ... (accepted: .csv,
// .npy)".
StatusOr<DataMatrix> ReadMatrix(const std::string& path);

// `path` as a RowSource for the fitting engine: .npy files memory-mapped
// (OpenNpyRowSource; read into memory if they cannot be mapped), .csv files
// parsed into memory. Errors as ReadMatrix's.
StatusOr<std::unique_ptr<RowSource>> OpenRowSource(const std::string& path);

// Writes `x` to `path` with WriteCsv or WriteNpy according to its extension;
// other extensions are refused as in ReadMatrix. Precondition: none (an empty
// or non-finite `x` is refused with InvalidArgument by the writers).
Status WriteMatrix(const std::string& path, const DataMatrix& x);

}  // namespace dpem

#endif  // DPEM_DATA_IO_H_
