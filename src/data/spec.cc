#include "data/spec.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "common/error.h"
#include "common/strings.h"

namespace layerlab::data {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Parses all of `text` as a T with std::from_chars.
template <typename T>
bool parse_all(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Spec Spec::parse(std::string_view text) {
  Spec s;
  s.text_ = std::string(text);
  if (text.empty()) throw invalid_argument("empty dataset name");
  size_t q = text.find('?');
  std::string_view head = text.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view() : text.substr(q + 1);

  size_t colon = head.find(':');
  if (colon != std::string_view::npos) {
    s.name_ = std::string(head.substr(0, colon + 1));
    s.target_ = std::string(head.substr(colon + 1));
  } else if (ends_with(head, ".csv") || ends_with(head, ".csv.gz")) {
    s.name_ = "csv:";
    s.target_ = std::string(head);
  } else if (ends_with(head, ".libsvm") || ends_with(head, ".svm")) {
    s.name_ = "libsvm:";
    s.target_ = std::string(head);
  } else {
    s.name_ = std::string(head);
  }
  if (s.name_.empty() || s.name_ == ":") s.fail("empty dataset name");

  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      s.fail("bad parameter '" + std::string(part) + "' (expected KEY=VALUE)");
    std::string key(part.substr(0, eq));
    if (s.find(key)) s.fail("parameter '" + key + "' given twice");
    s.params_.emplace_back(std::move(key), std::string(part.substr(eq + 1)));
  }
  return s;
}

void Spec::fail(const std::string& message) const {
  throw invalid_argument("dataset '" + text_ + "': " + message);
}

void Spec::check_keys(const std::vector<std::string>& allowed) const {
  for (const auto& [key, value] : params_) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (ok) continue;
    if (allowed.empty()) fail("'" + name_ + "' takes no parameters, got '" + key + "'");
    std::string msg = "unknown parameter '" + key + "'";
    std::string hint = closest_match(key, allowed);
    if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
    fail(msg + "; allowed: " + join(allowed, ", "));
  }
}

const std::string* Spec::find(std::string_view key) const {
  for (const auto& [k, v] : params_)
    if (k == key) return &v;
  return nullptr;
}

bool Spec::has(std::string_view key) const {
  return find(key) != nullptr;
}

std::string Spec::get_string(std::string_view key, std::string fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  if (v->empty()) fail(std::string(key) + ": empty value");
  return *v;
}

std::string Spec::get_choice(std::string_view key, std::string fallback,
                             const std::vector<std::string>& choices) const {
  std::string v = get_string(key, fallback);
  for (const auto& c : choices)
    if (c == v) return v;
  fail(std::string(key) + ": expected one of " + join(choices, ", ") + ", got '" + v + "'");
}

int64_t Spec::get_int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  int64_t out = 0;
  if (!parse_all(*v, out)) fail(std::string(key) + ": expected an integer, got '" + *v + "'");
  if (out < min || out > max)
    fail(fmt::format("{}: must be between {} and {}, got {}", key, min, max, *v));
  return out;
}

double Spec::get_double(std::string_view key, double fallback, double min, double max) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  double out = 0;
  if (!parse_all(*v, out) || !std::isfinite(out))
    fail(std::string(key) + ": expected a number, got '" + *v + "'");
  if (out < min || out > max)
    fail(fmt::format("{}: must be between {} and {}, got {}", key, min, max, *v));
  return out;
}

uint64_t Spec::get_seed(std::string_view key, uint64_t fallback) const {
  const std::string* v = find(key);
  if (!v) return fallback;
  uint64_t out = 0;
  if (!parse_all(*v, out))
    fail(std::string(key) + ": expected a non-negative integer, got '" + *v + "'");
  return out;
}

}  // namespace layerlab::data
