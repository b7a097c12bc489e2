#include "nn/params.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"
#include "nn/network.h"
#include "nn/registries.h"

namespace layerlab::nn {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& key, const std::string& expected, const json& got) {
  throw invalid_argument(key + ": expected " + expected + ", got " + describe_value(got));
}

void read(const std::string& key, const json& j, int& out) {
  if (!j.is_number_integer()) bad(key, "an integer", j);
  const auto v = j.get<int64_t>();
  if (v < INT32_MIN || v > INT32_MAX) bad(key, "an integer in 32-bit range", j);
  out = static_cast<int>(v);
}
void read(const std::string& key, const json& j, uint64_t& out) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0) bad(key, "a non-negative integer", j);
  out = j.get<uint64_t>();
}
void read(const std::string& key, const json& j, double& out) {
  if (!j.is_number()) bad(key, "a number", j);
  if (!std::isfinite(j.get<double>())) bad(key, "a finite number", j);
  out = j.get<double>();
}
void read(const std::string& key, const json& j, bool& out) {
  if (!j.is_boolean()) bad(key, "true or false", j);
  out = j.get<bool>();
}
void read(const std::string& key, const json& j, std::string& out) {
  if (!j.is_string()) bad(key, "a name", j);
  out = j.get<std::string>();
}
void read(const std::string& key, const json& j, std::vector<int>& out) {
  if (!j.is_array()) bad(key, "a list of layer widths", j);
  if (static_cast<int64_t>(j.size()) > NetworkLimits{}.max_hidden_layers)
    throw invalid_argument(
        fmt::format("{}: {} layers; at most {} (NetworkLimits::max_hidden_layers)", key, j.size(),
                    NetworkLimits{}.max_hidden_layers));
  out.clear();
  for (size_t i = 0; i < j.size(); ++i) {
    int v = 0;
    read(key + "[" + std::to_string(i) + "]", j[i], v);
    out.push_back(v);
  }
}

struct Field {
  std::string name;
  std::function<void(Params&, const json&)> read;
  std::function<void(const Params&, json&)> write;
};

template <typename T>
Field field(const char* name, T Params::*member) {
  return {name, [name, member](Params& p, const json& j) { read(name, j, p.*member); },
          [name, member](const Params& p, json& j) { j[name] = p.*member; }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      field("hidden_layers", &Params::hidden_layers),
      field("units", &Params::units),
      field("layers", &Params::layers),
      field("activation", &Params::activation),
      field("dropout", &Params::dropout),
      field("batch_norm", &Params::batch_norm),
      field("residual", &Params::residual),
      field("init", &Params::init),
      field("optimizer", &Params::optimizer),
      field("learning_rate", &Params::learning_rate),
      field("momentum", &Params::momentum),
      field("weight_decay", &Params::weight_decay),
      field("batch_size", &Params::batch_size),
      field("epochs", &Params::epochs),
      field("lr_schedule", &Params::lr_schedule),
      field("lr_step_epochs", &Params::lr_step_epochs),
      field("lr_gamma", &Params::lr_gamma),
      field("lr_min", &Params::lr_min),
      field("warmup_epochs", &Params::warmup_epochs),
      field("patience", &Params::patience),
      field("seed", &Params::seed),
      field("precision", &Params::precision),
  };
  return f;
}

// "at most N (NetworkLimits::FIELD)" or "at most N WHAT (NetworkLimits::FIELD)".
std::string at_most(int64_t n, const char* field, const char* what = nullptr) {
  return fmt::format("at most {}{}{} (NetworkLimits::{})", n, what ? " " : "", what ? what : "",
                     field);
}

template <typename T>
void require(bool ok, const char* key, const char* expected, T got) {
  if (!ok) bad(key, expected, json(got));
}

template <typename T>
void check_name(const Registry<T>& registry, const char* key, const std::string& name) {
  if (!registry.contains(name))
    throw invalid_argument(std::string(key) + ": " + registry.unknown_message(name));
}

}  // namespace

