// The study-file parser: YAML nodes are walked with their key paths and marks, so every
// error names FILE:LINE:COL; parameter values are checked by nn::Params itself.
#include "study/spec.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"
#include "data/dataset.h"
#include "nn/params.h"
#include "store/records.h"
#include "study/metrics.h"
#include "study/pruner.h"
#include "study/sampler.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

// int_uniform, q_uniform points; q_log_uniform multiples of q up to max (fit int64 easily).
constexpr double kMaxDomainPoints = 1e12;

const std::vector<std::string> kTopKeys = {
    "name",  "datasets",   "validation",      "metric",          "method",         "budget",
    "seeds", "parameters", "parameter_order", "early_terminate", "early_stopping", "keep_weights"};
const std::vector<std::string> kDistributions = {"uniform",   "log_uniform",   "int_uniform",
                                                 "q_uniform", "q_log_uniform", "categorical"};
const std::vector<std::string> kDomainKeys = {"value", "values", "distribution", "min", "max", "q"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string fmt_count(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

// A bound as people write it: 100000, 0.5, 1e+20.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// Messages are one line: control characters quoted from the file are escaped.
std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// YAML 1.2 core schema resolution of a plain scalar.
bool is_int_text(std::string_view s) {
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+');
  if (i == s.size()) return false;
  return std::all_of(s.begin() + static_cast<ptrdiff_t>(i), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}
bool is_float_text(std::string_view s) {
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+');
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  size_t before = digits(), after = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    after = digits();
  }
  if (before == 0 && after == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

json scalar_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;
  if (n.IsNull() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view t = s;
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  if (is_int_text(s)) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && end == t.data() + t.size()) return v;
  }
  if (is_float_text(s)) {
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    // Out of range: from_chars leaves v alone; strtod gives +-infinity for an overflow
    // (1e400, reported as "infinity") and 0 for an underflow.
    if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(t).c_str(), nullptr);
    return v;
  }
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  if (t == ".inf" || t == ".Inf" || t == ".INF")
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return s;
}

json node_json(const YAML::Node& n) {
  if (n.IsSequence()) {
    json out = json::array();
    for (const auto& e : n) out.push_back(node_json(e));
    return out;
  }
  if (n.IsMap()) {
    json out = json::object();
    for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = node_json(it->second);
    return out;
  }
  if (n.IsNull()) return nullptr;
  return scalar_json(n);
}

// What a node holds, for "got ..." in messages: strings quoted (a long one cut short),
// numbers as written, NaN and infinities named.
std::string got(const YAML::Node& n) {
  if (n.IsSequence()) return n.size() == 0 ? "[]" : "a list";
  if (n.IsMap()) return n.size() == 0 ? "{}" : "a mapping";
  if (!n.IsScalar()) return "null";
  const json j = scalar_json(n);
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    return std::isnan(j.get<double>()) ? "NaN" : j.get<double>() > 0 ? "infinity" : "-infinity";
  return j.is_string() ? excerpt(j.dump()) : j.is_null() ? "null" : excerpt(n.Scalar());
}

// A node with its key path and the place to report it at (a null value is reported at its
// key, since yaml-cpp marks it at the next token).
struct Item {
  YAML::Node node;
  std::string path;
  YAML::Mark mark;
};

struct Field {
  std::string key;
  YAML::Mark key_mark;
  Item value;
};
using Fields = std::vector<Field>;

const Item* find(const Fields& fields, const std::string& key) {
  for (const Field& f : fields)
    if (f.key == key) return &f.value;
  return nullptr;
}

// The largest numeric value of a parameter's domain (`fallback` when the study leaves the
// parameter at its default).
double domain_max(const StudySpec& s, const std::string& name, double fallback) {
  for (const auto& [n, d] : s.parameters) {
    if (n != name) continue;
    if (d.distribution != Distribution::kValue && d.distribution != Distribution::kValues)
      return d.max;
    double m = 0;
    for (const json& v : d.values)
      if (v.is_number()) m = std::max(m, v.get<double>());
    return m;
  }
  return fallback;
}

// Whether some value of a boolean parameter's domain is true, or of a numeric one positive.
bool domain_any(const StudySpec& s, const std::string& name, bool fallback) {
  for (const auto& [n, d] : s.parameters) {
    if (n != name) continue;
    if (d.distribution != Distribution::kValue && d.distribution != Distribution::kValues)
      return d.max > 0;
    for (const json& v : d.values)
      if ((v.is_boolean() && v.get<bool>()) || (v.is_number() && v.get<double>() > 0)) return true;
    return false;
  }
  return fallback;
}

// The networks that bound every network of the search space: hidden_layers x units at their
// largest, and each list of `layers` values; with the largest batch and every optional
// buffer (batch norm, dropout, residual) that some trial may use.
std::vector<nn::Architecture> largest_networks(const StudySpec& s, int inputs, int outputs,
                                               int64_t* rows) {
  const nn::Params defaults;
  nn::Architecture base;
  base.inputs = inputs;
  base.outputs = outputs;
  base.batch_norm = domain_any(s, "batch_norm", defaults.batch_norm);
  base.residual = domain_any(s, "residual", defaults.residual);
  base.dropout = domain_any(s, "dropout", defaults.dropout > 0);
  // The trainer's rows per pass: the batch, or up to 256 validation rows.
  *rows = std::max<int64_t>(256,
                            static_cast<int64_t>(domain_max(s, "batch_size", defaults.batch_size)));
  std::vector<nn::Architecture> out;
  bool plain = true;  // some trial uses hidden_layers x units
  for (const auto& [n, d] : s.parameters) {
    if (n != "layers") continue;
    plain = false;
    for (const json& v : d.values) {
      if (!v.is_array() || v.empty()) {
        plain = true;
        continue;
      }
      nn::Architecture a = base;
      for (const json& w : v) a.hidden.push_back(w.get<int>());
      out.push_back(std::move(a));
    }
  }
  if (plain) {
    nn::Architecture a = base;
    const auto depth = static_cast<int64_t>(domain_max(s, "hidden_layers", defaults.hidden_layers));
    const auto width = static_cast<int>(domain_max(s, "units", defaults.units));
    // Params::validate() has held both to NetworkLimits' defaults; a smaller depth limit
    // is checked first, so the list built here stays small.
    const int64_t max_depth = nn::NetworkLimits{}.max_hidden_layers + 1;
    a.hidden.assign(static_cast<size_t>(std::clamp<int64_t>(depth, 0, max_depth)), width);
    out.push_back(std::move(a));
  }
  return out;
}

// The SpecLimits field that bounds a numeric parameter from above; nullptr for the others
// (units and hidden_layers: NetworkLimits; dropout and momentum: below 1).
struct Bound {
  double max;
  const char* field;
};
std::optional<Bound> parameter_bound(const SpecLimits& l, const std::string& name) {
  if (contains({"epochs", "lr_step_epochs", "warmup_epochs", "patience"}, name))
    return Bound{static_cast<double>(l.max_epochs), "max_epochs"};
  if (name == "batch_size") return Bound{static_cast<double>(l.max_batch_size), "max_batch_size"};
  if (contains({"learning_rate", "weight_decay", "lr_gamma", "lr_min"}, name))
    return Bound{l.max_rate, "max_rate"};
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::string file, const SpecLimits& limits) : file_(std::move(file)), limits_(limits) {}

  StudySpec study(const Item& top);

  // FILE:LINE:COL
  std::string place(const YAML::Mark& m) const {
    const int line = std::max(m.line, 0) + 1, column = std::max(m.column, 0) + 1;
    return file_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  [[noreturn]] void fail_at(const YAML::Mark& m, const std::string& message) const {
    throw invalid_argument(one_line(message + " (" + place(m) + ")"));
  }
  [[noreturn]] void fail(const Item& at, const std::string& message) const {
    fail_at(at.mark, at.path.empty() ? message : at.path + ": " + message);
  }
  [[noreturn]] void expected(const Item& at, const std::string& what) const {
    fail(at, "expected " + what + ", got " + got(at.node));
  }

 private:
  Fields mapping(const Item& item, const std::string& what) const;
  void check_keys(const Fields& fields, const std::vector<std::string>& allowed) const;
  Fields settings(const Item& item, const std::vector<std::string>& allowed) const {
    Fields f = mapping(item, "a mapping of " + join(allowed, ", "));
    check_keys(f, allowed);
    return f;
  }
  std::vector<Item> sequence(const Item& item, const std::string& what) const;
  std::string text(const Item& item, const std::string& what) const;
  std::string choice(const Item& item, const std::string& kind,
                     const std::vector<std::string>& choices) const;
  int64_t integer(const Item& item, int64_t min, const std::string& what) const;
  // integer(), refused above `max` with "at most MAX (SpecLimits::FIELD)".
  int64_t bounded(const Item& item, int64_t min, int64_t max, const char* field) const;
  // Refuses a parameter's number above its bound (parameter_bound).
  void check_bound(const std::string& name, const json& value, const Item& at) const;
  double number(const Item& item) const;
  bool boolean(const Item& item) const;

  void datasets(StudySpec& s, const Item& item);
  // The metric and its goal, checked against every dataset's task (tasks_).
  void metric(StudySpec& s, const Item* item, const Item& datasets) const;
  std::string dataset_text(const StudySpec& s, size_t i) const {
    return "datasets[" + std::to_string(i) + "] (" + excerpt(s.datasets[i]) + ", " +
           data::task_name(tasks_[i]) + ")";
  }
  void parameters(StudySpec& s, const Fields& top, bool patience_given);
  Domain domain(const std::string& name, const Item& item) const;
  void distribution(Domain& d, const std::string& name, const Item& param, const Fields& f) const;
  json parameter_value(const std::string& name, const Item& item) const;
  void check_method(const StudySpec& s, const Item& top, const Fields& f) const;

  // The entries of a list (0 for anything else), counted before they are read.
  static int64_t size_of(const Item& item) {
    return item.node.IsSequence() ? static_cast<int64_t>(item.node.size()) : 0;
  }
  // "N THINGS; at most M (SpecLimits::FIELD)" when `n` exceeds `max`.
  void limit(const Item& at, int64_t n, int64_t max, const char* things, const char* field) const {
    if (n > max)
      fail(at, std::to_string(n) + " " + things + "; at most " + std::to_string(max) +
                   " (SpecLimits::" + field + ")");
  }
  void check_networks(const StudySpec& s, const Fields& top) const;

  std::string file_;
  const SpecLimits& limits_;
  std::vector<Item> param_items_;  // parallel to StudySpec::parameters
  std::vector<data::Task> tasks_;  // parallel to StudySpec::datasets
};

Fields Parser::mapping(const Item& item, const std::string& what) const {
  if (!item.node.IsMap()) expected(item, what);
  Fields out;
  std::unordered_map<std::string, size_t> seen;  // key -> index in out: linear, not quadratic
  for (auto it = item.node.begin(); it != item.node.end(); ++it) {
    const YAML::Node k = it->first;
    const std::string prefix = item.path.empty() ? "" : item.path + ".";
    if (!k.IsScalar())
      fail_at(k.Mark(),
              (item.path.empty() ? "" : item.path + ": ") + "expected a key name, got " + got(k));
    const std::string path = prefix + excerpt(k.Scalar());
    if (const auto prev = seen.find(k.Scalar()); prev != seen.end())
      fail_at(k.Mark(), path + ": key given twice (first on line " +
                            std::to_string(out[prev->second].key_mark.line + 1) + ")");
    seen.emplace(k.Scalar(), out.size());
    const YAML::Node v = it->second;
    out.push_back({k.Scalar(), k.Mark(), Item{v, path, v.IsNull() ? k.Mark() : v.Mark()}});
  }
  return out;
}

void Parser::check_keys(const Fields& fields, const std::vector<std::string>& allowed) const {
  for (const Field& f : fields) {
    if (contains(allowed, f.key)) continue;
    std::string msg = f.value.path + ": unknown key";
    const std::string hint = closest_match(f.key, allowed);
    if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
    fail_at(f.key_mark, msg + "; expected one of " + join(allowed, ", "));
  }
}

std::vector<Item> Parser::sequence(const Item& item, const std::string& what) const {
  if (!item.node.IsSequence() || item.node.size() == 0) expected(item, what);
  std::vector<Item> out;
  for (size_t i = 0; i < item.node.size(); ++i) {
    const YAML::Node e = item.node[i];
    out.push_back(
        {e, item.path + "[" + std::to_string(i) + "]", e.IsNull() ? item.mark : e.Mark()});
  }
  return out;
}

std::string Parser::text(const Item& item, const std::string& what) const {
  if (!item.node.IsScalar() || scalar_json(item.node).is_null() || item.node.Scalar().empty())
    expected(item, what);
  return item.node.Scalar();
}

std::string Parser::choice(const Item& item, const std::string& kind,
                           const std::vector<std::string>& choices) const {
  const std::string v = text(item, "one of " + join(choices, ", "));
  if (contains(choices, v)) return v;
  std::string msg = "unknown " + kind + " '" + excerpt(v) + "'";
  const std::string hint = closest_match(v, choices);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  fail(item, msg + "; expected one of " + join(choices, ", "));
}

int64_t Parser::integer(const Item& item, int64_t min, const std::string& what) const {
  const json j = item.node.IsScalar() ? scalar_json(item.node) : json();
  if (!j.is_number_integer() || j.get<int64_t>() < min) expected(item, what);
  return j.get<int64_t>();
}

int64_t Parser::bounded(const Item& item, int64_t min, int64_t max, const char* field) const {
  const std::string what =
      min == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(min);
  const int64_t v = integer(item, min, what);
  if (v > max)
    fail(item, std::to_string(v) + " is too large; at most " + std::to_string(max) +
                   " (SpecLimits::" + field + ")");
  return v;
}

void Parser::check_bound(const std::string& name, const json& value, const Item& at) const {
  const std::optional<Bound> bound = parameter_bound(limits_, name);
  if (!bound || !value.is_number() || value.get<double>() <= bound->max) return;
  fail_at(at.mark, "parameters." + name + ": " + got(at.node) + " is too large; at most " +
                       number_text(bound->max) + " (SpecLimits::" + bound->field + ")");
}

double Parser::number(const Item& item) const {
  const json j = item.node.IsScalar() ? scalar_json(item.node) : json();
  if (!j.is_number() || !std::isfinite(j.get<double>())) expected(item, "a finite number");
  return j.get<double>();
}

bool Parser::boolean(const Item& item) const {
  const json j = item.node.IsScalar() ? scalar_json(item.node) : json();
  if (!j.is_boolean()) expected(item, "true or false");
  return j.get<bool>();
}

StudySpec Parser::study(const Item& top) {
  const Fields f = mapping(top, "a mapping at the top level (name:, datasets:, parameters: ...)");
  check_keys(f, kTopKeys);
  StudySpec s;
  auto required = [&](const char* key, const char* what) -> const Item& {
    const Item* item = find(f, key);
    if (!item) fail(top, std::string("missing required key '") + key + "': " + what);
    return *item;
  };

  const Item& name = required("name", "the study's name, [a-z0-9._-]+");
  s.name = text(name, "a study name");
  const bool name_ok =
      s.name.size() <= 100 && std::all_of(s.name.begin(), s.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      });
  if (!name_ok) expected(name, "a name of at most 100 characters from [a-z0-9._-]");
  datasets(s, required("datasets", "a list of dataset names or specs, e.g. [iris, wine]"));

  if (const Item* v = find(f, "validation")) {
    const Fields vf = settings(*v, {"fraction", "stratify"});
    if (const Item* fr = find(vf, "fraction")) {
      s.validation_fraction = number(*fr);
      if (s.validation_fraction <= 0 || s.validation_fraction >= 1)
        expected(*fr, "a fraction in (0, 1)");
      s.validation_place = place(fr->mark);
    }
    if (const Item* st = find(vf, "stratify")) s.stratify = boolean(*st);
  }
  metric(s, find(f, "metric"), *find(f, "datasets"));
  if (const Item* m = find(f, "method")) {
    s.method = text(*m, "one of " + join(samplers().names(), ", "));
    if (!samplers().contains(s.method)) fail(*m, samplers().unknown_message(s.method));
  }
  if (const Item* b = find(f, "budget")) {
    const Fields bf = settings(*b, {"trials", "hours"});
    if (const Item* t = find(bf, "trials")) {
      s.budget_trials = integer(*t, 1, "a positive integer");
      if (s.budget_trials > limits_.max_trials)
        expected(*t, "at most " + std::to_string(limits_.max_trials) +
                         " trials (SpecLimits::max_trials)");
    }
    if (const Item* h = find(bf, "hours")) {
      s.budget_hours = number(*h);
      if (s.budget_hours <= 0) expected(*h, "a positive number of hours");
      if (s.budget_hours > limits_.max_hours)
        fail(*h, got(h->node) + " hours is too long; at most " + number_text(limits_.max_hours) +
                     " (SpecLimits::max_hours)");
    }
  }
  if (const Item* sd = find(f, "seeds")) {
    s.seeds.clear();
    limit(*sd, size_of(*sd), limits_.max_seeds, "seeds", "max_seeds");
    const std::vector<Item> seeds = sequence(*sd, "a non-empty list of non-negative integers");
    for (const Item& e : seeds) {
      const auto seed = static_cast<uint64_t>(integer(e, 0, "a non-negative integer"));
      if (std::find(s.seeds.begin(), s.seeds.end(), seed) != s.seeds.end())
        fail(e, "seed " + std::to_string(seed) + " is listed twice");
      s.seeds.push_back(seed);
    }
  }
  const Item* stopping = find(f, "early_stopping");
  if (stopping) {
    const Fields sf = settings(*stopping, {"patience"});
    const Item* p = find(sf, "patience");
    if (!p) fail(*stopping, "expected patience: N (epochs without improvement; 0 = off)");
    s.patience = static_cast<int>(bounded(*p, 0, limits_.max_epochs, "max_epochs"));
  }
  if (const Item* kw = find(f, "keep_weights")) {
    const Fields kf = settings(*kw, {"top"});
    const Item* t = find(kf, "top");
    if (!t)
      fail(*kw, "expected top: K (how many of each dataset's best trials keep their weights)");
    const int64_t keep = integer(*t, 1, "a positive integer");
    if (keep > store::kMaxKeptPerDataset)
      expected(*t, "at most " + std::to_string(store::kMaxKeptPerDataset) +
                       " (kept models per dataset)");
    s.keep_top = static_cast<int>(keep);
  }
  if (const Item* et = find(f, "early_terminate")) {
    const Fields ef = settings(*et, {"type", "min_epochs", "eta", "warmup_epochs"});
    const Item* type = find(ef, "type");
    if (!type) fail(*et, "missing required key 'type': " + join(pruner_types(), " or "));
    s.early_terminate.type = choice(*type, "early_terminate type", pruner_types());
    std::vector<std::string> keys = {"type"};
    for (const std::string& k : pruner_settings(s.early_terminate.type)) keys.push_back(k);
    for (const Field& e : ef)
      if (!contains(keys, e.key))
        fail_at(e.key_mark, e.value.path + ": not a setting of type " + s.early_terminate.type +
                                "; expected one of " + join(keys, ", "));
    auto small = [&](const char* key, int64_t min, int64_t max, const char* field, int& out) {
      if (const Item* i = find(ef, key)) out = static_cast<int>(bounded(*i, min, max, field));
    };
    small("min_epochs", 1, limits_.max_epochs, "max_epochs", s.early_terminate.min_epochs);
    small("eta", 2, limits_.max_eta, "max_eta", s.early_terminate.eta);
    small("warmup_epochs", 0, limits_.max_epochs, "max_epochs", s.early_terminate.warmup_epochs);
  }
  parameters(s, f, stopping != nullptr);
  check_method(s, top, f);
  check_networks(s, f);
  return s;
}

