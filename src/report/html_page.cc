#include "report/html_page.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "report/html_findings.h"
#include "report/html_text.h"
#include "report/js_bundle.h"

namespace layerlab::report {
namespace {

using nlohmann::json;

constexpr const char* kPlotly = "web/node_modules/plotly.js/dist/plotly.min.js";

std::string header(const json& f) {
  const json& s = f["study"];
  std::string datasets;
  for (const json& d : s["datasets"]) datasets += (datasets.empty() ? "" : ", ") + cell(d);
  return "<header>\n<h1>layerlab report: " + cell(s["name"]) + "</h1>\n<p class=\"muted\">" +
         cell(s["metric"]) + " (" + cell(s["goal"]) + ") \u00b7 " + cell(s["method"]) + " \u00b7 " +
         datasets + " \u00b7 study " + cell(s["status"]) + " \u00b7 " +
         cell(f["trials"]["analysed"]) + " of " + cell(f["trials"]["stored"]) +
         " stored trials analysed</p>\n</header>\n";
}

std::string study_plots_section(const json& page) {
  const std::string x = escape_html(page["x"].get<std::string>());
  auto plot = [](const std::string& title, const std::string& figure) {
    return "<h3>" + title + "</h3>\n" + plot_div(figure);
  };
  return "<section class=\"card\" id=\"study-plots\">\n<h2>The study page's plots</h2>\n"
         "<p class=\"muted\">As the dashboard draws them: the analysed trials (pruned ones "
         "left out, as everywhere in this report), mean \u00b1 std at each x.</p>\n" +
         plot("Metric vs " + x, "study-metric") + plot("Training time vs " + x, "study-time") +
         plot("Optimisation history", "study-history") +
         plot("Parameters and value", "study-parcoords") +
         plot("Learning curves of each dataset's best trial", "study-curves") + "</section>\n";
}

}  // namespace

std::string script_json(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string_view script_text(std::string_view js, std::string_view name) {
  std::string lower(js.size(), ' ');
  std::transform(js.begin(), js.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("</script") != std::string::npos)
    throw internal_error(std::string(name) + " contains </script and cannot be inlined");
  return js;
}

std::string render_html(const json& findings, const json& page) {
  const auto& files = embedded::report_files();
  std::string code = "(function () {\n'use strict';\n" + dashboard_plots_script() +
                     "// ---- src/report/assets/report.js\n(function () {\n" +
                     std::string(embedded_file(files, "src/report/assets/report.js")) +
                     "})();\n})();\n";
  std::string out;
  out.reserve(6 << 20);
  out +=
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"layerlab report\">\n<title>layerlab report: " +
      cell(findings["study"]["name"]) + "</title>\n<style>\n" +
      std::string(embedded_file(files, "src/report/assets/report.css")) + "</style>\n";
  out += "<script>\n";
  out += script_text(embedded_file(embedded::web_files(), kPlotly), kPlotly);
  out += "\n</script>\n</head>\n<body>\n<main>\n" + header(findings) + answers_section(findings) +
         depth_section(findings) + time_section(findings) + importance_section(findings) +
         best_section(findings) + pareto_section(findings) + study_plots_section(page) +
         trials_section(findings) + rules_section(findings) + "</main>\n";
  // {"findings":...,"page":...} written part by part: a json object holding both would be
  // a copy of the page's data (tens of MB at 50,000 trials).
  out += "<script type=\"application/json\" id=\"report-data\">{\"findings\":";
  out += script_json(findings);
  out += ",\"page\":";
  out += script_json(page);
  out += "}</script>\n<script>\n";
  out += script_text(code, "the report's figure code");
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace layerlab::report
