#include "data/file_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "common/error.h"

namespace layerlab::data {

std::string read_data_file(const std::string& path, const std::string& source,
                           const DataLimits& limits) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw not_found(source + ": file not found: " + path);
  if (fs::is_directory(status))
    throw invalid_argument(source + ": " + path + " is a directory, not a file");
  // Devices (/dev/zero, /dev/urandom), pipes and sockets never end or may block forever.
  if (!fs::is_regular_file(status))
    throw invalid_argument(source + ": " + path +
                           " is not a regular file (a device, pipe or socket); give a data file");
  const auto too_large = [&] {
    return invalid_argument(fmt::format(
        "{}: {} has more than {} bytes (the limit on a data file, DataLimits::max_file_bytes)",
        source, path, limits.max_file_bytes));
  };
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > limits.max_file_bytes) throw too_large();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_argument(source + ": cannot open " + path + ": " + std::strerror(errno));
  // Read at most one byte past the limit: the file may have grown since it was measured.
  std::string bytes;
  bytes.reserve(ec ? 0 : static_cast<size_t>(size));
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    bytes.append(buf, static_cast<size_t>(in.gcount()));
    if (bytes.size() > limits.max_file_bytes) throw too_large();
  }
  if (in.bad()) throw invalid_argument(source + ": error reading " + path);
  return is_gzip(bytes) ? gunzip(bytes, source, limits.max_decompressed_bytes) : bytes;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view bytes, const std::string& source, uint64_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw internal_error(source + ": cannot initialise zlib");
  std::string out;
  const auto cap = static_cast<size_t>(std::min<uint64_t>(max_bytes, SIZE_MAX / 4));
  // One byte more than the limit, so that reaching it means "too large".
  out.resize(std::min(std::max<size_t>(bytes.size() * 4, 1 << 16), cap + 1));
  size_t in_pos = 0;
  int rc = Z_OK;
  auto fail = [&](const std::string& why) {
    inflateEnd(&zs);
    throw invalid_argument(source + ": corrupt gzip data: " + why);
  };
  constexpr size_t kChunk = std::numeric_limits<uInt>::max();
  auto too_large = [&] {
    inflateEnd(&zs);
    throw invalid_argument(
        fmt::format("{}: the gzip data decompresses to more than {} bytes (the limit, "
                    "DataLimits::max_decompressed_bytes)",
                    source, max_bytes));
  };
  while (true) {
    if (zs.total_out > cap) too_large();
    if (zs.total_out == out.size()) out.resize(std::min(out.size() * 2, cap + 1));
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
  if (zs.total_out > cap) too_large();
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

}  // namespace layerlab::data
