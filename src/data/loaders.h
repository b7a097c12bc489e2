// Inside the data module: the dataset registry's entries and the parsers the loaders share.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/registry.h"
#include "data/dataset.h"
#include "data/spec.h"

namespace layerlab::data {

struct Loader {
  std::string description;  // one line, with the parameters it accepts
  // The query keys it accepts. A loader whose datasets may be regression ones takes "task"
  // (task_of reads it without loading); the others load classification datasets only.
  std::vector<std::string> keys;
  std::function<Dataset(const Spec&, const DataLimits&)> load;  // after the keys are checked
};

using LoaderRegistry = Registry<Loader>;

// Each file registers its loaders.
void register_builtin(LoaderRegistry& r);
void register_synthetic(LoaderRegistry& r);
void register_csv(LoaderRegistry& r);     // csv:
void register_libsvm(LoaderRegistry& r);  // libsvm:
void register_idx(LoaderRegistry& r);     // idx:, fashion-mnist

// How to read a label column or field.
struct LabelOptions {
  Task task = Task::kClassification;
  int declared_classes = 0;  // classes=N, 0 when not given
};
// task= and classes= from the spec (keys "task", "classes").
LabelOptions label_options(const Spec& spec);

struct CsvOptions {
  LabelOptions labels;
  std::vector<std::string> label_columns;  // empty: the last column
};
// Parses CSV text; `source` prefixes every error ("csv:PATH", "iris").
Dataset parse_csv(std::string_view text, const std::string& source, const CsvOptions& options,
                  const DataLimits& limits = {});

// Parses IDX image and label files (already decompressed) into a classification dataset.
Dataset parse_idx(std::string_view images, const std::string& images_source,
                  std::string_view labels, const std::string& labels_source, int declared_classes,
                  int64_t max_rows = -1, const DataLimits& limits = {});

// Throws invalid_argument ("SOURCE: ... (the limit is DataLimits::max_rows = N)") when rows,
// features or rows x features exceed `limits`.
void check_shape(int64_t rows, int64_t features, const DataLimits& limits,
                 const std::string& source);

// Names the features f0..f{features-1} when the source has no names.
void default_feature_names(Dataset& d);

}  // namespace layerlab::data
