#include "internal/text.h"

namespace dpem::internal {

std::string QuoteForMessage(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, kMaxQuotedChars)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out + (text.size() > kMaxQuotedChars ? "...'" : "'");
}

}  // namespace dpem::internal
