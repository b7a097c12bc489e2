#include "data/file_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "common/error.h"

namespace layerlab::data {

std::string read_data_file(const std::string& path, const std::string& source) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw not_found(source + ": file not found: " + path);
  if (std::filesystem::is_directory(status))
    throw invalid_argument(source + ": " + path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_argument(source + ": cannot open " + path + ": " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw invalid_argument(source + ": error reading " + path);
  return is_gzip(bytes) ? gunzip(bytes, source) : bytes;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view bytes, const std::string& source) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw internal_error(source + ": cannot initialise zlib");
  std::string out;
  out.resize(std::max<size_t>(bytes.size() * 4, 1 << 16));
  size_t in_pos = 0;
  int rc = Z_OK;
  auto fail = [&](const std::string& why) {
    inflateEnd(&zs);
    throw invalid_argument(source + ": corrupt gzip data: " + why);
  };
  constexpr size_t kChunk = std::numeric_limits<uInt>::max();
  while (true) {
    if (zs.total_out == out.size()) out.resize(out.size() * 2);
    size_t done = zs.total_out;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
    zs.avail_in = static_cast<uInt>(std::min(bytes.size() - in_pos, kChunk));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + done);
    zs.avail_out = static_cast<uInt>(std::min(out.size() - done, kChunk));
    size_t avail_before = zs.avail_in;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += avail_before - zs.avail_in;
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes).
      if (in_pos < bytes.size() && is_gzip(bytes.substr(in_pos))) {
        uLong total = zs.total_out;
        if (inflateReset(&zs) != Z_OK) fail("cannot reset zlib");
        zs.total_out = total;
        continue;
      }
      if (in_pos < bytes.size()) fail("unexpected bytes after the end of the gzip stream");
      break;
    }
    if (rc == Z_BUF_ERROR && in_pos == bytes.size() && zs.avail_out > 0)
      fail("the data ends early (truncated file?)");
    if (rc != Z_OK && rc != Z_BUF_ERROR) fail(zs.msg ? zs.msg : fmt::format("zlib error {}", rc));
  }
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

}  // namespace layerlab::data
