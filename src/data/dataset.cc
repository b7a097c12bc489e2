// The dataset registry and load(): parse the spec, find its loader, check the query keys.
#include "data/dataset.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "data/labels.h"
#include "data/loaders.h"

namespace layerlab::data {
namespace {

const LoaderRegistry& registry() {
  static const LoaderRegistry r = [] {
    LoaderRegistry reg("dataset");
    register_builtin(reg);
    register_synthetic(reg);
    register_csv(reg);
    register_libsvm(reg);
    register_idx(reg);
    return reg;
  }();
  return r;
}

}  // namespace

Dataset load(std::string_view spec_text, const DataLimits& limits) {
  Spec spec = Spec::parse(spec_text);
  const Loader& loader = registry().get(spec.name());
  spec.check_keys(loader.keys);
  Dataset d = loader.load(spec, limits);
  check_shape(d.rows, d.features, limits, spec.text());
  d.name = spec.text();
  return d;
}

Task task_of(std::string_view spec_text) {
  const Spec spec = Spec::parse(spec_text);
  const Loader& loader = registry().get(spec.name());
  const bool has_task =
      std::find(loader.keys.begin(), loader.keys.end(), "task") != loader.keys.end();
  return has_task ? label_options(spec).task : Task::kClassification;
}

const char* task_name(Task task) {
  return task == Task::kRegression ? "regression" : "classification";
}

std::vector<std::string> known_datasets() {
  return registry().names();
}

std::vector<DatasetInfo> describe_datasets() {
  std::vector<DatasetInfo> out;
  for (const std::string& name : registry().names())
    out.push_back({name, registry().get(name).description});
  return out;
}

LabelOptions label_options(const Spec& spec) {
  LabelOptions o;
  std::string task = spec.get_choice("task", "classification", {"classification", "regression"});
  o.task = task == "regression" ? Task::kRegression : Task::kClassification;
  o.declared_classes = static_cast<int>(spec.get_int("classes", 0, 1, ClassLabels::kMaxClasses));
  if (spec.has("classes") && o.task == Task::kRegression)
    spec.fail("classes= applies to task=classification only");
  return o;
}

void check_shape(int64_t rows, int64_t features, const DataLimits& limits,
                 const std::string& source) {
  if (rows > limits.max_rows)
    throw invalid_argument(fmt::format("{}: {} rows; at most {} (DataLimits::max_rows)", source,
                                       rows, limits.max_rows));
  if (features > limits.max_features)
    throw invalid_argument(fmt::format("{}: {} features; at most {} (DataLimits::max_features)",
                                       source, features, limits.max_features));
  if (rows > 0 && features > limits.max_values / rows)
    throw invalid_argument(
        fmt::format("{}: {} rows x {} features; at most {} values (DataLimits::max_values)", source,
                    rows, features, limits.max_values));
}

void default_feature_names(Dataset& d) {
  if (!d.feature_names.empty()) return;
  for (int i = 0; i < d.features; ++i) d.feature_names.push_back(fmt::format("f{}", i));
}

}  // namespace layerlab::data