void Parser::datasets(StudySpec& s, const Item& item) {
  const std::vector<std::string> known = data::known_datasets();
  limit(item, size_of(item), limits_.max_datasets, "datasets", "max_datasets");
  const std::vector<Item> items =
      sequence(item, "a non-empty list of dataset names or specs, e.g. [iris, wine]");
  for (const Item& e : items) {
    const std::string d = text(e, "a dataset name or spec");
    if (std::find(s.datasets.begin(), s.datasets.end(), d) != s.datasets.end())
      fail(e, "dataset '" + excerpt(d) + "' is listed twice");
    s.datasets.push_back(d);
    s.dataset_places.push_back(place(e.mark));
    // Only plain names are checked here: files are opened by the trials, not by the parser.
    const std::string head = d.substr(0, d.find('?'));
    if (head.find_first_of(":/") == std::string::npos && !ends_with(head, ".csv") &&
        !ends_with(head, ".csv.gz") && !ends_with(head, ".libsvm") && !ends_with(head, ".svm") &&
        !contains(known, head)) {
      std::string msg = "unknown dataset '" + excerpt(head) + "'";
      const std::string hint = closest_match(head, known);
      if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
      fail(e, msg + "; known: " + join(known, ", ") +
                  " (csv:PATH, libsvm:PATH, idx:IMAGES,LABELS for files)");
    }
    // The task is in the spec (task=, or the kind of dataset): the metric is checked here.
    try {
      tasks_.push_back(data::task_of(d));
    } catch (const Error& error) {
      fail(e, error.what());
    }
  }
}

