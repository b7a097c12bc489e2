// Keeping file datasets inside the operator's data directory (DESIGN.md, "Hostile input"):
// over HTTP a study names datasets, and a file dataset must not read /etc/shadow.
#pragma once

#include <filesystem>
#include <string>

namespace layerlab::data {

// For a file dataset (csv:PATH, libsvm:PATH, idx:IMAGES,LABELS, or a bare PATH ending in
// .csv, .csv.gz, .libsvm or .svm), resolves each path against `data_dir` (relative paths
// under it; absolute ones as given), canonically, following every symbolic link, and
// returns the spec with the resolved absolute path(s) and its query unchanged, e.g.
//   confine_to_directory("csv:iris/x.csv?label=y", "/srv/data") ==
//   "csv:/srv/data/iris/x.csv?label=y"
// so that whoever loads it reads that file. A path that does not exist yet is resolved as
// far as it exists (the loader then reports it missing).
// Throws kInvalidArgument when a resolved path leaves data_dir ("csv:../../etc/passwd",
// "csv:/etc/shadow", a symlink out), when `data_dir` is empty (file datasets are then off:
// the message says to start `layerlab serve --data-dir DIR`), or when a resolved path holds
// a character the spec syntax reserves ('?', and ',' for idx). Throws kFailedPrecondition
// when data_dir does not exist or is not a directory. Any other dataset (built-ins,
// generators, fashion-mnist) is returned unchanged.
std::string confine_to_directory(const std::string& dataset_spec,
                                 const std::filesystem::path& data_dir);

}  // namespace layerlab::data
