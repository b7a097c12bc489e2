// Search spaces: the domain of each parameter a study varies, and the two ways samplers read
// them. The grid enumerates discrete domains; random, sobol and tpe map a point of the unit
// cube [0,1)^k to parameter values, one coordinate per varying (non-fixed) parameter, so the
// three share one mapping (and tpe models observations in the same coordinates).
//
// Values are JSON in the canonical form nn::Params::to_json() writes (1 -> 1.0 for a float
// parameter), so two trials with equal parameters have equal JSON.
//
// Everything here is immutable after construction and safe to share between threads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace layerlab::study {

// The largest double below 1: the top of a unit interval that excludes 1.
inline constexpr double kBelowOne = 0x1.fffffffffffffp-1;

enum class Distribution {
  kValue,       // one fixed value
  kValues,      // a list of choices (also written `distribution: categorical`)
  kUniform,     // [min, max)
  kLogUniform,  // [min, max), uniform in log space
  kIntUniform,  // the integers min..max, both included
  kQUniform,    // min, min + q, min + 2q ... <= max
  kQLogUniform  // log_uniform rounded to a multiple of q, kept inside [min, max]
};

// "value", "values", "uniform", "log_uniform", "int_uniform", "q_uniform", "q_log_uniform".
const char* distribution_name(Distribution d);

// What a parameter takes, from nn::Params' field types.
enum class ParamKind { kInteger, kNumber, kBool, kName, kList };
// Throws internal_error for a name that is not a parameter.
ParamKind param_kind(const std::string& name);
// "an integer", "a number", "true or false", "a name", "a list of layer widths".
const char* param_kind_description(ParamKind kind);

// Checks `value` for parameter `name` by building nn::Params from the defaults plus that
// value (so messages are nn's: "units: expected a positive integer, got -3"); returns it in
// canonical form. Throws InvalidArgument.
nlohmann::json canonical_value(const std::string& name, const nlohmann::json& value);

// One parameter's search domain.
struct Domain {
  Distribution distribution = Distribution::kValue;
  std::vector<nlohmann::json> values;  // kValue: the value; kValues: the choices (canonical)
  double min = 0, max = 0, q = 0;      // numeric distributions; q for the q_ variants
  bool integer = false;                // the parameter takes integers: draws are rounded

  bool fixed() const { return distribution == Distribution::kValue; }
  // True when the domain is a finite list of points: value, values, int_uniform, q_uniform.
  bool discrete() const;
  // The number of points of a discrete domain (0 for a continuous one).
  int64_t size() const;
  // The i-th point of a discrete domain, 0 <= i < size(), in increasing order for numbers.
  nlohmann::json at(int64_t i) const;
  // The value at coordinate u in [0, 1). Discrete domains split [0, 1) into size() equal
  // cells; uniform is linear, log_uniform linear in log space, q_log_uniform rounds that to
  // a multiple of q; integer parameters round to the nearest integer.
  nlohmann::json from_unit(double u) const;
  // A coordinate that from_unit() maps to v (the middle of v's cell for a discrete domain),
  // or nullopt when v is not in the domain.
  std::optional<double> to_unit(const nlohmann::json& v) const;
  // {value: X} | {values: [...]} | {distribution: D, min: A, max: B[, q: Q]}: a study file's
  // form, which parses back to the same domain.
  nlohmann::json to_json() const;

  // A number of this parameter's type (int for integer parameters, else double).
  nlohmann::json number(double x) const;
};

// The parameters of a study, in file order.
class SearchSpace {
 public:
  explicit SearchSpace(std::vector<std::pair<std::string, Domain>> parameters);

  const std::vector<std::pair<std::string, Domain>>& parameters() const { return parameters_; }
  // The varying (non-fixed) parameters, in file order: unit-cube coordinate k is the
  // parameter parameters()[dimension_index(k)].
  size_t dimensions() const { return dims_.size(); }
  size_t dimension_index(size_t k) const { return dims_[k]; }
  const std::string& dimension_name(size_t k) const { return parameters_[dims_[k]].first; }
  const Domain& dimension(size_t k) const { return parameters_[dims_[k]].second; }

  // The number of grid configurations (product of the domains' sizes), saturating at
  // INT64_MAX; 0 when some domain is not discrete.
  int64_t grid_size() const;
  // Configuration `index` of the grid: nested loops over the parameters in file order, the
  // first parameter outermost and the last varying fastest.
  nlohmann::json grid_point(int64_t index) const;
  // The configuration at a point of the unit cube (u.size() == dimensions()).
  nlohmann::json from_unit(std::span<const double> u) const;

 private:
  std::vector<std::pair<std::string, Domain>> parameters_;
  std::vector<size_t> dims_;
};

}  // namespace layerlab::study
