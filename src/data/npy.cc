#include "dpem/data/npy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "dpem/data/io.h"
#include "dpem/data/row_source.h"
#include "internal/file_util.h"
#include "internal/text.h"

namespace dpem {
namespace {

static_assert(std::endian::native == std::endian::little,
              "dpem's .npy reader and writer assume a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr int kMaxNesting = 32;

// The three entries of an .npy header dictionary.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// A parsed Python literal; only what an .npy header needs is kept.
struct PyValue {
  enum class Kind { kString, kBool, kInt, kTuple, kOther } kind = Kind::kOther;
  std::string text;                 // kString
  bool boolean = false;             // kBool
  std::uint64_t integer = 0;        // kInt
  std::vector<std::uint64_t> ints;  // kTuple, when every element is a kInt
  bool all_ints = true;             // kTuple
};

// A recursive-descent parser of the Python dict literal in an .npy header.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}
  // The header, or nullopt with error() set.
  std::optional<NpyHeader> Parse();
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at header offset " + std::to_string(pos_);
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool ConsumeWord(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool ParseString(std::string* out);
  bool ParseInt(std::uint64_t* out);
  bool ParseSequence(char close, int depth, PyValue* out);
  bool ParseValue(int depth, PyValue* out);
  bool ParseEntry(NpyHeader* header, unsigned* seen);

  std::string_view s_;
  std::size_t pos_ = 0;
  std::string error_;
};

bool HeaderParser::ParseString(std::string* out) {
  SkipSpace();
  if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
    return Fail("expected a quoted string");
  }
  const char quote = s_[pos_++];
  out->clear();
  while (pos_ < s_.size() && s_[pos_] != quote) {
    if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
    *out += s_[pos_++];
  }
  if (pos_ >= s_.size()) return Fail("unterminated string");
  ++pos_;
  return true;
}

bool HeaderParser::ParseInt(std::uint64_t* out) {
  const std::size_t start = pos_;
  std::uint64_t v = 0;
  for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
    const std::uint64_t digit = static_cast<std::uint64_t>(s_[pos_] - '0');
    if (v > (UINT64_MAX - digit) / 10) return Fail("integer too large");
    v = v * 10 + digit;
  }
  if (pos_ == start) return Fail("expected an integer");
  if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;
  *out = v;
  return true;
}

// A tuple or list after its opening bracket, up to and including `close`.
bool HeaderParser::ParseSequence(char close, int depth, PyValue* out) {
  out->kind = close == ')' ? PyValue::Kind::kTuple : PyValue::Kind::kOther;
  while (!Consume(close)) {
    PyValue element;
    if (!ParseValue(depth + 1, &element)) return false;
    if (element.kind == PyValue::Kind::kInt) {
      out->ints.push_back(element.integer);
    } else {
      out->all_ints = false;
    }
    if (!Consume(',')) {
      if (Consume(close)) return true;
      return Fail(std::string("expected ',' or '") + close + "'");
    }
  }
  return true;
}

bool HeaderParser::ParseValue(int depth, PyValue* out) {
  if (depth > kMaxNesting) return Fail("nesting too deep");
  SkipSpace();
  if (pos_ >= s_.size()) return Fail("unexpected end of header");
  const char c = s_[pos_];
  if (c == '\'' || c == '"') {
    out->kind = PyValue::Kind::kString;
    return ParseString(&out->text);
  }
  if (c == '(' || c == '[') {
    ++pos_;
    return ParseSequence(c == '(' ? ')' : ']', depth, out);
  }
  if (c >= '0' && c <= '9') {
    out->kind = PyValue::Kind::kInt;
    return ParseInt(&out->integer);
  }
  if (ConsumeWord("True") || ConsumeWord("False")) {
    out->kind = PyValue::Kind::kBool;
    out->boolean = s_.substr(0, pos_).ends_with("True");
    return true;
  }
  if (ConsumeWord("None")) return true;
  return Fail("expected a value");
}

bool HeaderParser::ParseEntry(NpyHeader* header, unsigned* seen) {
  std::string key;
  if (!ParseString(&key)) return false;
  if (!Consume(':')) return Fail("expected ':' after key " + internal::QuoteForMessage(key));
  PyValue value;
  if (!ParseValue(0, &value)) return false;
  const unsigned bit = key == "descr" ? 1u : key == "fortran_order" ? 2u
                       : key == "shape" ? 4u : 0u;
  if (bit == 0) return Fail("unexpected key " + internal::QuoteForMessage(key));
  if (*seen & bit) return Fail("duplicate key " + internal::QuoteForMessage(key));
  *seen |= bit;
  if (bit == 1 && value.kind != PyValue::Kind::kString) {
    return Fail("'descr' is not a simple dtype string (structured dtypes are "
                "not supported)");
  }
  if (bit == 2 && value.kind != PyValue::Kind::kBool) {
    return Fail("'fortran_order' is not True or False");
  }
  if (bit == 4 && !(value.kind == PyValue::Kind::kTuple && value.all_ints)) {
    return Fail("'shape' is not a tuple of integers");
  }
  if (bit == 1) header->descr = value.text;
  if (bit == 2) header->fortran_order = value.boolean;
  if (bit == 4) header->shape = value.ints;
  return true;
}

std::optional<NpyHeader> HeaderParser::Parse() {
  NpyHeader header;
  unsigned seen = 0;
  bool ok = Consume('{') || Fail("expected '{'");
  while (ok && !Consume('}')) {
    ok = ParseEntry(&header, &seen);
    if (ok && !Consume(',')) {
      ok = Consume('}') || Fail("expected ',' or '}'");
      break;
    }
  }
  SkipSpace();
  ok = ok && (pos_ == s_.size() || Fail("unexpected text after '}'"));
  ok = ok && (seen == 7u ||
              Fail("missing key (need 'descr', 'fortran_order' and 'shape')"));
  if (!ok) return std::nullopt;
  return header;
}

// Supported element types.
enum class Kind { kFloat, kSigned, kUnsigned };
struct Dtype {
  Kind kind = Kind::kFloat;
  std::size_t size = 8;
};

Status BadFile(const std::string& path, const std::string& what) {
  return InvalidArgumentError(path + ": " + what);
}

StatusOr<Dtype> ParseDtype(const std::string& path, const std::string& descr) {
  const std::string accepted =
      " (accepted: '<f8', '<f4', and little-endian integer types such as "
      "'<i8', '<i4', '|u1', converted to double)";
  const std::string unsupported =
      "unsupported dtype " + internal::QuoteForMessage(descr) + accepted;
  if (descr.size() < 3) return BadFile(path, unsupported);
  const char order = descr[0];
  const char kind = descr[1];
  const std::string size_text = descr.substr(2);
  std::size_t size = 0;
  if (size_text == "1" || size_text == "2" || size_text == "4" || size_text == "8") {
    size = static_cast<std::size_t>(size_text[0] - '0');
  }
  const bool little = order == '<' || order == '=' || (size == 1 && (order == '|' || order == '>'));
  if (order == '>' && size != 1 && (kind == 'f' || kind == 'i' || kind == 'u')) {
    return BadFile(path, "big-endian dtype " + internal::QuoteForMessage(descr) +
                             " is not supported; convert with "
                             "arr.astype(arr.dtype.newbyteorder('<'))");
  }
  if (little && kind == 'f' && (size == 4 || size == 8)) return Dtype{Kind::kFloat, size};
  if (little && kind == 'i' && size != 0) return Dtype{Kind::kSigned, size};
  if (little && kind == 'u' && size != 0) return Dtype{Kind::kUnsigned, size};
  return BadFile(path, unsupported);
}

std::string ShapeText(const std::vector<std::uint64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Rows and columns of a (N,) or (N, d) shape, each >= 1, with N * d * item
// bytes representable.
StatusOr<std::pair<Eigen::Index, Eigen::Index>> ParseShape(
    const std::string& path, const std::vector<std::uint64_t>& shape,
    std::size_t item) {
  if (shape.empty() || shape.size() > 2) {
    return BadFile(path, "shape " + ShapeText(shape) +
                             " is not supported (need (N, d) or (N,))");
  }
  const std::uint64_t rows = shape[0];
  const std::uint64_t cols = shape.size() == 2 ? shape[1] : 1;
  if (rows == 0 || cols == 0) {
    return BadFile(path, "empty array, shape " + ShapeText(shape));
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(rows, cols, &bytes) ||
      __builtin_mul_overflow(bytes, item, &bytes) ||
      bytes > static_cast<std::uint64_t>(INT64_MAX)) {
    return BadFile(path, "shape " + ShapeText(shape) + " is too large");
  }
  return std::make_pair(static_cast<Eigen::Index>(rows),
                        static_cast<Eigen::Index>(cols));
}

// The header text of an .npy file and the offset of its data.
struct Layout {
  std::string_view header;
  std::size_t data_offset = 0;
};

StatusOr<Layout> ParsePreamble(const std::string& path, std::string_view file) {
  if (file.size() < 8 || file.substr(0, kMagic.size()) != kMagic) {
    return BadFile(path, "not a .npy file (bad magic string)");
  }
  const unsigned major = static_cast<unsigned char>(file[6]);
  const unsigned minor = static_cast<unsigned char>(file[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return BadFile(path, "unsupported .npy format version " +
                             std::to_string(major) + "." + std::to_string(minor));
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + len_bytes) return BadFile(path, "truncated header");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) {
    header_len |= std::size_t{static_cast<unsigned char>(file[8 + i])} << (8 * i);
  }
  const std::size_t offset = 8 + len_bytes;
  if (file.size() - offset < header_len) {
    return BadFile(path, "truncated header (" + std::to_string(header_len) +
                             " bytes announced, " +
                             std::to_string(file.size() - offset) + " present)");
  }
  return Layout{file.substr(offset, header_len), offset + header_len};
}

template <typename T>
void ConvertTo(const char* src, std::size_t count, double* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<double>(v);
  }
}

void Convert(const Dtype& t, const char* src, std::size_t count, double* dst) {
  if (t.kind == Kind::kFloat && t.size == 8) {
    std::memcpy(dst, src, count * sizeof(double));
  } else if (t.kind == Kind::kFloat) {
    ConvertTo<float>(src, count, dst);
  } else if (t.kind == Kind::kSigned) {
    if (t.size == 1) ConvertTo<std::int8_t>(src, count, dst);
    if (t.size == 2) ConvertTo<std::int16_t>(src, count, dst);
    if (t.size == 4) ConvertTo<std::int32_t>(src, count, dst);
    if (t.size == 8) ConvertTo<std::int64_t>(src, count, dst);
  } else {
    if (t.size == 1) ConvertTo<std::uint8_t>(src, count, dst);
    if (t.size == 2) ConvertTo<std::uint16_t>(src, count, dst);
    if (t.size == 4) ConvertTo<std::uint32_t>(src, count, dst);
    if (t.size == 8) ConvertTo<std::uint64_t>(src, count, dst);
  }
}

StatusOr<NpyHeader> ParseHeader(const std::string& path, std::string_view text) {
  HeaderParser parser(text);
  std::optional<NpyHeader> header = parser.Parse();
  if (!header) return BadFile(path, "unparsable header: " + parser.error());
  if (header->fortran_order) {
    return BadFile(path, "fortran_order True is not supported; save a C-order "
                         "array (np.ascontiguousarray)");
  }
  return *std::move(header);
}

// Where the values of an .npy file are and what they are.
struct NpyData {
  Dtype dtype;
  Eigen::Index rows = 0;
  Eigen::Index cols = 0;
  const char* values = nullptr;  // rows * cols items, C order.
};

StatusOr<NpyData> LocateData(const std::string& path, std::string_view file) {
  DPEM_ASSIGN_OR_RETURN(const Layout layout, ParsePreamble(path, file));
  DPEM_ASSIGN_OR_RETURN(const NpyHeader header, ParseHeader(path, layout.header));
  DPEM_ASSIGN_OR_RETURN(const Dtype dtype, ParseDtype(path, header.descr));
  DPEM_ASSIGN_OR_RETURN(const auto dims, ParseShape(path, header.shape, dtype.size));
  const std::size_t count = static_cast<std::size_t>(dims.first * dims.second);
  const std::size_t need = count * dtype.size;
  const std::size_t have = file.size() - layout.data_offset;
  if (have != need) {
    const char* what = have < need ? "data truncated" : "unexpected bytes after the data";
    return BadFile(path, std::string(what) + ": shape " + ShapeText(header.shape) + " of " +
                             internal::QuoteForMessage(header.descr) + " needs " +
                             std::to_string(need) + " bytes, the file has " +
                             std::to_string(have));
  }
  return NpyData{dtype, dims.first, dims.second, file.data() + layout.data_offset};
}

// Converts rows [start, start + count) into `out` (resized).
void ConvertRows(const NpyData& d, Eigen::Index start, Eigen::Index count, DataMatrix& out) {
  out.resize(count, d.cols);
  const std::size_t first = static_cast<std::size_t>(start * d.cols);
  Convert(d.dtype, d.values + first * d.dtype.size, static_cast<std::size_t>(count * d.cols),
          out.data());
}

// Rows per block when scanning or converting a whole file.
constexpr Eigen::Index kScanRows = 8192;

// InvalidArgument naming the first non-finite value (floating dtypes only).
Status CheckAllFinite(const std::string& path, const NpyData& d) {
  if (d.dtype.kind != Kind::kFloat) return OkStatus();
  DataMatrix block;
  for (Eigen::Index start = 0; start < d.rows; start += kScanRows) {
    const Eigen::Index count = std::min(kScanRows, d.rows - start);
    ConvertRows(d, start, count, block);
    if (block.allFinite()) continue;
    for (Eigen::Index i = 0; i < count; ++i) {
      for (Eigen::Index j = 0; j < d.cols; ++j) {
        if (std::isfinite(block(i, j))) continue;
        return BadFile(path, std::string(std::isnan(block(i, j)) ? "NaN" : "infinite") +
                                 " value at row " + std::to_string(start + i + 1) +
                                 ", column " + std::to_string(j + 1) +
                                 " (only finite values are accepted)");
      }
    }
  }
  return OkStatus();
}

StatusOr<DataMatrix> DecodeNpy(const std::string& path, std::string_view file) {
  DPEM_ASSIGN_OR_RETURN(const NpyData d, LocateData(path, file));
  DPEM_RETURN_IF_ERROR(CheckAllFinite(path, d));
  DataMatrix x;
  ConvertRows(d, 0, d.rows, x);
  return x;
}

// A memory-mapped .npy file. '<f8' blocks point into the mapping (no copy);
// other dtypes are converted block by block into the caller's scratch.
class NpyRowSource final : public RowSource {
 public:
  NpyRowSource(internal::MappedFile file, NpyData data)
      : file_(std::move(file)), data_(data) {}
  Eigen::Index rows() const override { return data_.rows; }
  Eigen::Index cols() const override { return data_.cols; }
  RowBlock Block(Eigen::Index start, Eigen::Index count, DataMatrix& scratch) const override {
    if (data_.dtype.kind == Kind::kFloat && data_.dtype.size == 8) {
      const auto* values = reinterpret_cast<const double*>(data_.values);
      return RowBlock(values + start * data_.cols, count, data_.cols);
    }
    ConvertRows(data_, start, count, scratch);
    return RowBlock(scratch.data(), count, data_.cols);
  }