std::string describe_value(const json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "infinity" : "-infinity";
  }
  if (j.is_structured())
    for (const json& e : j)
      if (e.is_structured()) return j.is_array() ? "a nested list" : "a nested object";
  return excerpt(j.dump(-1, ' ', false, json::error_handler_t::replace), 200);
}

std::vector<int> Params::hidden_widths() const {
  // validate() bounds hidden_layers; this guards the allocation for unvalidated Params.
  if (layers.empty() && hidden_layers > NetworkLimits{}.max_hidden_layers)
    throw invalid_argument(fmt::format("hidden_layers: {}; at most {}", hidden_layers,
                                       NetworkLimits{}.max_hidden_layers));
  if (!layers.empty()) return layers;
  return std::vector<int>(static_cast<size_t>(std::max(hidden_layers, 0)), units);
}

void Params::validate() const {
  const NetworkLimits limits;
  require(hidden_layers >= 0, "hidden_layers", "a non-negative integer", hidden_layers);
  require(hidden_layers <= limits.max_hidden_layers, "hidden_layers",
          at_most(limits.max_hidden_layers, "max_hidden_layers").c_str(), hidden_layers);
  require(units >= 1, "units", "a positive integer", units);
  require(units <= limits.max_units, "units", at_most(limits.max_units, "max_units").c_str(),
          units);
  for (int w : layers) require(w >= 1, "layers", "positive layer widths", layers);
  require(static_cast<int64_t>(layers.size()) <= limits.max_hidden_layers, "layers",
          at_most(limits.max_hidden_layers, "max_hidden_layers", "layers").c_str(), layers.size());
  for (int w : layers)
    require(w <= limits.max_units, "layers",
            at_most(limits.max_units, "max_units", "units per layer").c_str(), layers);
  require(dropout >= 0.0 && dropout < 1.0, "dropout", "a rate in [0, 1)", dropout);
  require(learning_rate > 0.0 && std::isfinite(learning_rate), "learning_rate", "a positive number",
          learning_rate);
  require(momentum >= 0.0 && momentum < 1.0, "momentum", "a value in [0, 1)", momentum);
  require(weight_decay >= 0.0 && std::isfinite(weight_decay), "weight_decay",
          "a finite non-negative number", weight_decay);
  require(batch_size >= 1, "batch_size", "a positive integer", batch_size);
  require(epochs >= 1, "epochs", "a positive integer", epochs);
  require(lr_step_epochs >= 1, "lr_step_epochs", "a positive integer", lr_step_epochs);
  require(lr_gamma > 0.0 && std::isfinite(lr_gamma), "lr_gamma", "a finite positive number",
          lr_gamma);
  require(lr_min >= 0.0 && std::isfinite(lr_min), "lr_min", "a finite non-negative number", lr_min);
  require(warmup_epochs >= 0, "warmup_epochs", "a non-negative integer", warmup_epochs);
  require(patience >= 0, "patience", "a non-negative integer", patience);
  check_name(activations(), "activation", activation);
  check_name(initializers(), "init", init);
  check_name(optimizers(), "optimizer", optimizer);
  check_name(schedules(), "lr_schedule", lr_schedule);
  check_name(precisions(), "precision", precision);
}

json Params::to_json() const {
  json j = json::object();
  for (const Field& f : fields()) f.write(*this, j);
  return j;
}

Params Params::from_json(const json& j) {
  if (!j.is_object())
    throw invalid_argument("parameters: expected an object, got " + describe_value(j));
  Params p;
  for (const auto& [key, value] : j.items()) {
    const Field* match = nullptr;
    for (const Field& f : fields())
      if (f.name == key) match = &f;
    if (!match) {
      std::string msg = "unknown parameter '" + key + "'";
      std::string hint = closest_match(key, keys());
      if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
      throw invalid_argument(msg + "; known: " + join(keys(), ", "));
    }
    match->read(p, value);
  }
  p.validate();
  return p;
}

const std::vector<std::string>& Params::keys() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> out;
    for (const Field& f : fields()) out.push_back(f.name);
    return out;
  }();
  return k;
}

}  // namespace layerlab::nn
