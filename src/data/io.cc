#include "dpem/data/io.h"


#include <cmath>

#include "dpem/data/csv.h"
#include "dpem/data/npy.h"
#include "internal/file_util.h"

namespace dpem {
namespace {

enum class Format { kCsv, kNpy, kUnknown };

// The extension of the last path component, lower-cased, without the dot.
std::string LowerExtension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return "";
  }
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

Format FormatOf(const std::string& path) {
  const std::string ext = LowerExtension(path);
  if (ext == "csv") return Format::kCsv;
  if (ext == "npy") return Format::kNpy;
  return Format::kUnknown;
}

Status UnsupportedFormat(const std::string& path, const char* direction) {
  const std::string ext = LowerExtension(path);
  return InvalidArgumentError(
      path + ": unsupported " + direction + " format '" +
      (ext.empty() ? std::string("(no extension)") : "." + ext) +
      "' (accepted: .csv, .npy)");
}

}  // namespace

StatusOr<DataMatrix> ReadMatrix(const std::string& path) {
  switch (FormatOf(path)) {
    case Format::kCsv: return ReadCsv(path);
    case Format::kNpy: return ReadNpy(path);
    case Format::kUnknown: break;
  }
  return UnsupportedFormat(path, "input");
}

StatusOr<std::unique_ptr<RowSource>> OpenRowSource(const std::string& path) {
  switch (FormatOf(path)) {
    case Format::kCsv: {
      DPEM_ASSIGN_OR_RETURN(DataMatrix x, ReadCsv(path));
      DPEM_ASSIGN_OR_RETURN(MatrixRowSource source, MatrixRowSource::Own(std::move(x)));
      return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(source)));
    }
    case Format::kNpy: {
      StatusOr<std::unique_ptr<RowSource>> mapped = OpenNpyRowSource(path);
      if (mapped.ok() || mapped.status().code() != StatusCode::kIoError) return mapped;
      // Not mappable (a pipe, say): read it into memory.
      DPEM_ASSIGN_OR_RETURN(DataMatrix x, ReadNpy(path));
      DPEM_ASSIGN_OR_RETURN(MatrixRowSource source, MatrixRowSource::Own(std::move(x)));
      return std::unique_ptr<RowSource>(std::make_unique<MatrixRowSource>(std::move(source)));
    }
    case Format::kUnknown: break;
  }
  return UnsupportedFormat(path, "input");
}

Status WriteMatrix(const std::string& path, const DataMatrix& x) {
  switch (FormatOf(path)) {
    case Format::kCsv: return WriteCsv(path, x);
    case Format::kNpy: return WriteNpy(path, x);
    case Format::kUnknown: break;
  }
  return UnsupportedFormat(path, "output");
}

namespace internal {

Status ValidateMatrixForWriting(const std::string& path, const DataMatrix& x) {
  if (x.rows() == 0 || x.cols() == 0) {
    return InvalidArgumentError(path + ": refusing to write an empty matrix (" +
                                std::to_string(x.rows()) + " x " +
                                std::to_string(x.cols()) + ")");
  }
  if (x.allFinite()) return OkStatus();
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      if (std::isfinite(x(i, j))) continue;
      return InvalidArgumentError(
          path + ": refusing to write a non-finite value at row " +
          std::to_string(i + 1) + ", column " + std::to_string(j + 1));
    }
  }
  return OkStatus();
}

}  // namespace internal
}  // namespace dpem
