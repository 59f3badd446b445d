#include "dpem/data/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>
#include <vector>

#include "dpem/data/io.h"
#include "internal/file_util.h"
#include "internal/text.h"

namespace dpem {
namespace {

enum class FieldKind { kNumber, kNotNumber, kNonFinite, kOverflow };

struct ParsedField {
  FieldKind kind = FieldKind::kNotNumber;
  double value = 0.0;
};

bool IsBlankChar(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), IsBlankChar);
}

// The decimal exponent of the exponent part starting at s[i] ('e' or 'E'),
// capped in magnitude so that it cannot overflow; 0 if there is none.
long ExponentPart(std::string_view s, std::size_t i) {
  if (i >= s.size() || (s[i] != 'e' && s[i] != 'E')) return 0;
  ++i;
  const bool negative = i < s.size() && s[i] == '-';
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  long e = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    e = std::min(e * 10 + (s[i] - '0'), 1000000000L);
  }
  return negative ? -e : e;
}

// For a decimal number that std::from_chars found out of the range of double:
// true if its magnitude is below 1 (so it underflowed), false if it overflowed.
bool IsUnderflow(std::string_view s) {
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  long int_digits = 0;  // Significant digits before the point.
  long leading_fraction_zeros = 0;
  bool seen_nonzero = false;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    if (seen_nonzero || s[i] != '0') seen_nonzero = true, ++int_digits;
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && IsDigit(s[i]); ++i) {
      if (seen_nonzero) continue;
      if (s[i] == '0') ++leading_fraction_zeros; else seen_nonzero = true;
    }
  }
  const long order =
      int_digits > 0 ? int_digits - 1 : -(leading_fraction_zeros + 1);
  return order + ExponentPart(s, i) < 0;
}

// Parses one trimmed field as a finite double.
ParsedField ParseField(std::string_view f) {
  if (f.size() > 1 && f[0] == '+' && f[1] != '-' && f[1] != '+') {
    f.remove_prefix(1);
  }
  if (f.empty()) return {};
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ptr != f.data() + f.size() || ec == std::errc::invalid_argument) return {};
  if (ec == std::errc::result_out_of_range) {
    if (!IsUnderflow(f)) return {FieldKind::kOverflow, 0.0};
    return {FieldKind::kNumber, f[0] == '-' ? -0.0 : 0.0};
  }
  if (!std::isfinite(v)) return {FieldKind::kNonFinite, v};
  return {FieldKind::kNumber, v};
}

