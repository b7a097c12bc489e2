// Shared by the text loaders (csv, libsvm): a line reader that counts lines, CSV field
// splitting, strict number parsing, and error messages that name the source and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::data {

// Where a problem is: "SOURCE: line 4" (unit "item" for binary files).
struct Location {
  const std::string& source;
  int64_t index = 0;  // 1-based; 0 = the whole source
  const char* unit = "line";
};

// Throws invalid_argument("SOURCE: line N: message").
[[noreturn]] void fail_at(const Location& where, const std::string& message);

// Reads `text` line by line (\n or \r\n), skipping a leading UTF-8 byte-order mark.
class LineReader {
 public:
  explicit LineReader(std::string_view text);
  // The next line without its terminator; false at the end.
  bool next(std::string_view& line);
  // Like next(), but skips lines that are empty or whitespace only.
  bool next_nonblank(std::string_view& line);
  int64_t line_number() const { return line_; }

 private:
  std::string_view rest_;
  int64_t line_ = 0;
  bool done_ = false;
};

std::string_view trim(std::string_view s);
bool is_blank(std::string_view s);

// Splits a CSV line at commas into trimmed fields; "quoted" fields may hold commas, with ""
// for a literal quote. Throws at `where` for an unterminated quote.
void split_csv_line(std::string_view line, const Location& where, std::vector<std::string>& out);

// Parses all of `text` (surrounding spaces trimmed, leading '+' allowed) as a number.
enum class NumberStatus { kOk, kNotANumber, kNotFinite };
NumberStatus parse_number(std::string_view text, double& out);

// The cell as a finite float, or an error naming `what` (e.g. "column 'f2'") at `where`.
float parse_float_cell(std::string_view text, const Location& where, const std::string& what);

}  // namespace layerlab::data
