// Names of enum values, for the text forms of options and model files: one
// table per enum, read both ways. A template over the enum type only (an
// inner helper, like a kernel), so that every enum's name and parse
// functions are one line each. Private to the library.
#ifndef DPEM_INTERNAL_ENUM_NAMES_H_
#define DPEM_INTERNAL_ENUM_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "dpem/status.h"

namespace dpem::internal {

// One row of a name table.
template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

// The name of `value` in `table`, or "unknown" if it has no row.
template <typename Enum, std::size_t N>
std::string_view NameOf(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& row : table) {
    if (row.value == value) return row.name;
  }
  return "unknown";
}

// The value named `name` in `table`, or InvalidArgument
// "unknown <what> '<name>' (accepted: <the names in table order>)".
template <typename Enum, std::size_t N>
StatusOr<Enum> ParseName(const EnumName<Enum> (&table)[N], std::string_view name,
                         std::string_view what) {
  std::string accepted;
  for (const EnumName<Enum>& row : table) {
    if (row.name == name) return row.value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(row.name);
  }
  return InvalidArgumentError("unknown " + std::string(what) + " '" + std::string(name) +
                              "' (accepted: " + accepted + ")");
}

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_ENUM_NAMES_H_
