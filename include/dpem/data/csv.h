// Comma-separated text files of numbers: one record per line, one feature per
// field.
//
// Accepted input: fields separated by ',', surrounded by optional spaces or
// tabs; numbers as std::from_chars reads them (decimal or scientific, an
// optional leading '+' is also accepted; no hexadecimal, no thousands
// separators); "\n" or "\r\n" line ends; an optional UTF-8 byte-order mark;
// blank lines only at the end. Line 1 is a header, and skipped, if and only if
// none of its fields parses as a number. Values whose magnitude underflows
// double become (signed) zero; overflow (1e999), NaN and infinities are
// errors.
//
// Thread safety: both functions are reentrant (see io.h for concurrent writes
// to the same path).
#ifndef DPEM_DATA_CSV_H_
#define DPEM_DATA_CSV_H_

#include <string>

#include "dpem/data/matrix.h"
#include "dpem/status.h"

namespace dpem {

// Reads a CSV file of N >= 1 records with the same number d >= 1 of fields.
// Errors (messages "<path>:<line>:<column>: <what>", 1-based): NotFound for a
// missing file; IoError if it cannot be read; InvalidArgument for an empty
// file or one with no data rows, a ragged row, a blank line before the last
// data row, a field that is not a number (including trailing garbage such as
// "1.5x"), NaN, infinite or overflowing values, and binary content (a NUL
// byte). The whole file is read into memory at once.
StatusOr<DataMatrix> ReadCsv(const std::string& path);

// Writes `x` as CSV without a header: one row per line ending in "\n", values
// in the shortest form that reads back bit-exactly (std::to_chars, at most 17
// significant digits). Atomic: written to `path + ".tmp.<pid>"` then renamed,
// so a failure leaves no partial file at `path`. InvalidArgument if `x` is
// empty or has a non-finite value (ReadCsv would refuse the file); IoError
// naming `path` if it cannot be written (e.g. its directory is missing).
Status WriteCsv(const std::string& path, const DataMatrix& x);

}  // namespace dpem

#endif  // DPEM_DATA_CSV_H_
