// Dataset specs: `NAME?key=value&...`, `KIND:TARGET?key=value&...` (see dataset.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace layerlab::data {

class Spec {
 public:
  // Parses the text; throws invalid_argument for an empty name or a malformed query.
  static Spec parse(std::string_view text);

  const std::string& text() const { return text_; }
  // The registry key: "iris", "spirals", or a prefix such as "csv:".
  const std::string& name() const { return name_; }
  // What follows "KIND:" up to the query ("" for plain names), e.g. a path.
  const std::string& target() const { return target_; }

  // Throws invalid_argument naming any query key not in `allowed` (with a did-you-mean).
  void check_keys(const std::vector<std::string>& allowed) const;

  bool has(std::string_view key) const;
  std::string get_string(std::string_view key, std::string fallback) const;
  // One of `choices`.
  std::string get_choice(std::string_view key, std::string fallback,
                         const std::vector<std::string>& choices) const;
  int64_t get_int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const;
  double get_double(std::string_view key, double fallback, double min, double max) const;
  uint64_t get_seed(std::string_view key, uint64_t fallback) const;

  // "dataset 'TEXT': " + message, as an invalid_argument error.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const std::string* find(std::string_view key) const;

  std::string text_;
  std::string name_;
  std::string target_;
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace layerlab::data
