#include "data/text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.h"
#include "common/text_safety.h"

namespace layerlab::data {

void fail_at(const Location& where, const std::string& message) {
  if (where.index > 0)
    throw invalid_argument(
        fmt::format("{}: {} {}: {}", where.source, where.unit, where.index, message));
  throw invalid_argument(fmt::format("{}: {}", where.source, message));
}

LineReader::LineReader(std::string_view text) : rest_(text) {
  if (rest_.substr(0, 3) == "\xEF\xBB\xBF") rest_.remove_prefix(3);
}

bool LineReader::next(std::string_view& line) {
  if (done_ || rest_.empty()) return false;
  size_t nl = rest_.find('\n');
  if (nl == std::string_view::npos) {
    line = rest_;
    rest_ = {};
    done_ = true;
  } else {
    line = rest_.substr(0, nl);
    rest_.remove_prefix(nl + 1);
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++line_;
  return true;
}

bool LineReader::next_nonblank(std::string_view& line) {
  while (next(line))
    if (!is_blank(line)) return true;
  return false;
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool is_blank(std::string_view s) {
  return trim(s).empty();
}

void split_csv_line(std::string_view line, const Location& where, std::vector<std::string>& out) {
  out.clear();
  size_t i = 0;
  while (true) {
    std::string field;
    // Leading spaces before a quote are insignificant.
    size_t start = i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) fail_at(where, "unterminated quoted field");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') fail_at(where, "unexpected text after a quoted field");
    } else {
      size_t comma = line.find(',', start);
      size_t end = comma == std::string_view::npos ? line.size() : comma;
      field = std::string(trim(line.substr(start, end - start)));
      i = end;
    }
    out.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;                     // the comma
    if (i == line.size()) {  // a trailing comma: one more, empty field
      out.emplace_back();
      break;
    }
  }
}

NumberStatus parse_number(std::string_view text, double& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && text.front() == '-') return NumberStatus::kNotANumber;
  }
  if (text.empty()) return NumberStatus::kNotANumber;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (end != text.data() + text.size()) return NumberStatus::kNotANumber;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves `out` alone here; strtod tells overflow (infinite) from underflow (0).
    out = std::strtod(std::string(text).c_str(), nullptr);
    if (std::abs(out) < 1) out = 0;
  } else if (ec != std::errc()) {
    return NumberStatus::kNotANumber;
  }
  return std::isfinite(out) ? NumberStatus::kOk : NumberStatus::kNotFinite;
}

float parse_float_cell(std::string_view text, const Location& where, const std::string& what) {
  double v = 0;
  switch (parse_number(text, v)) {
    case NumberStatus::kOk:
      break;
    case NumberStatus::kNotANumber:
      if (trim(text).empty())
        fail_at(where, what + ": empty cell (missing values are not supported)");
      fail_at(where, what + ": expected a number, got '" + excerpt(trim(text)) + "'");
    case NumberStatus::kNotFinite:
      fail_at(where, what + ": value '" + excerpt(trim(text)) + "' is not finite");
  }
  if (std::abs(v) > std::numeric_limits<float>::max())
    fail_at(where, what + ": value '" + excerpt(trim(text)) + "' is too large for a float");
  return static_cast<float>(v);
}

}  // namespace layerlab::data