void Parser::metric(StudySpec& s, const Item* item, const Item& datasets) const {
  Fields mf;
  if (item) mf = settings(*item, {"name", "goal"});
  const Item* name = find(mf, "name");
  const Item* goal = find(mf, "goal");
  std::vector<std::string> common = metric_names();  // the metrics every dataset reports
  for (const data::Task task : tasks_)
    std::erase_if(common, [&](const std::string& m) { return !reports(task, m); });
  if (name) {
    s.metric = choice(*name, "metric", metric_names());
    for (size_t i = 0; i < tasks_.size(); ++i)
      if (!reports(tasks_[i], s.metric))
        fail(*name, dataset_text(s, i) + " does not report " + s.metric + "; its trials report " +
                        join(metrics_of(tasks_[i]), ", ") +
                        (common.size() < metrics_of(tasks_[i]).size()
                             ? "; every dataset of this study reports " + join(common, ", ")
                             : ""));
  } else {
    s.metric = std::string(default_metric(tasks_.front()));
    for (size_t i = 1; i < tasks_.size(); ++i)
      if (tasks_[i] != tasks_.front())
        fail_at(datasets.mark,
                "metric: " + dataset_text(s, 0) + " and " + dataset_text(s, i) +
                    " have no default metric in common; name one that both report: metric: "
                    "{name: " +
                    common.front() + "} (or " +
                    join(std::vector(common.begin() + 1, common.end()), ", ") +
                    "; each dataset is ranked on its own)");
  }
  const Metric& m = *find_metric(s.metric);
  s.maximize = m.maximize;
  if (goal && (choice(*goal, "goal", {"maximize", "minimize"}) == "maximize") != m.maximize)
    fail(*goal, s.metric + " is " + std::string(m.kind) + ": goal must be " +
                    (m.maximize ? "maximize" : "minimize"));
}

