// The report as one self-contained HTML file that works offline: the findings as text and
// tables, the numbers behind every plot as JSON, and Plotly, the dashboard's figure
// builders (web/js/format.js, plots.js) and assets/report.js inlined. No external URL.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace layerlab::report {

// findings: findings_json(); page: study_page_data().
std::string render_html(const nlohmann::json& findings, const nlohmann::json& page);

// JSON for an inline <script type="application/json">: every '<' escaped as \u003c, so no
// string in it can close the script element. Invalid UTF-8 is replaced.
std::string script_json(const nlohmann::json& j);

// A script body for an inline <script>; internal_error naming `name` when it contains
// "</script" (which would end the element early).
std::string_view script_text(std::string_view js, std::string_view name);

}  // namespace layerlab::report