 private:
  internal::MappedFile file_;
  NpyData data_;
};

std::string NpyHeaderBytes(const DataMatrix& x) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" +
                     std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + "), }";
  constexpr std::size_t kPreamble = 10;  // Magic, version, 2-byte length.
  const std::size_t total = (kPreamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - kPreamble - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  return out + dict;
}

}  // namespace

StatusOr<DataMatrix> ReadNpy(const std::string& path) {
  StatusOr<internal::MappedFile> mapped = internal::MappedFile::Open(path);
  if (mapped.ok()) return DecodeNpy(path, mapped->data());
  // Not mappable (a pipe, say): read it whole.
  DPEM_ASSIGN_OR_RETURN(const std::string file, internal::ReadFileToString(path));
  return DecodeNpy(path, file);
}

StatusOr<std::unique_ptr<RowSource>> OpenNpyRowSource(const std::string& path) {
  DPEM_ASSIGN_OR_RETURN(internal::MappedFile file, internal::MappedFile::Open(path));
  DPEM_ASSIGN_OR_RETURN(const NpyData data, LocateData(path, file.data()));
  const bool aligned =
      reinterpret_cast<std::uintptr_t>(data.values) % alignof(double) == 0;
  if (data.dtype.kind == Kind::kFloat && data.dtype.size == 8 && !aligned) {
    return BadFile(path, "the data of a '<f8' array is not 8-byte aligned (the header "
                         "length is not a multiple of 8, which numpy never writes)");
  }
  DPEM_RETURN_IF_ERROR(CheckAllFinite(path, data));
  return std::unique_ptr<RowSource>(std::make_unique<NpyRowSource>(std::move(file), data));
}

Status WriteNpy(const std::string& path, const DataMatrix& x) {
  DPEM_RETURN_IF_ERROR(internal::ValidateMatrixForWriting(path, x));
  DPEM_ASSIGN_OR_RETURN(internal::AtomicFileWriter file,
                        internal::AtomicFileWriter::Create(path));
  DPEM_RETURN_IF_ERROR(file.Append(NpyHeaderBytes(x)));
  const std::size_t bytes = static_cast<std::size_t>(x.size()) * sizeof(double);
  DPEM_RETURN_IF_ERROR(
      file.Append(std::string_view(reinterpret_cast<const char*>(x.data()), bytes)));
  return file.Commit();
}

}  // namespace dpem
