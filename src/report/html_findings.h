// The findings (findings_json) as the sections of the HTML report: text and tables, and
// the containers of the findings' plots (drawn by assets/report.js).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace layerlab::report {

std::string answers_section(const nlohmann::json& findings);
std::string trials_section(const nlohmann::json& findings);
std::string depth_section(const nlohmann::json& findings);
std::string time_section(const nlohmann::json& findings);
std::string importance_section(const nlohmann::json& findings);
std::string best_section(const nlohmann::json& findings);
std::string pareto_section(const nlohmann::json& findings);
std::string rules_section(const nlohmann::json& findings);

// A plot container for report.js: <div class="plot" id="plot-NAME" data-figure="NAME">.
std::string plot_div(const std::string& figure);

}  // namespace layerlab::report
