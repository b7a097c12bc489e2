#include "server/route_pattern.h"

#include "common/error.h"

namespace layerlab::server {
namespace {

constexpr std::string_view kOne = "{}";
constexpr std::string_view kRest = "{*}";

std::vector<std::string> split_segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 1;  // after the leading '/'
  for (size_t slash = path.find('/', start);; slash = path.find('/', start)) {
    out.emplace_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

RoutePattern::RoutePattern(std::string pattern) : text_(std::move(pattern)) {
  if (text_.empty() || text_.front() != '/')
    throw invalid_argument("route pattern '" + text_ + "' does not start with '/'");
  if (text_ == "/") return;  // the root: no segments
  segments_ = split_segments(text_);
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i] != kRest) continue;
    if (i + 1 != segments_.size())
      throw invalid_argument("route pattern '" + text_ + "': {*} must be the last segment");
    rest_ = true;
    segments_.pop_back();
  }
}

bool RoutePattern::match(std::string_view path, std::vector<std::string>& captures) const {
  if (path.empty() || path.front() != '/') return false;
  if (segments_.empty() && !rest_) {  // the root
    if (path != "/") return false;
    captures = {"/"};
    return true;
  }
  std::vector<std::string> found{std::string(path)};
  size_t start = 1;
  for (const std::string& segment : segments_) {
    if (start > path.size()) return false;
    const size_t slash = path.find('/', start);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view got = path.substr(start, end - start);
    if (segment == kOne) {
      if (got.empty()) return false;
      found.emplace_back(got);
    } else if (got != segment) {
      return false;
    }
    start = end + 1;  // past the '/', or past the end when there is none
  }
  if (rest_) {
    if (start > path.size()) return false;
    const std::string_view rest = path.substr(start);
    // One or more non-empty segments: no empty one at the start, the end or in between.
    if (rest.empty() || rest.front() == '/' || rest.back() == '/' ||
        rest.find("//") != std::string_view::npos)
      return false;
    found.emplace_back(rest);
  } else if (start != path.size() + 1) {
    return false;  // segments left over
  }
  captures = std::move(found);
  return true;
}

bool is_plain_file_name(std::string_view name) {
  bool after_dot = true;  // a part must start here
  for (char c : name) {
    if (c == '.') {
      if (after_dot) return false;
      after_dot = true;
    } else if (is_name_char(c)) {
      after_dot = false;
    } else {
      return false;
    }
  }
  return !after_dot;
}

}  // namespace layerlab::server