void Parser::parameters(StudySpec& s, const Fields& top, bool patience_given) {
  std::vector<std::string> known;
  for (const std::string& k : nn::Params::keys())
    if (k != "seed") known.push_back(k);
  if (const Item* p = find(top, "parameters")) {
    for (const Field& f : mapping(*p, "a mapping from parameter names to domains")) {
      if (f.key == "seed")
        fail_at(f.key_mark,
                f.value.path +
                    ": the seed is not a parameter; list the seeds in the study's seeds: key");
      if (contains({"dataset", "datasets", "validation_fraction", "stratify", "split_seed"}, f.key))
        fail_at(
            f.key_mark,
            f.value.path + ": set at the study level (datasets:, validation:), not as a parameter");
      if (!contains(known, f.key)) {
        std::string msg = f.value.path + ": unknown parameter";
        const std::string hint = closest_match(f.key, known);
        if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
        fail_at(f.key_mark, msg + "; known: " + join(known, ", "));
      }
      if (f.key == "patience" && patience_given)
        fail_at(f.key_mark,
                f.value.path + ": also set by early_stopping.patience; give it in one place");
      s.parameters.emplace_back(f.key, domain(f.key, f.value));
      param_items_.push_back(f.value);
    }
  }
  const Item* order = find(top, "parameter_order");
  if (!order) return;
  std::vector<std::pair<std::string, Domain>> reordered;
  std::vector<Item> items;
  const std::string what = "a list of the parameters' names, each once";
  if (!order->node.IsSequence()) expected(*order, what);
  for (size_t i = 0; i < order->node.size(); ++i) {
    const Item e{order->node[i], order->path + "[" + std::to_string(i) + "]",
                 order->node[i].Mark()};
    const std::string n = text(e, "a parameter name");
    auto it = std::find_if(s.parameters.begin(), s.parameters.end(),
                           [&](const auto& p) { return p.first == n; });
    if (it == s.parameters.end()) fail(e, "'" + excerpt(n) + "' is not in parameters");
    const auto index = static_cast<size_t>(it - s.parameters.begin());
    for (const auto& r : reordered)
      if (r.first == n) fail(e, "'" + n + "' is listed twice");
    reordered.push_back(*it);
    items.push_back(param_items_[index]);
  }
  if (reordered.size() != s.parameters.size())
    expected(*order, what + " (" + std::to_string(s.parameters.size()) + " names)");
  s.parameters = std::move(reordered);
  param_items_ = std::move(items);
}

json Parser::parameter_value(const std::string& name, const Item& item) const {
  json value;
  try {
    value = canonical_value(name, node_json(item.node));
  } catch (const Error& e) {
    fail_at(item.mark, std::string("parameters.") + e.what());
  }
  check_bound(name, value, item);
  return value;
}

Domain Parser::domain(const std::string& name, const Item& item) const {
  const Fields f =
      mapping(item, "{value: X}, {values: [A, B]} or {distribution: D, min: A, max: B}");
  check_keys(f, kDomainKeys);
  Domain d;
  d.integer = param_kind(name) == ParamKind::kInteger;
  const Item* value = find(f, "value");
  const Item* values = find(f, "values");
  const Item* dist = find(f, "distribution");
  const bool categorical = dist && dist->node.IsScalar() && dist->node.Scalar() == "categorical";
  if (categorical && !values && !value) fail(*dist, "categorical needs values: [A, B, ...]");
  if ((value != nullptr) + (values != nullptr) + (dist != nullptr && !categorical) != 1)
    fail(item, "expected exactly one of value, values or distribution");
  if (dist && !categorical) {
    distribution(d, name, item, f);
    return d;
  }
  for (const Field& e : f)
    if (e.key == "min" || e.key == "max" || e.key == "q")
      fail_at(e.key_mark, e.value.path + ": only a distribution takes min, max and q");
  if (value) {
    d.values = {parameter_value(name, *value)};
    return d;
  }
  d.distribution = Distribution::kValues;
  limit(*values, size_of(*values), limits_.max_values, "values", "max_values");
  const std::vector<Item> items = sequence(*values, "a non-empty list of values");
  for (const Item& e : items) {
    json v = parameter_value(name, e);
    if (std::find(d.values.begin(), d.values.end(), v) != d.values.end())
      fail(e, excerpt(v.dump()) + " is listed twice");
    d.values.push_back(std::move(v));
  }
  return d;
}

