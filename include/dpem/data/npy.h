// NumPy .npy files (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
//
// Read: format versions 1.0, 2.0 and 3.0; C order only; shape (N, d), or (N,)
// read as N x 1; dtypes '<f8' (bit-exact), '<f4' (converted exactly to
// double), and the little-endian integer types i1, i2, i4, i8, u1, u2, u4, u8
// (e.g. '|u1', '<i8'), converted to the nearest double (exact up to 2^53 in
// magnitude). Big-endian, complex, boolean, half-precision, string, object and
// structured dtypes are refused. Regular files are memory-mapped: ReadNpy
// converts the mapping into a matrix; OpenNpyRowSource reads it in place, so
// a file larger than memory streams through the fitting engine.
//
// Thread safety: both functions are reentrant (see io.h for concurrent writes
// to the same path). Requires a little-endian host (checked at compile time).
#ifndef DPEM_DATA_NPY_H_
#define DPEM_DATA_NPY_H_

#include <memory>
#include <string>

#include "dpem/data/matrix.h"
#include "dpem/data/row_source.h"
#include "dpem/status.h"

namespace dpem {

// Reads an .npy file as an N x d matrix, N >= 1, d >= 1, all values finite.
// Errors (one line naming `path`): NotFound for a missing file; IoError if it
// cannot be read; InvalidArgument for a bad magic string, an unsupported
// version, a truncated or unparsable header, a missing or unexpected header
// key, fortran_order True, a big-endian or unsupported dtype, a shape that is
// not 1- or 2-dimensional or has a zero dimension, data shorter or longer than
// the shape says, and NaN or infinite values (named by 1-based row and
// column).
StatusOr<DataMatrix> ReadNpy(const std::string& path);

// The .npy file at `path` as a memory-mapped RowSource: '<f8' blocks are
// views of the mapping (no copy), other dtypes are converted per block. The
// whole file is scanned once at opening for non-finite values. Errors as
// ReadNpy's, plus IoError for a file that cannot be mapped (not a regular
// file), and InvalidArgument for '<f8' data at an offset that is not a
// multiple of 8. The source keeps the mapping alive.
StatusOr<std::unique_ptr<RowSource>> OpenNpyRowSource(const std::string& path);

// Writes `x` as a version 1.0 .npy file: dtype '<f8', C order, shape (N, d)
// (always 2-dimensional), header padded with spaces to a multiple of 64 bytes
// and ending in '\n'. Atomic: written to `path + ".tmp.<pid>"` then renamed.
// InvalidArgument if `x` is empty or has a non-finite value; IoError naming
// `path` if it cannot be written.
Status WriteNpy(const std::string& path, const DataMatrix& x);

}  // namespace dpem

#endif  // DPEM_DATA_NPY_H_
