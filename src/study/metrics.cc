#include "study/metrics.h"

#include <algorithm>

namespace layerlab::study {

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> all = {
      {"val_accuracy", true, "a score", true, false},
      {"val_rmse", false, "an error", false, true},
      {"val_loss", false, "a loss", true, true},
      {"train_loss", false, "a loss", true, true},
  };
  return all;
}

const Metric* find_metric(std::string_view name) {
  const auto& all = metrics();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Metric& m) { return m.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<std::string> metric_names() {
  std::vector<std::string> out;
  for (const Metric& m : metrics()) out.emplace_back(m.name);
  return out;
}

bool reports(data::Task task, std::string_view metric) {
  const Metric* m = find_metric(metric);
  return m && (task == data::Task::kRegression ? m->regression : m->classification);
}

std::vector<std::string> metrics_of(data::Task task) {
  std::vector<std::string> out;
  for (const Metric& m : metrics())
    if (reports(task, m.name)) out.emplace_back(m.name);
  return out;
}

std::string_view default_metric(data::Task task) {
  return task == data::Task::kRegression ? "val_rmse" : "val_accuracy";
}

}  // namespace layerlab::study
