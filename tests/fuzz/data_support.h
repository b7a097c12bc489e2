// For the data-loader targets: a dataset spec's query carried in the fuzz input, and what a
// trial does with a loaded dataset.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "data/dataset.h"

namespace layerlab::fuzz {

// Input layout of the text loaders: FILE_BYTES [ '\0' QUERY ]. The query is what follows
// the last NUL byte (when there is one and it has no newline), so plain files from
// tests/data are seeds as they are and the file part may still hold NULs.
inline std::pair<std::string_view, std::string_view> split_query(std::string_view input) {
  const size_t nul = input.rfind('\0');
  if (nul == std::string_view::npos) return {input, {}};
  std::string_view query = input.substr(nul + 1);
  if (query.find('\n') != std::string_view::npos || query.size() > 200) return {input, {}};
  return {input.substr(0, nul), query};
}

// A spec KIND:PATH[?QUERY].
inline std::string spec_text(std::string_view kind, const std::string& path,
                             std::string_view query) {
  std::string spec(kind);
  spec.append(path);
  if (!query.empty()) {
    spec.push_back('?');
    spec.append(query);
  }
  return spec;
}

// What a worker does with a loaded dataset before training: split, standardise. Skipped
// past 2^22 values: the work is linear in the size, and a small input that loads into a
// large dataset is the loader's to refuse (a dataset size limit), not a slow unit here.
inline void use_dataset(const data::Dataset& d) {
  if (d.rows <= 0 || static_cast<double>(d.rows) * d.features > (1 << 22)) return;
  data::Split s = data::split(d, 0.25, /*seed=*/1, /*stratify=*/d.task == data::Task::kClassification);
  data::standardize(s);
}

}  // namespace layerlab::fuzz
