#include "study/search_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/error.h"
#include "nn/params.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

double clamp_unit(double u) {
  return std::isnan(u) ? 0.0 : std::clamp(u, 0.0, kBelowOne);
}

// x rounded to 15 significant digits, so multiples of q read as written (0.3, not
// 0.30000000000000004).
double tidy(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return std::strtod(buf, nullptr);
}

// The multiples k*q inside [min, max] of a q_log_uniform domain: k in [first, last].
std::pair<int64_t, int64_t> q_log_range(const Domain& d) {
  return {static_cast<int64_t>(std::ceil(d.min / d.q - 1e-9)),
          static_cast<int64_t>(std::floor(d.max / d.q + 1e-9))};
}

double log_interpolate(double lo, double hi, double u) {
  if (u <= 0) return lo;
  return std::clamp(std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))), lo, hi);
}

}  // namespace

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::kValue:
      return "value";
    case Distribution::kValues:
      return "values";
    case Distribution::kUniform:
      return "uniform";
    case Distribution::kLogUniform:
      return "log_uniform";
    case Distribution::kIntUniform:
      return "int_uniform";
    case Distribution::kQUniform:
      return "q_uniform";
    case Distribution::kQLogUniform:
      return "q_log_uniform";
  }
  return "?";
}

ParamKind param_kind(const std::string& name) {
  static const json defaults = nn::Params().to_json();
  auto it = defaults.find(name);
  if (it == defaults.end()) throw internal_error("not a parameter: " + name);
  if (it->is_boolean()) return ParamKind::kBool;
  if (it->is_string()) return ParamKind::kName;
  if (it->is_array()) return ParamKind::kList;
  if (it->is_number_integer()) return ParamKind::kInteger;
  return ParamKind::kNumber;
}

const char* param_kind_description(ParamKind kind) {
  switch (kind) {
    case ParamKind::kInteger:
      return "an integer";
    case ParamKind::kNumber:
      return "a number";
    case ParamKind::kBool:
      return "true or false";
    case ParamKind::kName:
      return "a name";
    case ParamKind::kList:
      return "a list of layer widths";
  }
  return "?";
}

json canonical_value(const std::string& name, const json& value) {
  json j = json::object();
  j[name] = value;
  return nn::Params::from_json(j).to_json().at(name);
}

bool Domain::discrete() const {
  switch (distribution) {
    case Distribution::kValue:
    case Distribution::kValues:
    case Distribution::kIntUniform:
    case Distribution::kQUniform:
      return true;
    default:
      return false;
  }
}

int64_t Domain::size() const {
  switch (distribution) {
    case Distribution::kValue:
      return 1;
    case Distribution::kValues:
      return static_cast<int64_t>(values.size());
    case Distribution::kIntUniform:
      return static_cast<int64_t>(max - min) + 1;
    case Distribution::kQUniform:
      return static_cast<int64_t>(std::floor((max - min) / q + 1e-9)) + 1;
    default:
      return 0;
  }
}

json Domain::number(double x) const {
  if (integer) return json(static_cast<int64_t>(std::llround(x)));
  return json(x);
}

json Domain::at(int64_t i) const {
  switch (distribution) {
    case Distribution::kValue:
      return values.at(0);
    case Distribution::kValues:
      return values.at(static_cast<size_t>(i));
    case Distribution::kIntUniform:
      return number(min + static_cast<double>(i));
    case Distribution::kQUniform:
      return number(tidy(min + static_cast<double>(i) * q));
    default:
      throw internal_error(std::string("at() on a continuous domain: ") +
                           distribution_name(distribution));
  }
}

json Domain::from_unit(double u) const {
  u = clamp_unit(u);
  if (discrete()) {
    const int64_t n = size();
    return at(std::min(n - 1, static_cast<int64_t>(u * static_cast<double>(n))));
  }
  switch (distribution) {
    case Distribution::kUniform:
      return number(std::clamp(min + u * (max - min), min, max));
    case Distribution::kLogUniform:
      return number(log_interpolate(min, max, u));
    case Distribution::kQLogUniform: {
      const auto [first, last] = q_log_range(*this);
      const auto k =
          std::clamp<int64_t>(std::llround(log_interpolate(min, max, u) / q), first, last);
      return number(tidy(static_cast<double>(k) * q));
    }
    default:
      throw internal_error("from_unit: unknown distribution");
  }
}

std::optional<double> Domain::to_unit(const json& v) const {
  if (distribution == Distribution::kValue)
    return v == values.at(0) ? std::optional(0.5) : std::nullopt;
  if (distribution == Distribution::kValues) {
    auto it = std::find(values.begin(), values.end(), v);
    if (it == values.end()) return std::nullopt;
    return (static_cast<double>(it - values.begin()) + 0.5) / static_cast<double>(values.size());
  }
  if (!v.is_number()) return std::nullopt;
  const double x = v.get<double>();
  if (!std::isfinite(x)) return std::nullopt;
  if (discrete()) {
    const double step = distribution == Distribution::kQUniform ? q : 1.0;
    const auto i = std::llround((x - min) / step);
    if (i < 0 || i >= size()) return std::nullopt;
    return (static_cast<double>(i) + 0.5) / static_cast<double>(size());
  }
  // Integer parameters round draws, so their values may lie up to 0.5 outside [min, max].
  const double slack = integer ? 0.5 : 1e-9 * std::max(std::abs(min), std::abs(max));
  if (x < min - slack || x > max + slack) return std::nullopt;
  if (distribution == Distribution::kUniform) return clamp_unit((x - min) / (max - min));
  if (x <= 0) return std::nullopt;
  return clamp_unit((std::log(x) - std::log(min)) / (std::log(max) - std::log(min)));
}

json Domain::to_json() const {
  if (distribution == Distribution::kValue) return {{"value", values.at(0)}};
  if (distribution == Distribution::kValues) return {{"values", values}};
  // Integral bounds are written as integers so that int_uniform reads them back.
  auto bound = [](double x) {
    return std::abs(x) < 0x1p53 && x == std::floor(x) ? json(static_cast<int64_t>(x)) : json(x);
  };
  json j = {
      {"distribution", distribution_name(distribution)}, {"min", bound(min)}, {"max", bound(max)}};
  if (distribution == Distribution::kQUniform || distribution == Distribution::kQLogUniform)
    j["q"] = bound(q);
  return j;
}

SearchSpace::SearchSpace(std::vector<std::pair<std::string, Domain>> parameters)
    : parameters_(std::move(parameters)) {
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (!parameters_[i].second.fixed()) dims_.push_back(i);
}

int64_t SearchSpace::grid_size() const {
  int64_t total = 1;
  for (const auto& [name, domain] : parameters_) {
    if (!domain.discrete()) return 0;
    const int64_t n = domain.size();
    if (n > 0 && total > std::numeric_limits<int64_t>::max() / n)
      return std::numeric_limits<int64_t>::max();
    total *= n;
  }
  return total;
}

json SearchSpace::grid_point(int64_t index) const {
  json out = json::object();
  for (auto it = parameters_.rbegin(); it != parameters_.rend(); ++it) {
    const int64_t n = it->second.size();
    out[it->first] = it->second.at(index % n);
    index /= n;
  }
  return out;
}

json SearchSpace::from_unit(std::span<const double> u) const {
  if (u.size() != dims_.size()) throw internal_error("SearchSpace::from_unit: wrong dimension");
  json out = json::object();
  size_t k = 0;
  for (const auto& [name, domain] : parameters_)
    out[name] = domain.fixed() ? domain.values.at(0) : domain.from_unit(u[k++]);
  return out;
}

}  // namespace layerlab::study
