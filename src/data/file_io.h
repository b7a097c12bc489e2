// Reading data files: whole-file reads with errors that name the path, and transparent gzip
// decompression (detected by the magic bytes 1f 8b, not by the file name).
#pragma once

#include <string>
#include <string_view>

namespace layerlab::data {

// The bytes of `path`, decompressed if they are gzip data. Errors are prefixed with `source`
// (e.g. "csv:data/x.csv"): not_found for a missing file, invalid_argument for a directory
// or corrupt gzip data.
std::string read_data_file(const std::string& path, const std::string& source);

bool is_gzip(std::string_view bytes);

// Decompresses gzip data (one or more concatenated members).
std::string gunzip(std::string_view bytes, const std::string& source);

}  // namespace layerlab::data