void Parser::distribution(Domain& d, const std::string& name, const Item& parent,
                          const Fields& f) const {
  const Item& dist = *find(f, "distribution");
  const std::string kind = choice(dist, "distribution", kDistributions);
  const ParamKind pk = param_kind(name);
  if (pk != ParamKind::kInteger && pk != ParamKind::kNumber)
    fail(dist, kind + " needs a numeric parameter, but " + name + " takes " +
                   param_kind_description(pk) + "; list the choices with values: [...]");
  d.distribution = kind == "uniform"       ? Distribution::kUniform
                   : kind == "log_uniform" ? Distribution::kLogUniform
                   : kind == "int_uniform" ? Distribution::kIntUniform
                   : kind == "q_uniform"   ? Distribution::kQUniform
                                           : Distribution::kQLogUniform;
  const bool quantized =
      d.distribution == Distribution::kQUniform || d.distribution == Distribution::kQLogUniform;
  const Item* min = find(f, "min");
  const Item* max = find(f, "max");
  const Item* q = find(f, "q");
  if (!min || !max) fail(parent, kind + " needs min and max");
  if (quantized && !q) fail(parent, kind + " needs q (the step)");
  if (!quantized && q) fail(*q, "only q_uniform and q_log_uniform take q");
  d.min = number(*min);
  d.max = number(*max);
  if (d.max <= d.min) expected(*max, "a number greater than min (" + min->node.Scalar() + ")");
  check_bound(name, d.max, *max);
  const bool log =
      d.distribution == Distribution::kLogUniform || d.distribution == Distribution::kQLogUniform;
  if (log && d.min <= 0) expected(*min, "a positive number (" + kind + " needs min > 0)");
  auto integral = [](double x) { return x == std::floor(x); };
  if (d.distribution == Distribution::kIntUniform) {
    if (!integral(d.min)) expected(*min, "an integer (int_uniform)");
    if (!integral(d.max)) expected(*max, "an integer (int_uniform)");
  }
  if (q) {
    d.q = number(*q);
    if (d.q <= 0) expected(*q, "a positive number");
    if (d.integer && !integral(d.q)) expected(*q, "an integer step (" + name + " takes integers)");
    if (d.integer && d.distribution == Distribution::kQUniform && !integral(d.min))
      expected(*min, "an integer (" + name + " takes integers)");
    if (log && std::ceil(d.min / d.q - 1e-9) > std::floor(d.max / d.q + 1e-9))
      fail(parent, "no multiple of q = " + q->node.Scalar() + " lies in [min, max]");
    // q_log_uniform draws a multiple k*q: k must stay an integer the sampler can hold.
    if (log && std::floor(d.max / d.q + 1e-9) > kMaxDomainPoints)
      expected(*q, "a step with at most " + fmt_count(kMaxDomainPoints) +
                       " multiples of it up to max (" + max->node.Scalar() + ")");
  }
  if (d.distribution == Distribution::kIntUniform || d.distribution == Distribution::kQUniform) {
    const double points = std::floor((d.max - d.min) / (d.q > 0 ? d.q : 1.0) + 1e-9) + 1;
    if (points > kMaxDomainPoints)
      fail(parent,
           kind + " has " + fmt_count(points) + " points; at most " + fmt_count(kMaxDomainPoints));
  }
  // Both ends must be values the parameter accepts. A continuous float range never draws
  // max itself, so dropout: {distribution: uniform, min: 0, max: 1} is fine.
  try {
    canonical_value(name, d.from_unit(0.0));
  } catch (const Error& e) {
    fail_at(min->mark, std::string("parameters.") + e.what());
  }
  try {
    canonical_value(name, d.discrete() || d.integer ? d.from_unit(kBelowOne) : d.number(d.max));
  } catch (const Error& e) {
    const bool continuous =
        !d.discrete() && !d.integer && d.distribution != Distribution::kQLogUniform;
    bool below_max_ok = false;
    if (continuous) try {
        canonical_value(name, d.from_unit(kBelowOne));
        below_max_ok = true;
      } catch (const Error&) {
      }
    if (!below_max_ok) fail_at(max->mark, std::string("parameters.") + e.what());
  }
}

void Parser::check_networks(const StudySpec& s, const Fields& f) const {
  try {
    check_network_size(s, 0, 0, limits_.network, "");
  } catch (const Error& e) {
    const Item* p = find(f, "parameters");
    const Item& at = p ? *p : Item{YAML::Node(), "parameters", YAML::Mark()};
    fail(at, std::string(e.what()).substr(2));  // without the empty context's ": "
  }
}

void Parser::check_method(const StudySpec& s, const Item& top, const Fields& f) const {
  const Item* method = find(f, "method");
  const Item& at = method ? *method : top;
  if (s.method != "grid") {
    if (s.budget_trials == 0)
      fail(at, s.method + " needs budget: {trials: N} (the number of trials in total)");
    return;
  }
  for (size_t i = 0; i < s.parameters.size(); ++i) {
    const Domain& d = s.parameters[i].second;
    if (!d.discrete())
      fail(param_items_[i],
           std::string("method grid needs a discrete domain (value, values, int_uniform or "
                       "q_uniform), got distribution ") +
               distribution_name(d.distribution));
    if (d.size() > limits_.max_values)
      fail(param_items_[i], "a grid over " + std::to_string(d.size()) +
                                " values is too large (at most " +
                                std::to_string(limits_.max_values) +
                                ", SpecLimits::max_values); use values: or method random");
  }
  const int64_t per = static_cast<int64_t>(s.datasets.size() * s.seeds.size());
  const int64_t configs = s.search_space().grid_size();
  if (configs > limits_.max_trials / per && s.budget_trials == 0) {
    const Item* p = find(f, "parameters");
    fail(p ? *p : at, "the grid has " + std::to_string(configs) + " configurations x " +
                          std::to_string(per) + " (datasets x seeds); at most " +
                          std::to_string(limits_.max_trials) +
                          " trials (SpecLimits::max_trials; or set budget.trials)");
  }
}

