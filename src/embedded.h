// Files compiled into the binary at build time (datasets, dashboard assets), so an
// installed layerlab needs no source tree. See cmake/EmbedFiles.cmake.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace layerlab::embedded {

struct File {
  std::string_view name;  // path relative to the repository root, e.g. "data/builtin/iris.csv"
  std::string_view bytes;
};

// Every embedded file, in the order they were listed at build time.
const std::vector<File>& all_files();

// The file with this name, if embedded.
inline std::optional<std::string_view> find(std::string_view name) {
  for (const File& f : all_files())
    if (f.name == name) return f.bytes;
  return std::nullopt;
}

}  // namespace layerlab::embedded
