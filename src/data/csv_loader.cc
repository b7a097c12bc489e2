// csv:PATH and the built-ins' CSV text: a header row, then one row per line.
#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"
#include "data/file_io.h"
#include "data/labels.h"
#include "data/loaders.h"
#include "data/text.h"

namespace layerlab::data {
namespace {

std::string column_label(const std::vector<std::string>& header, size_t i) {
  return header[i].empty() ? fmt::format("column {}", i + 1)
                           : fmt::format("column '{}'", excerpt(header[i]));
}

// The header for a message: an excerpt, never the whole first line of the file.
std::string columns_excerpt(const std::vector<std::string>& header) {
  return excerpt(join(header, ", "));
}

// Indices of the label columns in `header`.
std::vector<size_t> find_label_columns(const std::vector<std::string>& header,
                                       const CsvOptions& options, const std::string& source) {
  if (options.label_columns.empty()) return {header.size() - 1};
  std::vector<size_t> out;
  for (const std::string& name : options.label_columns) {
    auto n = std::count(header.begin(), header.end(), name);
    if (n == 0)
      throw invalid_argument(source + ": no label column '" + excerpt(name) +
                             "'; columns: " + columns_excerpt(header));
    if (n > 1)
      throw invalid_argument(fmt::format("{}: label column '{}' appears {} times in the header",
                                         source, excerpt(name), n));
    size_t i = static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    if (std::find(out.begin(), out.end(), i) != out.end())
      throw invalid_argument(source + ": label column '" + excerpt(name) + "' listed twice");
    out.push_back(i);
  }
  return out;
}

}  // namespace

Dataset parse_csv(std::string_view text, const std::string& source, const CsvOptions& options,
                  const DataLimits& limits) {
  LineReader lines(text);
  std::string_view line;
  if (!lines.next_nonblank(line)) throw invalid_argument(source + ": empty file (no header row)");
  std::vector<std::string> header;
  split_csv_line(line, {source, lines.line_number()}, header);
  if (static_cast<int64_t>(header.size()) > limits.max_features + 1)
    fail_at({source, lines.line_number()},
            fmt::format("{} columns; at most {} (DataLimits::max_features) plus a label",
                        header.size(), limits.max_features));
  std::vector<size_t> label_cols = find_label_columns(header, options, source);
  if (options.labels.task == Task::kClassification && label_cols.size() > 1)
    throw invalid_argument(
        fmt::format("{}: classification takes one label column, got {} (use task=regression)",
                    source, label_cols.size()));
  std::vector<bool> is_label(header.size(), false);
  for (size_t c : label_cols) is_label[c] = true;

  Dataset d;
  d.task = options.labels.task;
  d.targets = static_cast<int>(label_cols.size());
  for (size_t c = 0; c < header.size(); ++c)
    if (!is_label[c]) d.feature_names.push_back(header[c]);
  d.features = static_cast<int>(d.feature_names.size());
  if (d.features == 0)
    throw invalid_argument(source + ": no feature columns (the only column is the label)");

  std::vector<std::string> what(header.size());  // for messages
  for (size_t c = 0; c < header.size(); ++c)
    what[c] = (is_label[c] ? "label " : "") + column_label(header, c);

  ClassLabels labels(options.labels.declared_classes, /*numbers_only=*/false);
  std::vector<std::string> cells;
  while (lines.next_nonblank(line)) {
    Location where{source, lines.line_number()};
    if (d.rows >= limits.max_rows)
      fail_at(where, fmt::format("more than {} data rows (DataLimits::max_rows)", limits.max_rows));
    if (static_cast<int64_t>(d.x.size()) + d.features > limits.max_values)
      fail_at(where,
              fmt::format("more than {} values (DataLimits::max_values)", limits.max_values));
    split_csv_line(line, where, cells);
    if (cells.size() != header.size())
      fail_at(where, fmt::format("expected {} columns, got {}", header.size(), cells.size()));
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!is_label[c]) d.x.push_back(parse_float_cell(cells[c], where, what[c]));
    }
    for (size_t c : label_cols) {
      if (d.task == Task::kRegression)
        d.y.push_back(parse_float_cell(cells[c], where, what[c]));
      else
        labels.add(cells[c], where);
    }
    ++d.rows;
  }
  if (d.rows == 0) throw invalid_argument(source + ": no data rows after the header");
  if (d.task == Task::kClassification) labels.finish_into(d, source);
  return d;
}

void register_csv(LoaderRegistry& r) {
  r.add("csv:",
        {"csv:PATH - CSV file with a header row; ?label=NAME (default: last column; several "
         "comma-separated for regression), ?task=classification|regression, ?classes=N",
         {"label", "task", "classes"},
         [](const Spec& spec, const DataLimits& limits) {
           if (spec.target().empty()) spec.fail("expected csv:PATH");
           CsvOptions options;
           options.labels = label_options(spec);
           std::string label = spec.get_string("label", "");
           if (!label.empty()) {
             std::vector<std::string> parts;
             split_csv_line(label, {spec.text()}, parts);
             for (auto& p : parts) {
               if (p.empty()) spec.fail("label: empty column name in '" + excerpt(label) + "'");
               options.label_columns.push_back(p);
             }
           }
           std::string source = "csv:" + spec.target();
           return parse_csv(read_data_file(spec.target(), source, limits), source, options, limits);
         }});
}

}  // namespace layerlab::data
