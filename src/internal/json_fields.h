// Strict reading of JSON documents (model files): every field is checked for
// presence and type, and every array for its shape, before anything is
// read from it, so that a damaged or hostile document gives one
// InvalidArgument naming the problem and never an exception or an
// allocation the document does not pay for. Also the two writers of Eigen
// values that every model file shares. Private to the library.
//
// Thread safety: the functions are reentrant.
#ifndef DPEM_INTERNAL_JSON_FIELDS_H_
#define DPEM_INTERNAL_JSON_FIELDS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "dpem/status.h"

namespace dpem::internal {

// Parses `text`; InvalidArgument "not valid JSON" if it is not a JSON
// document, with the line and column of the first error and the parser's
// reason (a number too large for a double, or NaN or Infinity, which JSON
// does not have, is named as such). Never throws.
StatusOr<nlohmann::json> ParseJson(const std::string& text);

// The numbers a number field accepts: finite, and from `min` to `max`, each
// end excluded where `min_open` or `max_open` is set.
struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
  bool max_open = false;
};

// Finite numbers > 0, and >= 0.
inline constexpr NumberRange kPositiveNumber{0.0, std::numeric_limits<double>::infinity(), true,
                                             false};
inline constexpr NumberRange kNonNegativeNumber{0.0, std::numeric_limits<double>::infinity(),
                                                false, false};

// OK if `value` is finite and in `range`; otherwise InvalidArgument
// "<name> is NaN" / "is infinite" / "must be > 0, got -1", naming `name`.
Status CheckNumber(double value, const std::string& name, const NumberRange& range);

// The field `key` of `object` as a finite number in `range`; InvalidArgument
// naming the field (as "<where>.<key>" when `where` is not empty) and what
// is wrong: missing, null (how a writer stores NaN and infinities), another
// type, or a value out of range (with the value).
StatusOr<double> FiniteNumberField(const nlohmann::json& object, const std::string& key,
                                   const NumberRange& range = {}, const std::string& where = "");

// `v` as finite numbers in `range` (an array of numbers; an empty array is
// allowed); InvalidArgument naming `what`, the first bad entry (from 1) and
// why, as FiniteNumberField.
StatusOr<std::vector<double>> FiniteNumbersFrom(const nlohmann::json& v, const std::string& what,
                                                const NumberRange& range = {});

// The field `key` of `object`; InvalidArgument if `object` is not an object
// or has no such field.
StatusOr<const nlohmann::json*> Field(const nlohmann::json& object, const std::string& key);

// The field `key` of `object` as a number (any JSON number), a string or a
// boolean; InvalidArgument if it is missing or of another type (null named
// as such). NumberField checks no range: use FiniteNumberField for a
// quantity.
StatusOr<double> NumberField(const nlohmann::json& object, const std::string& key);
StatusOr<std::string> StringField(const nlohmann::json& object, const std::string& key);
StatusOr<bool> BoolField(const nlohmann::json& object, const std::string& key);

// The string field `key` of `object`, or nullopt if `object` has no such
// field; InvalidArgument if it is there but not a string.
StatusOr<std::optional<std::string>> OptionalStringField(const nlohmann::json& object,
                                                         const std::string& key);

// The boolean field `key` of `object`, or `absent` if `object` has no such
// field (a field added to a file format later); InvalidArgument if it is
// there but not a boolean.
StatusOr<bool> BoolFieldOr(const nlohmann::json& object, const std::string& key, bool absent);

// `v` if it is a JSON integer >= 0 (no fraction, no exponent, no minus
// sign: "-0" is refused), else nullopt.
std::optional<std::uint64_t> AsUnsigned(const nlohmann::json& v);

// The field `key` of `object` as a count: a JSON integer (AsUnsigned) from 1
// to `maximum`; InvalidArgument otherwise.
StatusOr<std::int64_t> CountField(const nlohmann::json& object, const std::string& key,
                                  std::int64_t maximum);

// `v` as a vector: an array of numbers. `what` names it in the error (and
// the entry, if one is null: how a writer stores NaN and infinities).
StatusOr<Eigen::VectorXd> VectorFrom(const nlohmann::json& v, const std::string& what);

// `v` as a `rows` x `cols` matrix: an array of `rows` arrays of `cols`
// numbers. The shape is checked before anything is allocated, so a hostile
// `rows` or `cols` cannot make the reader allocate what `v` does not hold.
StatusOr<Eigen::MatrixXd> MatrixFrom(const nlohmann::json& v, Eigen::Index rows,
                                     Eigen::Index cols, const std::string& what);

// `v` as a matrix whose width is that of its first row: a non-empty array
// of arrays of numbers, all as long as the first (which may be empty).
StatusOr<Eigen::MatrixXd> RowsFrom(const nlohmann::json& v, const std::string& what);

// `v` as strings: an array of strings.
StatusOr<std::vector<std::string>> StringsFrom(const nlohmann::json& v, const std::string& what);

// The entries of `v` as a JSON array of numbers.
std::vector<double> AsStdVector(const Eigen::VectorXd& v);

// The rows of `m` as a JSON array of arrays of numbers (read by MatrixFrom
// and RowsFrom).
nlohmann::json RowsToJson(const Eigen::MatrixXd& m);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_JSON_FIELDS_H_