// The offset of the quote that closes the quoted scalar opened at `open` (" or '), when it
// closes on the same line; npos otherwise.
size_t closing_quote(const std::string& text, size_t open) {
  const char quote = text[open];
  for (size_t i = open + 1; i < text.size() && text[i] != '\n'; ++i) {
    if (quote == '"' && text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
      ++i;  // an escape: \" does not close (\<newline> goes on to the next line: not closed)
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is a quote inside a single-quoted scalar
        continue;
      }
      return i;
    }
  }
  return std::string::npos;
}

// A pass over the YAML events before any node is built, which also finds where each
// document starts. YAML::LoadAll is not used: on some malformed input (a leading ',')
// yaml-cpp 0.7 keeps reporting documents without advancing, and LoadAll loops, allocating,
// until memory runs out (jbeder/yaml-cpp#1040); parse_study() stops as soon as a document
// starts where the previous one did.
//
// It refuses, at the event that crosses the line: nesting deeper than max_depth; more than
// max_nodes nodes, or max_expanded_bytes bytes of strings, with every alias expanded (each
// alias counts the whole node it names, so a "billion laughs" document, or a list of
// aliases to one long string, is refused after a few hundred events); an alias inside the node
// it names (a node that contains itself: walking it would never end); and a string that is
// not UTF-8 after unescaping ("\ud800").
class Guard : public YAML::EventHandler {
 public:
  Guard(const Parser& parser, const SpecLimits& limits) : parser_(parser), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark& m) override {
    starts.push_back(m);
    frames_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { leaf(m, anchor, 0); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    for (const Frame& f : frames_)
      if (f.anchor == anchor && anchor != YAML::NullAnchor)
        parser_.fail_at(m,
                        "invalid YAML: an alias refers to a node that contains it (a "
                        "recursive alias); a study file must be a tree");
    const auto it = sizes_.find(anchor);
    const Size size = it == sizes_.end() ? Size{1, 1, 0} : it->second;
    count(m, size);
    depth(m, static_cast<int64_t>(frames_.size()) + size.depth);
    add_to_parent(size);
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    if (const size_t bad = find_invalid_utf8(value); bad != std::string::npos)
      parser_.fail_at(m,
                      "invalid UTF-8 in a string (an escaped surrogate such as \\ud800?) at "
                      "character " +
                          std::to_string(bad + 1));
    leaf(m, anchor, static_cast<int64_t>(value.size()));
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(m, anchor);
  }
  void OnMapEnd() override { close(); }

  std::vector<YAML::Mark> starts;

 private:
  // Of a node with its aliases expanded.
  struct Size {
    int64_t nodes = 0;
    int64_t depth = 0;  // levels, itself included
    int64_t bytes = 0;  // of its scalars
  };
  struct Frame {
    YAML::anchor_t anchor;
    Size size;
  };

  // Adds a node (an alias: the whole node it names) to the document's totals; both stop
  // growing past their limits, so sums never overflow.
  void count(const YAML::Mark& m, const Size& size) {
    total_nodes_ = std::min(total_nodes_ + size.nodes, limits_.max_nodes + 1);
    if (total_nodes_ > limits_.max_nodes)
      parser_.fail_at(m, "the document has more than " + std::to_string(limits_.max_nodes) +
                             " nodes with its aliases expanded (SpecLimits::max_nodes)");
    total_bytes_ = std::min(total_bytes_ + size.bytes, limits_.max_expanded_bytes + 1);
    if (total_bytes_ > limits_.max_expanded_bytes)
      parser_.fail_at(m, "the document's strings come to more than " +
                             std::to_string(limits_.max_expanded_bytes) +
                             " bytes with its aliases expanded (SpecLimits::max_expanded_bytes)");
  }
  void depth(const YAML::Mark& m, int64_t levels) {
    if (levels > limits_.max_depth)
      parser_.fail_at(m, "nesting deeper than " + std::to_string(limits_.max_depth) +
                             " levels (SpecLimits::max_depth)");
  }
  void add_to_parent(const Size& child) {
    if (frames_.empty()) return;
    Size& parent = frames_.back().size;
    parent.nodes = std::min(parent.nodes + child.nodes, limits_.max_nodes + 1);
    parent.depth = std::max(parent.depth, child.depth + 1);
    parent.bytes = std::min(parent.bytes + child.bytes, limits_.max_expanded_bytes + 1);
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t anchor, int64_t bytes) {
    const Size size{1, 1, bytes};
    count(m, size);
    if (anchor != YAML::NullAnchor) sizes_[anchor] = size;
    add_to_parent(size);
  }
  void open(const YAML::Mark& m, YAML::anchor_t anchor) {
    depth(m, static_cast<int64_t>(frames_.size()) + 1);
    count(m, {1, 1, 0});
    frames_.push_back({anchor, {1, 1, 0}});
  }
  void close() {
    if (frames_.empty()) return;
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f.anchor != YAML::NullAnchor) sizes_[f.anchor] = f.size;
    add_to_parent(f.size);
  }

  const Parser& parser_;
  const SpecLimits& limits_;
  std::vector<Frame> frames_;
  std::map<YAML::anchor_t, Size> sizes_;
  int64_t total_nodes_ = 0;
  int64_t total_bytes_ = 0;
};

// Flow collections ([ and {) nest without indentation, and yaml-cpp's scanner queues every
// token of one (a potential key until it closes) before its parser sees the first: 4 MB of
// '[' cost 1 GB, and a flat list of 2 million entries 0.5 GB, before any limit of Guard can
// act. This pass over the raw text bounds both first, at the cost of one read: the nesting
// by limits.max_depth, and the tokens inside flow collections (each '[', '{', ',', ':' and
// word) by 4 x limits.max_nodes: a node takes up to four (a key, ':', a value, ','), so
// only a document near the node limit comes near it (or one with long plain text inside
// brackets, each word counted).
//
// It never counts less than yaml-cpp will see: '[' and '{' count at the start of a token and
// anywhere inside a flow collection; the text it skips is a comment, or a quoted scalar that
// starts a token and closes on the same line. A quote that does not close on its line is
// taken as a token of its own and what follows it as the next, because a quote yaml-cpp
// reads as text (in a block scalar, in a plain scalar's next line) could otherwise hide every
// bracket up to the next quote. So it may count brackets of a string (a multi-line quoted
// one, a block scalar), which no study needs.
void check_flow_collections(const Parser& parser, const std::string& text,
                            const SpecLimits& limits) {
  const auto fail = [&](size_t offset, const std::string& message) {
    const TextPosition at = position_of(text, offset);
    YAML::Mark m;
    m.pos = static_cast<int>(std::min<size_t>(offset, INT32_MAX));
    m.line = static_cast<int>(std::min<int64_t>(at.line - 1, INT32_MAX));
    m.column = static_cast<int>(std::min<int64_t>(at.column - 1, INT32_MAX));
    parser.fail_at(m, message);
  };
  int depth = 0;
  int64_t tokens = 0;  // inside flow collections
  const int64_t max_tokens = limits.max_nodes > std::numeric_limits<int64_t>::max() / 4
                                 ? std::numeric_limits<int64_t>::max()
                                 : 4 * limits.max_nodes;
  bool token_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      token_start = true;
      continue;
    }
    if (depth > 0 && (token_start || c == ',' || c == ':') && ++tokens > max_tokens)
      fail(i, "more than " + std::to_string(max_tokens) +
                  " tokens inside [...] and {...} (4 x SpecLimits::max_nodes)");
    if (c == '#' && token_start) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if ((c == '"' || c == '\'') && token_start) {
      const size_t end = closing_quote(text, i);
      if (end != std::string::npos) i = end;
      token_start = end == std::string::npos;  // an unclosed quote: text, then a new token
    } else if ((c == '[' || c == '{') && (token_start || depth > 0)) {
      if (++depth > limits.max_depth)
        fail(i, "nesting deeper than " + std::to_string(limits.max_depth) +
                    " levels (SpecLimits::max_depth)");
      token_start = true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
      token_start = false;
    } else {
      token_start = depth > 0 && (c == ',' || c == ':');
    }
  }
}