// Calls visit(field, column) for each comma-separated field of `line`, with
// spaces and tabs trimmed; `column` is the 1-based position of the field's
// first non-blank character. Stops early when visit returns false.
template <typename Visit>
void ForEachField(std::string_view line, Visit visit) {
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    std::size_t b = start;
    while (b < end && IsBlankChar(line[b])) ++b;
    std::size_t e = end;
    while (e > b && IsBlankChar(line[e - 1])) --e;
    if (!visit(line.substr(b, e - b), b + 1)) return;
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

std::string FieldProblem(FieldKind kind, std::string_view field) {
  switch (kind) {
    case FieldKind::kNonFinite:
      return "value " + internal::QuoteForMessage(field) + " is not finite (NaN and infinities are "
             "not accepted)";
    case FieldKind::kOverflow:
      return "value " + internal::QuoteForMessage(field) + " is out of the range of double";
    case FieldKind::kNotNumber:
    case FieldKind::kNumber:
      break;
  }
  if (field.empty()) return "empty field, expected a number";
  return "field " + internal::QuoteForMessage(field) + " is not a number";
}

class CsvReader {
 public:
  CsvReader(const std::string& path, std::string_view text)
      : path_(path), text_(text) {}

  StatusOr<DataMatrix> Read();

 private:
  Status Error(std::size_t line, std::size_t column, const std::string& what) const {
    return InvalidArgumentError(path_ + ":" + std::to_string(line) + ":" +
                                std::to_string(column) + ": " + what);
  }
  Status CheckNoNul() const;
  Status ParseRecord(std::string_view line);
  StatusOr<DataMatrix> Finish() const;

  const std::string& path_;
  std::string_view text_;
  std::size_t line_no_ = 0;
  Eigen::Index cols_ = 0;
  std::size_t first_data_line_ = 0;
  std::vector<double> values_;
};

bool IsHeader(std::string_view line) {
  bool any_number = false;
  ForEachField(line, [&](std::string_view field, std::size_t) {
    any_number = ParseField(field).kind != FieldKind::kNotNumber;
    return !any_number;
  });
  return !any_number;
}

Status CsvReader::CheckNoNul() const {
  const std::size_t pos = text_.find('\0');
  if (pos == std::string_view::npos) return OkStatus();
  const std::string_view before = text_.substr(0, pos);
  const std::size_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const std::size_t last_nl = before.rfind('\n');
  const std::size_t column =
      last_nl == std::string_view::npos ? pos + 1 : pos - last_nl;
  return Error(line, column, "binary content (NUL byte), not a CSV text file");
}

Status CsvReader::ParseRecord(std::string_view line) {
  Eigen::Index count = 0;
  Status status;
  ForEachField(line, [&](std::string_view field, std::size_t column) {
    if (cols_ != 0 && count == cols_) {
      status = Error(line_no_, column,
                     "too many fields, expected " + std::to_string(cols_) +
                         " as on line " + std::to_string(first_data_line_));
      return false;
    }
    const ParsedField parsed = ParseField(field);
    if (parsed.kind != FieldKind::kNumber) {
      status = Error(line_no_, column, FieldProblem(parsed.kind, field));
      return false;
    }
    values_.push_back(parsed.value);
    ++count;
    return true;
  });
  DPEM_RETURN_IF_ERROR(status);
  if (cols_ == 0) {
    cols_ = count;
    first_data_line_ = line_no_;
  } else if (count < cols_) {
    return Error(line_no_, line.size() + 1,
                 "too few fields: " + std::to_string(count) + ", expected " +
                     std::to_string(cols_) + " as on line " +
                     std::to_string(first_data_line_));
  }
  return OkStatus();
}

StatusOr<DataMatrix> CsvReader::Read() {
  DPEM_RETURN_IF_ERROR(CheckNoNul());
  if (text_.empty()) return Error(1, 1, "empty file, no data rows");
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  std::size_t blank_line = 0;
  std::size_t pos = 0;
  while (pos < text_.size()) {
    const std::size_t nl = text_.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
    std::string_view line = text_.substr(pos, end - pos);
    pos = end + 1;
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsBlank(line)) {
      if (blank_line == 0) blank_line = line_no_;
      continue;
    }
    if (blank_line != 0) {
      return Error(blank_line, 1, "blank line before the end of the data");
    }
    if (line_no_ == 1 && IsHeader(line)) continue;
    DPEM_RETURN_IF_ERROR(ParseRecord(line));
  }
  return Finish();
}

StatusOr<DataMatrix> CsvReader::Finish() const {
  if (values_.empty()) {
    return Error(line_no_ + 1, 1, "no data rows (only a header or blank lines)");
  }
  const Eigen::Index rows = static_cast<Eigen::Index>(values_.size()) / cols_;
  return DataMatrix(Eigen::Map<const DataMatrix>(values_.data(), rows, cols_));
}

}  // namespace

StatusOr<DataMatrix> ReadCsv(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(const std::string text, internal::ReadFileToString(path));
  return CsvReader(path, text).Read();
}

Status WriteCsv(const std::string& path, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(internal::ValidateMatrixForWriting(path, x));
  DPEM_ASSIGN_OR_RETURN(internal::AtomicFileWriter file,
                        internal::AtomicFileWriter::Create(path));
  constexpr std::size_t kFlushAt = std::size_t{1} << 20;
  std::string buffer;
  buffer.reserve(kFlushAt + 64 * static_cast<std::size_t>(x.cols()));
  char number[64];
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      if (j > 0) buffer += ',';
      const auto result = std::to_chars(number, number + sizeof(number), x(i, j));
      buffer.append(number, result.ptr);
    }
    buffer += '\n';
    if (buffer.size() >= kFlushAt) {
      DPEM_RETURN_IF_ERROR(file.Append(buffer));
      buffer.clear();
    }
  }
  DPEM_RETURN_IF_ERROR(file.Append(buffer));
  return file.Commit();
}

}  // namespace dpem
