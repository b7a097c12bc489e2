// The study metrics: the names a study ranks its trials by, which tasks report each one and
// the direction in which it improves.
//   val_accuracy  classification  maximize  share of validation rows classified right
//   val_rmse      regression      minimize  root mean squared error on the validation rows
//   val_loss      both            minimize  the validation loss
//   train_loss    both            minimize  the training loss
// The loss follows the task (softmax cross-entropy for classes, mean squared error for a
// regression target), so val_loss and train_loss mean another quantity on each task. A study
// that mixes tasks may still rank by them: every ranking is within one dataset (DESIGN.md,
// "Research integrity"), never across datasets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"

namespace layerlab::study {

struct Metric {
  std::string_view name;
  bool maximize;          // its natural goal; a study may not ask for the other
  std::string_view kind;  // "a score", "an error", "a loss": why the goal is what it is
  bool classification;    // reported by classification trials
  bool regression;        // reported by regression trials
};

// Every metric, in the order above.
const std::vector<Metric>& metrics();
// nullptr for a name that is none of them.
const Metric* find_metric(std::string_view name);
std::vector<std::string> metric_names();
// The metrics a trial of `task` reports, in the order above.
std::vector<std::string> metrics_of(data::Task task);
bool reports(data::Task task, std::string_view metric);
// A study's metric when its file names none: val_accuracy for classification, val_rmse for
// regression.
std::string_view default_metric(data::Task task);

}  // namespace layerlab::study
