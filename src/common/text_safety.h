// Text from outside (study files, request bodies, data files) on its way into messages:
// UTF-8 checks, positions as LINE:COLUMN, and short sanitised excerpts, so that an error
// never copies a megabyte field or a terminal escape sequence into a log or a stored record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace layerlab {

// The longest excerpt of outside text a message quotes, in characters.
inline constexpr size_t kMaxExcerptChars = 60;

// The byte offset of the first byte that does not start a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are ill-formed), or npos.
size_t find_invalid_utf8(std::string_view text);

// 1-based line and column (in bytes) of byte `offset` of `text`; lines end at '\n'.
struct TextPosition {
  int64_t line = 1;
  int64_t column = 1;
};
TextPosition position_of(std::string_view text, size_t offset);

// `text` fit for a one-line message: control characters and bytes that are not valid
// UTF-8 escaped (\n, \t, \xNN), at most `max_chars` characters of it kept, and "..." plus
// the full length in bytes appended when it was cut: excerpt(60 MB of 'a') is 60 'a's then
// "... (62914560 bytes)".
std::string excerpt(std::string_view text, size_t max_chars = kMaxExcerptChars);

// All of `text`, escaped as excerpt() does: outside text (names, paths, messages that quote
// them) fit for one line of a log or a terminal, where it can neither forge a line nor send
// an escape sequence.
std::string printable(std::string_view text);

// The offset of the first '[' or '{' outside a string that opens more than `max_depth`
// levels of JSON nesting, or npos. One pass over the raw text, so that a 100,000-deep
// document is refused before a recursive parser or printer sees it.
size_t find_json_nesting_over(std::string_view text, int max_depth);

}  // namespace layerlab
