#include "report/html_text.h"

#include <fmt/format.h>

namespace layerlab::report {

using nlohmann::json;

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string cell(const json& v, int digits) {
  if (v.is_null()) return "\u2014";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) {
    const double d = v.get<double>();
    if (d == 0) return "0";
    return escape_html(fmt::format("{:.{}g}", d, digits));
  }
  if (v.is_string()) return escape_html(v.get<std::string>());
  return escape_html(v.dump());
}

std::string percent(const json& v) {
  if (!v.is_number()) return "\u2014";
  return fmt::format("{:.1f}%", 100 * v.get<double>());
}

std::string with_se(const json& mean, const json& se) {
  if (se.is_null()) return cell(mean);
  return cell(mean) + " \u00b1 " + cell(se, 2);
}

HtmlTable::HtmlTable(std::vector<std::string> columns, std::string id) : id_(std::move(id)) {
  for (std::string& c : columns) {
    numeric_.push_back(!c.empty() && c.front() == '#');
    columns_.push_back(numeric_.back() ? c.substr(1) : c);
  }
}

HtmlTable& HtmlTable::row(std::vector<std::string> cells, std::string_view css_class) {
  rows_ += css_class.empty() ? "<tr>" : "<tr class=\"" + std::string(css_class) + "\">";
  for (size_t i = 0; i < cells.size(); ++i)
    rows_ +=
        (i < numeric_.size() && numeric_[i] ? "<td class=\"num\">" : "<td>") + cells[i] + "</td>";
  rows_ += "</tr>\n";
  return *this;
}

std::string HtmlTable::str() const {
  std::string out = "<div class=\"table-wrap\"><table";
  if (!id_.empty()) out += " id=\"" + escape_html(id_) + "\"";
  out += "><thead><tr>";
  for (size_t i = 0; i < columns_.size(); ++i)
    out += std::string(numeric_[i] ? "<th class=\"num\">" : "<th>") + columns_[i] + "</th>";
  return out + "</tr></thead><tbody>\n" + rows_ + "</tbody></table></div>\n";
}

}  // namespace layerlab::report
