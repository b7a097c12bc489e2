// A route's path pattern, matched segment by segment in one pass over the path (no regular
// expression, no recursion: the cost follows the pattern's segments, never the input).
// "/api/v1/studies/{}/trials": literal segments and "{}" for one non-empty segment;
// a last "{*}" takes one or more non-empty segments ("/js/{*}" matches /js/a/b.js).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace layerlab::server {

class RoutePattern {
 public:
  // kInvalidArgument for a pattern that does not start with '/' or has "{*}" before its end.
  explicit RoutePattern(std::string pattern);

  // On a match, `captures` is the whole path, then what each "{}" or "{*}" took.
  bool match(std::string_view path, std::vector<std::string>& captures) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> segments_;  // without the leading '/'
  bool rest_ = false;                  // the last segment is "{*}"
};

// A file name of letters, digits, '_' and '-' in dot-separated parts: no "..", no leading
// or trailing dot, no separator.
bool is_plain_file_name(std::string_view name);

}  // namespace layerlab::server
