#include "internal/json_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

namespace dpem::internal {

using nlohmann::json;

namespace {

// The parser's message without its "[json.exception....] " prefix.
std::string Reason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const std::size_t end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

// A hint for the errors a hand-edited or foreign file most often has: a
// NaN or an infinity (JSON has neither; nlohmann's parser reports the
// token it stopped at, "last read: '...'"), or a number beyond double's
// range.
std::string Hint(const std::string& reason) {
  if (reason.find("number overflow") != std::string::npos) {
    return "the number is beyond the range of a double";
  }
  const std::size_t read = reason.rfind("last read: '");
  if (read == std::string::npos) return "";
  std::string token = reason.substr(read + 12);
  const std::size_t start = token.find_last_of(" :,[");
  if (start != std::string::npos) token = token.substr(start + 1);
  if (!token.empty() && token[0] == '-') token = token.substr(1);
  if (!token.empty() && (token[0] == 'N' || token[0] == 'I' || token.rfind("na", 0) == 0 ||
                         token.rfind("i", 0) == 0)) {
    return "JSON has no NaN or infinity: a quantity must be a finite number";
  }
  return "";
}

// The key of the last `"key":` at or before byte `offset` of `text`, or ""
// (a hint of which field a parse error is in; a key holding an escaped
// quote is not recognised).
std::string KeyBefore(const std::string& text, std::size_t offset) {
  std::size_t end = std::min(offset, text.size());
  while (end > 0) {
    const std::size_t colon = text.rfind(':', end - 1);
    if (colon == std::string::npos) return "";
    std::size_t quote = colon;
    while (quote > 0 && (text[quote - 1] == ' ' || text[quote - 1] == '\t' ||
                         text[quote - 1] == '\n' || text[quote - 1] == '\r')) {
      --quote;
    }
    if (quote >= 2 && text[quote - 1] == '"') {
      const std::size_t open = text.rfind('"', quote - 2);
      if (open != std::string::npos) return text.substr(open + 1, quote - 2 - open);
    }
    end = colon;
  }
  return "";
}

// Where the parser stopped: its byte offset for a syntax error, or that of
// the number it could not hold (found by its text) for an overflow.
std::size_t ErrorOffset(const std::string& text, const json::exception& e,
                        const std::string& reason) {
  if (const auto* parse = dynamic_cast<const json::parse_error*>(&e)) return parse->byte;
  const std::size_t open = reason.find("parsing '");
  if (open == std::string::npos) return 0;
  const std::size_t close = reason.find('\'', open + 9);
  if (close == std::string::npos) return 0;
  const std::size_t at = text.find(reason.substr(open + 9, close - open - 9));
  return at == std::string::npos ? 0 : at;
}

// "line L, column C" of byte `offset` of `text` (both counted from 1).
std::string LineAndColumn(const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    column = text[i] == '\n' ? 1 : column + 1;
    if (text[i] == '\n') ++line;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// `v` in the shortest form that reads back exactly ("1e+200", "-1").
std::string NumberText(double v) {
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof(text), v).ptr);
}

// What a JSON value that should be a number is instead.
std::string NotANumber(const std::string& name, const json& v) {
  if (v.is_null()) {
    return name + " is null, not a number (a NaN or an infinity is written to JSON as null)";
  }
  return name + " must be a number, not " + std::string(v.type_name());
}

std::string Named(const std::string& key, const std::string& where) {
  return "field '" + (where.empty() ? key : where + "." + key) + "'";
}

}  // namespace

StatusOr<json> ParseJson(const std::string& text) {
  // The exception carries the error's line, column and reason; it does not
  // leave this function.
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    const std::string reason = Reason(e);
    const std::size_t offset = ErrorOffset(text, e, reason);
    const std::string key = KeyBefore(text, offset);
    // A parse error's reason has its line and column; an overflow's not.
    const bool positioned = dynamic_cast<const json::parse_error*>(&e) != nullptr;
    const std::string where = positioned ? "" : " at " + LineAndColumn(text, offset);
    std::string notes = key.empty() ? "" : "in or after field '" + key + "'";
    const std::string hint = Hint(reason);
    if (!hint.empty()) notes += (notes.empty() ? "" : "; ") + hint;
    return InvalidArgumentError("not valid JSON: " + reason + where +
                                (notes.empty() ? "" : " (" + notes + ")"));
  }
}

Status CheckNumber(double value, const std::string& name, const NumberRange& range) {
  if (std::isnan(value)) return InvalidArgumentError(name + " is NaN, not a finite number");
  if (std::isinf(value)) {
    return InvalidArgumentError(name + " is " + NumberText(value) + ", not a finite number");
  }
  const bool below = range.min_open ? !(value > range.min) : !(value >= range.min);
  const bool above = range.max_open ? !(value < range.max) : !(value <= range.max);
  if (!below && !above) return OkStatus();
  std::string want;
  if (std::isfinite(range.min)) want = (range.min_open ? "> " : ">= ") + NumberText(range.min);
  if (std::isfinite(range.max)) {
    want += (want.empty() ? "" : " and ") + std::string(range.max_open ? "< " : "<= ") +
            NumberText(range.max);
  }
  return InvalidArgumentError(name + " must be " + want + ", got " + NumberText(value));
}

