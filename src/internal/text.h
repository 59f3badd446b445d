// Text helpers for error messages. Private to the library: not installed.
#ifndef DPEM_INTERNAL_TEXT_H_
#define DPEM_INTERNAL_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace dpem::internal {

// Longest prefix of untrusted text that QuoteForMessage keeps.
inline constexpr std::size_t kMaxQuotedChars = 24;

// `text` (read from an input file, so untrusted) in single quotes for an
// error message: at most kMaxQuotedChars characters, followed by "..." when
// cut; every byte outside printable ASCII (0x20-0x7e) replaced by '?', so
// that the message stays one line of plain ASCII.
std::string QuoteForMessage(std::string_view text);

// `value` as the shortest text that reads back to it ("nan", "inf", "-inf"
// for the non-finite values), for messages.
std::string FormatShortest(double value);

}  // namespace dpem::internal

#endif  // DPEM_INTERNAL_TEXT_H_
