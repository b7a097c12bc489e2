#include "report/js_bundle.h"

#include "common/error.h"

namespace layerlab::report {

std::string module_as_script(std::string_view source, std::string_view name) {
  std::string out;
  bool in_import = false;
  size_t line_no = 0;
  for (size_t pos = 0; pos < source.size();) {
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view line = source.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (in_import || line.starts_with("import ") || line.starts_with("import{")) {
      // An import statement (possibly over several lines) ends with its ';'.
      in_import = line.find(';') == std::string_view::npos;
      out += '\n';  // keeps line numbers of messages in the browser's console useful
      continue;
    }
    if (line.starts_with("export ")) {
      const std::string_view rest = line.substr(7);
      if (rest.starts_with("default") || rest.starts_with("{") || rest.starts_with("*"))
        throw internal_error(std::string(name) + ":" + std::to_string(line_no) +
                             ": cannot inline this export into a report: " + std::string(line));
      out += rest;
    } else {
      out += line;
    }
    out += '\n';
  }
  if (in_import) throw internal_error(std::string(name) + ": unterminated import statement");
  return out;
}

std::string_view embedded_file(const std::vector<embedded::File>& files, std::string_view name) {
  const auto bytes = embedded::find(files, name);
  if (!bytes) throw internal_error("not embedded in this binary: " + std::string(name));
  return *bytes;
}

std::string dashboard_plots_script() {
  std::string out;
  for (const char* name : {"web/js/format.js", "web/js/plots.js"}) {
    out += "// ---- " + std::string(name) + "\n";
    out += module_as_script(embedded_file(embedded::web_files(), name), name);
  }
  return out;
}

}  // namespace layerlab::report
