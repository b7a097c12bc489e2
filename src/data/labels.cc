#include "data/labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/text_safety.h"

namespace layerlab::data {

void ClassLabels::add(std::string_view token, const Location& where) {
  token = trim(token);
  double v = 0;
  NumberStatus status = parse_number(token, v);
  if (status == NumberStatus::kOk) {
    if (v != std::floor(v) || std::abs(v) > 9.0e15)
      fail_at(where, fmt::format("label '{}' is not an integer class id (use task=regression for "
                                 "a numeric target)",
                                 excerpt(token)));
    add_integer(static_cast<int64_t>(v), where);
    return;
  }
  if (token.empty()) fail_at(where, "empty label");
  if (status == NumberStatus::kNotFinite)
    fail_at(where, fmt::format("label '{}' is not finite", excerpt(token)));
  if (declared_ > 0)
    fail_at(where, fmt::format("label '{}' is not an integer class id", excerpt(token)));
  if (numbers_only_) fail_at(where, fmt::format("label '{}' is not a number", excerpt(token)));
  auto it = strings_.find(token);
  if (it == strings_.end())
    it = strings_.emplace(std::string(token), static_cast<int64_t>(strings_.size())).first;
  ids_.push_back(~it->second);
}

void ClassLabels::add_integer(int64_t value, const Location& where) {
  if (declared_ > 0) {
    if (value < 0 || value >= declared_)
      fail_at(where, fmt::format("label {} out of range 0..{} (classes={})", value, declared_ - 1,
                                 declared_));
    ids_.push_back(value);
    return;
  }
  auto it = ints_.find(value);
  if (it == ints_.end()) it = ints_.emplace(value, static_cast<int64_t>(ints_.size())).first;
  ids_.push_back(it->second);
}

ClassLabels::Result ClassLabels::finish(const std::string& source) const {
  int64_t distinct = static_cast<int64_t>(ints_.size() + strings_.size());
  if (distinct > kMaxClasses)
    throw invalid_argument(fmt::format(
        "{}: {} distinct labels, more than the {} classes allowed (use task=regression for a "
        "numeric target)",
        source, distinct, kMaxClasses));
  Result r;
  r.y.reserve(ids_.size());
  if (declared_ > 0) {
    r.classes = declared_;
    for (int c = 0; c < declared_; ++c) r.names.push_back(std::to_string(c));
    for (int64_t id : ids_) r.y.push_back(static_cast<float>(id));
    return r;
  }
  // Final class id for each provisional id.
  std::vector<int64_t> int_class(ints_.size()), string_class(strings_.size());
  if (strings_.empty()) {
    for (const auto& [value, id] : ints_) {  // map order: numeric
      int_class[id] = static_cast<int64_t>(r.names.size());
      r.names.push_back(std::to_string(value));
    }
  } else {
    // Mixed or all strings: sort every label as text.
    std::vector<std::pair<std::string, int64_t>> all;  // name, provisional id (ints >= 0)
    for (const auto& [value, id] : ints_) all.emplace_back(std::to_string(value), id);
    for (const auto& [name, id] : strings_) all.emplace_back(name, ~id);
    std::sort(all.begin(), all.end());
    for (const auto& [name, id] : all) {
      (id >= 0 ? int_class[id] : string_class[~id]) = static_cast<int64_t>(r.names.size());
      r.names.push_back(name);
    }
  }
  r.classes = static_cast<int>(r.names.size());
  for (int64_t id : ids_)
    r.y.push_back(static_cast<float>(id >= 0 ? int_class[id] : string_class[~id]));
  return r;
}

void ClassLabels::finish_into(Dataset& d, const std::string& source) const {
  Result r = finish(source);
  d.y = std::move(r.y);
  d.classes = r.classes;
  d.class_names = std::move(r.names);
}

}  // namespace layerlab::data
