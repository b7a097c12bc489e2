// libsvm:PATH - `LABEL INDEX:VALUE ...` per line, 1-based ascending indices, sparse.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/error.h"
#include "common/text_safety.h"
#include "data/file_io.h"
#include "data/labels.h"
#include "data/loaders.h"
#include "data/text.h"

namespace layerlab::data {
namespace {

struct Entry {
  int64_t row;
  int64_t index;  // 1-based
  float value;
};

// Splits at spaces and tabs.
void split_tokens(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
}

Dataset parse_libsvm(std::string_view text, const std::string& source, const LabelOptions& opts,
                     int64_t declared_features, const DataLimits& limits) {
  Dataset d;
  d.task = opts.task;
  ClassLabels labels(opts.declared_classes, /*numbers_only=*/true);
  std::vector<Entry> entries;
  int64_t max_index = 0;
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.next(line)) {
    line = line.substr(0, line.find('#'));
    if (is_blank(line)) continue;
    Location where{source, lines.line_number()};
    if (d.rows >= limits.max_rows)
      fail_at(where, fmt::format("more than {} data rows (DataLimits::max_rows)", limits.max_rows));
    split_tokens(line, tokens);
    if (d.task == Task::kRegression)
      d.y.push_back(parse_float_cell(tokens[0], where, "label"));
    else
      labels.add(tokens[0], where);
    int64_t last = 0;
    for (size_t t = 1; t < tokens.size(); ++t) {
      std::string_view tok = tokens[t];
      size_t colon = tok.find(':');
      int64_t index = 0;
      auto [end, ec] = std::from_chars(tok.data(), tok.data() + std::min(colon, tok.size()), index);
      if (colon == std::string_view::npos || colon == 0 || ec != std::errc() ||
          end != tok.data() + colon)
        fail_at(where, "bad token '" + excerpt(tok) + "' (expected INDEX:VALUE)");
      if (index < 1)
        fail_at(where,
                fmt::format("feature index {} in '{}' (indices start at 1)", index, excerpt(tok)));
      if (index <= last)
        fail_at(where,
                fmt::format("feature index {} after {} (indices must be ascending)", index, last));
      if (declared_features > 0 && index > declared_features)
        fail_at(where,
                fmt::format("feature index {} beyond features={}", index, declared_features));
      if (index > limits.max_features)
        fail_at(where, fmt::format("feature index {} is too large (at most {}, "
                                   "DataLimits::max_features)",
                                   index, limits.max_features));
      if (static_cast<int64_t>(entries.size()) >= limits.max_values)
        fail_at(where,
                fmt::format("more than {} values (DataLimits::max_values)", limits.max_values));
      last = index;
      float value =
          parse_float_cell(tok.substr(colon + 1), where, fmt::format("feature {}", index));
      entries.push_back({d.rows, index, value});
      max_index = std::max(max_index, index);
    }
    ++d.rows;
  }
  if (d.rows == 0) throw invalid_argument(source + ": empty file (no data lines)");
  d.features = static_cast<int>(declared_features > 0 ? declared_features : max_index);
  if (d.features == 0) throw invalid_argument(source + ": no features (no INDEX:VALUE tokens)");
  check_shape(d.rows, d.features, limits, source);
  d.x.assign(static_cast<size_t>(d.rows) * static_cast<size_t>(d.features), 0.0f);
  for (const Entry& e : entries)
    d.x[static_cast<size_t>(e.row * d.features + e.index - 1)] = e.value;
  for (int i = 1; i <= d.features; ++i) d.feature_names.push_back(fmt::format("f{}", i));
  if (d.task == Task::kClassification) labels.finish_into(d, source);
  return d;
}

}  // namespace

void register_libsvm(LoaderRegistry& r) {
  r.add("libsvm:", {"libsvm:PATH - LIBSVM/SVMlight sparse file (1-based feature indices); "
                    "?task=classification|regression, ?classes=N, ?features=N",
                    {"task", "classes", "features"},
                    [](const Spec& spec, const DataLimits& limits) {
                      if (spec.target().empty()) spec.fail("expected libsvm:PATH");
                      LabelOptions opts = label_options(spec);
                      int64_t features = spec.get_int("features", 0, 1, limits.max_features);
                      std::string source = "libsvm:" + spec.target();
                      return parse_libsvm(read_data_file(spec.target(), source, limits), source,
                                          opts, features, limits);
                    }});
}

}  // namespace layerlab::data
