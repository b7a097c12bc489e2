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
#include <sstream>

#include "common/error.h"
#include "common/strings.h"
#include "data/dataset.h"
#include "nn/params.h"
#include "study/sampler.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

constexpr double kBelowOne = 0x1.fffffffffffffp-1;
constexpr double kMaxDomainPoints = 1e12;  // int_uniform, q_uniform (counts fit int64 easily)

const std::vector<std::string> kTopKeys = {
    "name",  "datasets",   "validation",      "metric",          "method",        "budget",
    "seeds", "parameters", "parameter_order", "early_terminate", "early_stopping"};
const std::vector<std::string> kMetrics = {"val_accuracy", "val_loss", "val_rmse", "train_loss"};
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
    std::from_chars(t.data(), t.data() + t.size(), v);
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

// What a node holds, for "got ..." in messages: strings quoted, numbers as written.
std::string got(const YAML::Node& n) {
  if (n.IsSequence()) return n.size() == 0 ? "[]" : "a list";
  if (n.IsMap()) return n.size() == 0 ? "{}" : "a mapping";
  if (!n.IsScalar()) return "null";
  const json j = scalar_json(n);
  return j.is_string() ? j.dump() : j.is_null() ? "null" : n.Scalar();
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

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  StudySpec study(const Item& top);

  [[noreturn]] void fail_at(const YAML::Mark& m, const std::string& message) const {
    const int line = std::max(m.line, 0) + 1, column = std::max(m.column, 0) + 1;
    throw invalid_argument(one_line(message + " (" + file_ + ":" + std::to_string(line) + ":" +
                                    std::to_string(column) + ")"));
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
  double number(const Item& item) const;
  bool boolean(const Item& item) const;

  void datasets(StudySpec& s, const Item& item) const;
  void parameters(StudySpec& s, const Fields& top, bool patience_given);
  Domain domain(const std::string& name, const Item& item) const;
  void distribution(Domain& d, const std::string& name, const Item& param, const Fields& f) const;
  json parameter_value(const std::string& name, const Item& item) const;
  void check_method(const StudySpec& s, const Item& top, const Fields& f) const;

  std::string file_;
  std::vector<Item> param_items_;  // parallel to StudySpec::parameters
};

Fields Parser::mapping(const Item& item, const std::string& what) const {
  if (!item.node.IsMap()) expected(item, what);
  Fields out;
  for (auto it = item.node.begin(); it != item.node.end(); ++it) {
    const YAML::Node k = it->first;
    const std::string prefix = item.path.empty() ? "" : item.path + ".";
    if (!k.IsScalar())
      fail_at(k.Mark(),
              (item.path.empty() ? "" : item.path + ": ") + "expected a key name, got " + got(k));
    const std::string path = prefix + k.Scalar();
    for (const Field& prev : out)
      if (prev.key == k.Scalar())
        fail_at(k.Mark(), path + ": key given twice (first on line " +
                              std::to_string(prev.key_mark.line + 1) + ")");
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
  std::string msg = "unknown " + kind + " '" + v + "'";
  const std::string hint = closest_match(v, choices);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  fail(item, msg + "; expected one of " + join(choices, ", "));
}

int64_t Parser::integer(const Item& item, int64_t min, const std::string& what) const {
  const json j = item.node.IsScalar() ? scalar_json(item.node) : json();
  if (!j.is_number_integer() || j.get<int64_t>() < min) expected(item, what);
  return j.get<int64_t>();
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
    }
    if (const Item* st = find(vf, "stratify")) s.stratify = boolean(*st);
  }
  if (const Item* m = find(f, "metric")) {
    const Fields mf = settings(*m, {"name", "goal"});
    if (const Item* n = find(mf, "name")) s.metric = choice(*n, "metric", kMetrics);
    s.maximize = s.metric == "val_accuracy";
    if (const Item* g = find(mf, "goal"))
      s.maximize = choice(*g, "goal", {"maximize", "minimize"}) == "maximize";
  }
  if (const Item* m = find(f, "method")) {
    s.method = text(*m, "one of " + join(samplers().names(), ", "));
    if (!samplers().contains(s.method)) fail(*m, samplers().unknown_message(s.method));
  }
  if (const Item* b = find(f, "budget")) {
    const Fields bf = settings(*b, {"trials", "hours"});
    if (const Item* t = find(bf, "trials")) {
      s.budget_trials = integer(*t, 1, "a positive integer");
      if (s.budget_trials > kMaxStudyTrials)
        expected(*t, "at most " + std::to_string(kMaxStudyTrials) + " trials");
    }
    if (const Item* h = find(bf, "hours")) {
      s.budget_hours = number(*h);
      if (s.budget_hours <= 0) expected(*h, "a positive number of hours");
    }
  }
  if (const Item* sd = find(f, "seeds")) {
    s.seeds.clear();
    for (const Item& e : sequence(*sd, "a non-empty list of non-negative integers")) {
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
    s.patience = static_cast<int>(integer(*p, 0, "a non-negative integer"));
  }
  if (const Item* et = find(f, "early_terminate")) {
    const Fields ef = settings(*et, {"type", "min_epochs", "eta", "warmup_epochs"});
    const Item* type = find(ef, "type");
    if (!type) fail(*et, "missing required key 'type': asha or median");
    s.early_terminate.type = choice(*type, "early_terminate type", {"asha", "median"});
    const std::vector<std::string> keys =
        s.early_terminate.type == "asha" ? std::vector<std::string>{"type", "min_epochs", "eta"}
                                         : std::vector<std::string>{"type", "warmup_epochs"};
    for (const Field& e : ef)
      if (!contains(keys, e.key))
        fail_at(e.key_mark, e.value.path + ": not a setting of type " + s.early_terminate.type +
                                "; expected one of " + join(keys, ", "));
    auto small = [&](const char* key, int64_t min, int& out) {
      const Item* i = find(ef, key);
      if (!i) return;
      const std::string what =
          min == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(min);
      const int64_t v = integer(*i, min, what);
      if (v > 1'000'000) expected(*i, what + " up to 1000000");
      out = static_cast<int>(v);
    };
    small("min_epochs", 1, s.early_terminate.min_epochs);
    small("eta", 2, s.early_terminate.eta);
    small("warmup_epochs", 0, s.early_terminate.warmup_epochs);
  }
  parameters(s, f, stopping != nullptr);
  check_method(s, top, f);
  return s;
}

void Parser::datasets(StudySpec& s, const Item& item) const {
  const std::vector<std::string> known = data::known_datasets();
  for (const Item& e :
       sequence(item, "a non-empty list of dataset names or specs, e.g. [iris, wine]")) {
    const std::string d = text(e, "a dataset name or spec");
    if (std::find(s.datasets.begin(), s.datasets.end(), d) != s.datasets.end())
      fail(e, "dataset '" + d + "' is listed twice");
    s.datasets.push_back(d);
    // Only plain names are checked here: files are opened by the trials, not by the parser.
    const std::string head = d.substr(0, d.find('?'));
    if (head.find_first_of(":/") != std::string::npos || ends_with(head, ".csv") ||
        ends_with(head, ".csv.gz") || ends_with(head, ".libsvm") || ends_with(head, ".svm") ||
        contains(known, head))
      continue;
    std::string msg = "unknown dataset '" + head + "'";
    const std::string hint = closest_match(head, known);
    if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
    fail(e, msg + "; known: " + join(known, ", ") +
                " (csv:PATH, libsvm:PATH, idx:IMAGES,LABELS for files)");
  }
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
    if (it == s.parameters.end()) fail(e, "'" + n + "' is not in parameters");
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
  try {
    return canonical_value(name, node_json(item.node));
  } catch (const Error& e) {
    fail_at(item.mark, std::string("parameters.") + e.what());
  }
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
  for (const Item& e : sequence(*values, "a non-empty list of values")) {
    json v = parameter_value(name, e);
    if (std::find(d.values.begin(), d.values.end(), v) != d.values.end())
      fail(e, v.dump() + " is listed twice");
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
    if (d.size() > kMaxGridDomainSize)
      fail(param_items_[i],
           "a grid over " + std::to_string(d.size()) + " values is too large (at most " +
               std::to_string(kMaxGridDomainSize) + "); use values: or method random");
  }
  const int64_t per = static_cast<int64_t>(s.datasets.size() * s.seeds.size());
  const int64_t configs = s.search_space().grid_size();
  if (configs > kMaxStudyTrials / per && s.budget_trials == 0) {
    const Item* p = find(f, "parameters");
    fail(p ? *p : at, "the grid has " + std::to_string(configs) + " configurations x " +
                          std::to_string(per) + " (datasets x seeds); at most " +
                          std::to_string(kMaxStudyTrials) + " trials (or set budget.trials)");
  }
}

// Where each document of a YAML stream starts, without building it. YAML::LoadAll is not
// used: on some malformed input (a leading ',') yaml-cpp 0.7 keeps reporting documents
// without advancing, and LoadAll loops, allocating, until memory runs out
// (jbeder/yaml-cpp#1040). parse_study() stops as soon as a document starts where the
// previous one did.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return std::numeric_limits<int64_t>::max();
  return a * b;
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
  if (early_terminate.type == "asha")
    j["early_terminate"] = {
        {"type", "asha"}, {"min_epochs", early_terminate.min_epochs}, {"eta", early_terminate.eta}};
  else if (early_terminate.type == "median")
    j["early_terminate"] = {{"type", "median"}, {"warmup_epochs", early_terminate.warmup_epochs}};
  return j;
}