// Throws, naming FILE:LINE:COL, unless `text` is all UTF-8.
void check_utf8(const Parser& parser, const std::string& text) {
  const size_t bad = find_invalid_utf8(text);
  if (bad == std::string::npos) return;
  const TextPosition at = position_of(text, bad);
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
  YAML::Mark m;
  m.pos = static_cast<int>(bad);
  m.line = static_cast<int>(at.line - 1);
  m.column = static_cast<int>(at.column - 1);
  parser.fail_at(m,
                 std::string("the text is not UTF-8 (byte ") + byte + "); save the file as UTF-8");
}

// The one document of `text`, read under the limits (Guard) before it is built.
YAML::Node load_document(const Parser& parser, const std::string& text, const SpecLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    parser.fail_at(YAML::Mark(), "the study file has " + std::to_string(text.size()) +
                                     " bytes; at most " + std::to_string(limits.max_file_bytes) +
                                     " (SpecLimits::max_file_bytes)");
  check_utf8(parser, text);
  check_flow_collections(parser, text, limits);
  YAML::Node root;
  try {
    std::istringstream in(text);
    YAML::Parser stream(in);
    Guard guard(parser, limits);
    while (guard.starts.size() < 100 && stream.HandleNextDocument(guard)) {
      const size_t n = guard.starts.size();
      if (n >= 2 && guard.starts[n - 1].pos == guard.starts[n - 2].pos) {
        const auto pos = static_cast<size_t>(std::max(guard.starts[n - 1].pos, 0));
        parser.fail_at(guard.starts[n - 1],
                       "invalid YAML: unexpected '" + excerpt(text.substr(pos, 1)) + "'");
      }
    }
    if (guard.starts.size() > 1)
      parser.fail_at(guard.starts[1],
                     "expected one YAML document, got " + std::to_string(guard.starts.size()));
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    parser.fail_at(e.mark, "invalid YAML: " + e.msg);
  }
  if (root.IsNull())
    parser.fail_at(YAML::Mark(),
                   "empty study file; expected a mapping with name, datasets and parameters");
  return root;
}

// Checks JSON text before anything is built from it: nesting (counted over the raw text,
// so that a 100,000-deep body costs one pass), then the syntax, numbers out of range and
// strings that are not UTF-8, then the entries (check_flow_collections), each reported at
// its LINE:COL. Returns the parsed document.
json check_json(const Parser& parser, const std::string& text, const SpecLimits& limits) {
  auto mark_at = [&](size_t offset) {
    const TextPosition at = position_of(text, offset);
    YAML::Mark m;
    m.pos = static_cast<int>(std::min<size_t>(offset, INT32_MAX));
    m.line = static_cast<int>(std::min<int64_t>(at.line - 1, INT32_MAX));
    m.column = static_cast<int>(std::min<int64_t>(at.column - 1, INT32_MAX));
    return m;
  };
  if (const size_t deep = find_json_nesting_over(text, limits.max_depth); deep != std::string::npos)
    parser.fail_at(mark_at(deep), "invalid JSON: nesting deeper than " +
                                      std::to_string(limits.max_depth) +
                                      " levels (SpecLimits::max_depth)");
  // A SAX pass reports where the first error is (the DOM parser's out_of_range for 1e400
  // carries no position).
  struct Sax : nlohmann::json_sax<json> {
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& e) override {
      error_at = position;
      message = e.what();
      return false;
    }
    size_t error_at = std::string::npos;
    std::string message;
  } sax;
  json::sax_parse(text, &sax);
  if (sax.error_at != std::string::npos) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..."
    std::string why = sax.message;
    if (const size_t colon = why.find("]"); colon != std::string::npos) why = why.substr(colon + 2);
    if (why.rfind("parse error at line ", 0) == 0) why = why.substr(why.find(':') + 2);
    parser.fail_at(mark_at(sax.error_at > 0 ? sax.error_at - 1 : 0),
                   "invalid JSON: " + excerpt(why, 200));
  }
  // The document costs as much per entry as yaml-cpp's tokens: counted first, as they are.
  check_flow_collections(parser, text, limits);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    parser.fail_at(YAML::Mark(), std::string("invalid JSON: ") + e.what());
  }
}

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return std::numeric_limits<int64_t>::max();
  return a * b;
}

// Refuses a split of dataset `i` with fewer rows than the limits' minimums, naming the
// counts, at validation.fraction when the file gives it (else at the dataset's entry).
void check_split_sizes(const StudySpec& spec, size_t i, const data::Dataset& d,
                       const data::SplitIndices& split, const SpecLimits& limits) {
  const auto train = static_cast<int64_t>(split.train.size());
  const auto validation = static_cast<int64_t>(split.validation.size());
  if (train >= limits.min_train_rows && validation >= limits.min_validation_rows) return;
  const bool stratified = spec.stratify && d.task == data::Task::kClassification && d.classes > 0;
  std::string message =
      "datasets[" + std::to_string(i) + "] (" + excerpt(spec.datasets[i]) +
      "): " + std::to_string(d.rows) + " rows split into " + std::to_string(train) +
      " for training and " + std::to_string(validation) + " for validation (validation.fraction " +
      json(spec.validation_fraction).dump() + (stratified ? " of each class" : "") +
      "); at least " + std::to_string(limits.min_train_rows) + " and " +
      std::to_string(limits.min_validation_rows) +
      " needed (SpecLimits::min_train_rows, min_validation_rows)";
  const std::string& place =
      !spec.validation_place.empty()
          ? spec.validation_place
          : (i < spec.dataset_places.size() ? spec.dataset_places[i] : std::string());
  if (!place.empty()) message += " (" + place + ")";
  throw invalid_argument(message);
}

}  // namespace

