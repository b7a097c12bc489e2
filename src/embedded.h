// Files compiled into the binary at build time (datasets, dashboard assets), so an
// installed layerlab needs no source tree. See cmake/EmbedFiles.cmake: each embedding
// target defines one list function below.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace layerlab::embedded {

struct File {
  std::string_view name;  // path relative to the repository root, e.g. "data/builtin/iris.csv"
  std::string_view bytes;
};

const std::vector<File>& data_files();  // data/builtin/*.csv (layerlab_data)
const std::vector<File>& web_files();   // the dashboard: web/... (layerlab_server)
const std::vector<File>& api_files();   // docs/openapi.json (layerlab_server)

// The file with this name in `files`, if embedded.
inline std::optional<std::string_view> find(const std::vector<File>& files, std::string_view name) {
  for (const File& f : files)
    if (f.name == name) return f.bytes;
  return std::nullopt;
}

}  // namespace layerlab::embedded
