// Reading data files: whole-file reads with errors that name the path, and transparent gzip
// decompression (detected by the magic bytes 1f 8b, not by the file name), both bounded by
// DataLimits (dataset.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "data/dataset.h"

namespace layerlab::data {

// The bytes of `path`, decompressed if they are gzip data. Errors are prefixed with `source`
// (e.g. "csv:data/x.csv"): not_found for a missing file, invalid_argument for a directory,
// anything else that is not a regular file (/dev/zero, a pipe), a file of more than
// limits.max_file_bytes, corrupt gzip data or gzip data that inflates beyond
// limits.max_decompressed_bytes.
std::string read_data_file(const std::string& path, const std::string& source,
                           const DataLimits& limits = {});

bool is_gzip(std::string_view bytes);

// Decompresses gzip data (one or more concatenated members); invalid_argument when the
// result would exceed `max_bytes`.
std::string gunzip(std::string_view bytes, const std::string& source,
                   uint64_t max_bytes = DataLimits{}.max_decompressed_bytes);

}  // namespace layerlab::data
