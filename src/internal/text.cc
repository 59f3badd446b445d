#include "internal/text.h"

#include <charconv>
#include <cmath>

namespace dpem::internal {

std::string QuoteForMessage(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, kMaxQuotedChars)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out + (text.size() > kMaxQuotedChars ? "...'" : "'");
}

std::string FormatShortest(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, r.ptr);
}

}  // namespace dpem::internal
