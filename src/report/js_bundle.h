// The dashboard's ES modules (web/js) as plain script for a page opened from a file:
// browsers load no modules from file://, so a report inlines them into one function scope,
// with their import statements dropped and `export` keywords removed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "embedded.h"

namespace layerlab::embedded {
// src/report/assets: report.js and report.css (layerlab_report).
const std::vector<File>& report_files();
}  // namespace layerlab::embedded

namespace layerlab::report {

// One module's text as script. Throws internal_error naming the file and line for a form it
// does not handle (export default, export { }, export *).
std::string module_as_script(std::string_view source, std::string_view name);

// The bytes of an embedded file; internal_error naming it when it was not embedded.
std::string_view embedded_file(const std::vector<embedded::File>& files, std::string_view name);

// web/js/format.js then web/js/plots.js (the figure builders) as script, from the files the
// server embeds.
std::string dashboard_plots_script();

}  // namespace layerlab::report