StudySpec StudySpec::from_json(const json& j) {
  return parse_study(j.dump(), "<json>");
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

StudySpec parse_study(const std::string& yaml_text, const std::string& file_name) {
  Parser parser(file_name);
  if (yaml_text.size() > kMaxStudyFileBytes)
    parser.fail_at(YAML::Mark(), "the study file has " + std::to_string(yaml_text.size()) +
                                     " bytes; at most " + std::to_string(kMaxStudyFileBytes));
  YAML::Node root;
  try {
    std::istringstream in(yaml_text);
    YAML::Parser stream(in);
    DocumentStarts docs;
    while (docs.starts.size() < 100 && stream.HandleNextDocument(docs)) {
      const size_t n = docs.starts.size();
      if (n >= 2 && docs.starts[n - 1].pos == docs.starts[n - 2].pos) {
        const auto pos = static_cast<size_t>(std::max(docs.starts[n - 1].pos, 0));
        parser.fail_at(docs.starts[n - 1],
                       "invalid YAML: unexpected '" + yaml_text.substr(pos, 1) + "'");
      }
    }
    if (docs.starts.size() > 1)
      parser.fail_at(docs.starts[1],
                     "expected one YAML document, got " + std::to_string(docs.starts.size()));
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    parser.fail_at(e.mark, "invalid YAML: " + e.msg);
  }
  if (root.IsNull())
    parser.fail_at(YAML::Mark(),
                   "empty study file; expected a mapping with name, datasets and parameters");
  StudySpec spec = parser.study(Item{root, "", root.Mark()});
  spec.source = yaml_text;
  return spec;
}

StudySpec load_study_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw not_found("cannot read study file '" + path + "': no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read study file '" + path + "': " + std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw not_found("cannot read study file '" + path + "': read error");
  return parse_study(text, path);
}

}  // namespace layerlab::study
