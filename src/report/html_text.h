// Small pieces of HTML for the report: escaping, numbers as tables show them, tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::report {

// Text for an HTML element or a quoted attribute.
std::string escape_html(std::string_view text);

// A JSON number with `digits` significant digits ("0.9532", "1.2e-05"), an integer as is,
// a string or bool as its text, null as an em dash. Escaped.
std::string cell(const nlohmann::json& v, int digits = 4);
// A share as a percentage with one decimal ("45.2%"); null as an em dash.
std::string percent(const nlohmann::json& v);
// A value with its standard error: "0.953 ± 0.004".
std::string with_se(const nlohmann::json& mean, const nlohmann::json& se);

// A table; cells are HTML (escape text first). Columns named with a leading '#' are
// numeric (right-aligned); the '#' is not shown.
class HtmlTable {
 public:
  explicit HtmlTable(std::vector<std::string> columns, std::string id = "");
  HtmlTable& row(std::vector<std::string> cells, std::string_view css_class = "");
  std::string str() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> columns_;
  std::vector<bool> numeric_;
  std::string id_;
  std::string rows_;
};

}  // namespace layerlab::report