StatusOr<double> FiniteNumberField(const json& object, const std::string& key,
                                   const NumberRange& range, const std::string& where) {
  const std::string name = Named(key, where);
  if (!object.is_object()) return InvalidArgumentError("expected an object around " + name);
  auto it = object.find(key);
  if (it == object.end()) return InvalidArgumentError("missing " + name);
  if (!it->is_number()) return InvalidArgumentError(NotANumber(name, *it));
  const double value = it->get<double>();
  DPEM_RETURN_IF_ERROR(CheckNumber(value, name, range));
  return value;
}

StatusOr<std::vector<double>> FiniteNumbersFrom(const json& v, const std::string& what,
                                                const NumberRange& range) {
  if (!v.is_array()) return InvalidArgumentError(what + " must be an array of numbers");
  std::vector<double> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string name = what + " entry " + std::to_string(i + 1);
    if (!v[i].is_number()) return InvalidArgumentError(NotANumber(name, v[i]));
    out.push_back(v[i].get<double>());
    DPEM_RETURN_IF_ERROR(CheckNumber(out.back(), name, range));
  }
  return out;
}

StatusOr<const json*> Field(const json& object, const std::string& key) {
  if (!object.is_object()) return InvalidArgumentError("expected an object around '" + key + "'");
  auto it = object.find(key);
  if (it == object.end()) return InvalidArgumentError("missing field '" + key + "'");
  return &*it;
}

StatusOr<double> NumberField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_number()) return InvalidArgumentError(NotANumber("field '" + key + "'", *v));
  return v->get<double>();
}

StatusOr<std::string> StringField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_string()) return InvalidArgumentError("field '" + key + "' must be a string");
  return v->get<std::string>();
}

StatusOr<bool> BoolField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_boolean()) return InvalidArgumentError("field '" + key + "' must be true or false");
  return v->get<bool>();
}

StatusOr<std::optional<std::string>> OptionalStringField(const json& object,
                                                         const std::string& key) {
  if (!object.is_object() || !object.contains(key)) return std::optional<std::string>();
  DPEM_ASSIGN_OR_RETURN(std::string value, StringField(object, key));
  return std::optional<std::string>(std::move(value));
}

StatusOr<bool> BoolFieldOr(const json& object, const std::string& key, bool absent) {
  if (!object.is_object() || !object.contains(key)) return absent;
  return BoolField(object, key);
}

std::optional<std::uint64_t> AsUnsigned(const json& v) {
  // nlohmann parses an integer without a sign as unsigned; one written with
  // a sign, or built in C++ from a signed type, is signed: it counts only if
  // > 0, so that "-0" stays refused.
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() > 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  return std::nullopt;
}

StatusOr<std::int64_t> CountField(const json& object, const std::string& key,
                                  std::int64_t maximum) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  const std::optional<std::uint64_t> count = AsUnsigned(*v);
  if (!count || *count < 1 || *count > static_cast<std::uint64_t>(maximum)) {
    return InvalidArgumentError("field '" + key + "' must be a whole number from 1 to " +
                                std::to_string(maximum));
  }
  return static_cast<std::int64_t>(*count);
}

StatusOr<Eigen::VectorXd> VectorFrom(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgumentError(what + " must be an array of numbers");
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_null()) {
      return InvalidArgumentError(NotANumber(what + " entry " + std::to_string(i + 1), v[i]));
    }
    if (!v[i].is_number()) return InvalidArgumentError(what + " must be an array of numbers");
    out(static_cast<Eigen::Index>(i)) = v[i].get<double>();
  }
  return out;
}

StatusOr<Eigen::MatrixXd> MatrixFrom(const json& v, Eigen::Index rows, Eigen::Index cols,
                                     const std::string& what) {
  const std::string shape = what + " must be a " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " array of numbers";
  if (!v.is_array() || static_cast<Eigen::Index>(v.size()) != rows) {
    return InvalidArgumentError(shape);
  }
  // Every row's length before allocating: the allocation is then bounded by
  // the numbers the document really holds.
  for (const json& row : v) {
    if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != cols) {
      return InvalidArgumentError(shape);
    }
  }
  Eigen::MatrixXd out(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    DPEM_ASSIGN_OR_RETURN(Eigen::VectorXd row, VectorFrom(v[static_cast<std::size_t>(i)], what));
    out.row(i) = row.transpose();
  }
  return out;
}

StatusOr<Eigen::MatrixXd> RowsFrom(const json& v, const std::string& what) {
  if (!v.is_array() || v.empty() || !v[0].is_array()) {
    return InvalidArgumentError(what + " must be a non-empty array of rows");
  }
  return MatrixFrom(v, static_cast<Eigen::Index>(v.size()), static_cast<Eigen::Index>(v[0].size()),
                    what);
}

StatusOr<std::vector<std::string>> StringsFrom(const json& v, const std::string& what) {
  if (!v.is_array()) return InvalidArgumentError(what + " must be an array of strings");
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) return InvalidArgumentError(what + " must be an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::vector<double> AsStdVector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

json RowsToJson(const Eigen::MatrixXd& m) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) rows.push_back(AsStdVector(m.row(i).transpose()));
  return rows;
}

}  // namespace dpem::internal