json StudySpec::to_json() const {
  json params = json::object();
  json order = json::array();
  for (const auto& [n, d] : parameters) {
    params[n] = d.to_json();
    order.push_back(n);
  }
  json j = {{"name", name},
            {"datasets", datasets},
            {"validation", {{"fraction", validation_fraction}, {"stratify", stratify}}},
            {"metric", {{"name", metric}, {"goal", maximize ? "maximize" : "minimize"}}},
            {"method", method},
            {"seeds", seeds},
            {"parameters", params},
            {"parameter_order", order},
            {"early_stopping", {{"patience", patience}}}};
  json budget = json::object();
  if (budget_trials > 0) budget["trials"] = budget_trials;
  if (budget_hours > 0) budget["hours"] = budget_hours;
  if (!budget.empty()) j["budget"] = budget;
  if (keep_top > 0) j["keep_weights"] = {{"top", keep_top}};
  if (early_terminate.type == "asha")
    j["early_terminate"] = {
        {"type", "asha"}, {"min_epochs", early_terminate.min_epochs}, {"eta", early_terminate.eta}};
  else if (early_terminate.type == "median")
    j["early_terminate"] = {{"type", "median"}, {"warmup_epochs", early_terminate.warmup_epochs}};
  return j;
}

StudySpec StudySpec::from_json(const json& j) {
  std::string text;
  try {
    text = j.dump();
  } catch (const json::exception& e) {  // type_error.316: a string that is not UTF-8
    throw invalid_argument(std::string("<json>: ") + e.what());
  }
  return parse_study(text, "<json>", SpecLimits::stored());
}

SpecLimits SpecLimits::stored() {
  SpecLimits l;
  l.max_file_bytes = size_t{64} << 20;
  l.max_trials = std::numeric_limits<int64_t>::max();
  l.max_datasets = l.max_seeds = l.max_values = std::numeric_limits<int64_t>::max();
  l.max_epochs = l.max_batch_size = l.max_eta = std::numeric_limits<int>::max();
  l.max_rate = l.max_hours = std::numeric_limits<double>::max();
  l.max_expanded_bytes = static_cast<int64_t>(l.max_file_bytes);
  return l;
}

int64_t StudySpec::total_trials() const {
  if (method != "grid") return budget_trials;
  const int64_t per = static_cast<int64_t>(datasets.size() * seeds.size());
  const int64_t all = saturating_mul(search_space().grid_size(), per);
  return budget_trials > 0 ? std::min(all, budget_trials) : all;
}

int64_t StudySpec::configurations() const {
  if (method == "grid") return search_space().grid_size();
  const auto per = static_cast<int64_t>(datasets.size() * seeds.size());
  return (total_trials() + per - 1) / per;
}

StudySpec parse_study(const std::string& yaml_text, const std::string& file_name,
                      const SpecLimits& limits) {
  Parser parser(file_name, limits);
  const YAML::Node root = load_document(parser, yaml_text, limits);
  StudySpec spec = parser.study(Item{root, "", root.Mark()});
  spec.source = yaml_text;
  return spec;
}

StudySpec parse_study_text(const std::string& text, const std::string& source,
                           const SpecLimits& limits) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw invalid_argument(source + ": empty body: send a study file (YAML or JSON)");
  if (text[first] != '{') return parse_study(text, source, limits);
  Parser parser(source, limits);
  if (text.size() > limits.max_file_bytes)
    parser.fail_at(YAML::Mark(), "the study has " + std::to_string(text.size()) +
                                     " bytes; at most " + std::to_string(limits.max_file_bytes) +
                                     " (SpecLimits::max_file_bytes)");
  check_utf8(parser, text);
  const json j = check_json(parser, text, limits);
  // Valid JSON is read as YAML (a superset), so that messages point into the text as sent.
  // The few JSON texts yaml-cpp reads differently or not at all (tabs in odd places,
  // escaped surrogate pairs) are read from their reformatted dump instead.
  YAML::Node root;
  try {
    root = load_document(parser, text, limits);
  } catch (const Error&) {
    return parse_study(j.dump(), source + " (reformatted JSON)", limits);
  }
  StudySpec spec = parser.study(Item{root, "", root.Mark()});
  spec.source = text;
  return spec;
}

StudySpec load_study_file(const std::string& path, const SpecLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw not_found("cannot read study file '" + path + "': no such file");
  const auto size = std::filesystem::file_size(path, ec);
  const auto too_large = [&] {
    return invalid_argument("study file '" + path + "': more than " +
                            std::to_string(limits.max_file_bytes) +
                            " bytes (SpecLimits::max_file_bytes) (" + path + ":1:1)");
  };
  if (!ec && size > limits.max_file_bytes) throw too_large();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read study file '" + path + "': " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > limits.max_file_bytes) throw too_large();
  }
  if (in.bad()) throw not_found("cannot read study file '" + path + "': read error");
  return parse_study(text, path, limits);
}

void check_network_size(const StudySpec& spec, int inputs, int outputs,
                        const nn::NetworkLimits& limits, const std::string& context) {
  int64_t rows = 0;
  for (const nn::Architecture& a : largest_networks(spec, inputs, outputs, &rows)) {
    try {
      nn::check_network_size(a, 1, rows, limits);
    } catch (const Error& e) {
      std::string why = e.what();
      if (why.rfind("network: ", 0) == 0) why = why.substr(9);
      throw invalid_argument(context + ": the search space allows a network too large: " + why);
    }
  }
}

void check_datasets(const StudySpec& spec, const SpecLimits& limits,
                    const data::DataLimits& data_limits) {
  for (size_t i = 0; i < spec.datasets.size(); ++i) {
    const std::string& name = spec.datasets[i];
    const std::string where = "datasets[" + std::to_string(i) + "]";
    data::Dataset d;
    data::SplitIndices split;
    try {
      d = data::load(name, data_limits);
      // As every trial does (the seed moves rows, not counts): a dataset too odd to split
      // fails here.
      split = data::split_indices(d, spec.validation_fraction, 0, spec.stratify);
    } catch (const Error& e) {
      const std::string message = where + ": " + e.what();
      switch (e.code()) {
        case ErrorCode::kNotFound:
          throw not_found(message);
        case ErrorCode::kFailedPrecondition:
          throw failed_precondition(message);
        default:
          throw invalid_argument(message);
      }
    }
    check_split_sizes(spec, i, d, split, limits);
    const int outputs = d.task == data::Task::kClassification ? d.classes : d.targets;
    check_network_size(
        spec, d.features, outputs, limits.network,
        where + " (" + excerpt(name) + ", " + std::to_string(d.features) + " features)");
  }
}

}  // namespace layerlab::study
