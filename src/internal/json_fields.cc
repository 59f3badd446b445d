#include "internal/json_fields.h"

#include <utility>

namespace dpem::internal {

using nlohmann::json;

StatusOr<json> ParseJson(const std::string& text) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return InvalidArgumentError("not valid JSON");
  return document;
}

StatusOr<const json*> Field(const json& object, const std::string& key) {
  if (!object.is_object()) return InvalidArgumentError("expected an object around '" + key + "'");
  auto it = object.find(key);
  if (it == object.end()) return InvalidArgumentError("missing field '" + key + "'");
  return &*it;
}

StatusOr<double> NumberField(const json& object, const std::string& key) {
  DPEM_ASSIGN_OR_RETURN(const json* v, Field(object, key));
  if (!v->is_number()) return InvalidArgumentError("field '" + key + "' must be a number");
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
