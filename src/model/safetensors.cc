#include "model/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "common/text_safety.h"

namespace layerlab::model {

nlohmann::json parse_model_json(std::string_view text, const std::string& what) {
  if (find_json_nesting_over(text, kMaxJsonDepth) != std::string_view::npos)
    throw invalid_argument(fmt::format("{} is nested deeper than {} levels", what, kMaxJsonDepth));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, 1e400 (out_of_range), ...
    throw invalid_argument(what + " is not valid JSON: " + excerpt(e.what(), 200));
  }
}

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build reads and writes it as is");

namespace {

using nlohmann::json;

// The size of `shape` in values, or -1 when a dimension is negative or it overflows.
int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / 4 / d) return -1;
    n *= d;
  }
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

bool is_count(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

}  // namespace

const Tensor& SafeTensors::get(const std::string& name, const std::vector<int64_t>& shape,
                               const std::string& source) const {
  auto it = tensors.find(name);
  if (it == tensors.end())
    throw invalid_argument(
        fmt::format("{}: no tensor '{}' (expected shape {})", source, name, shape_text(shape)));
  if (it->second.shape != shape)
    throw invalid_argument(fmt::format("{}: tensor '{}' has shape {}, expected {}", source, name,
                                       shape_text(it->second.shape), shape_text(shape)));
  return it->second;
}

std::string encode_safetensors(const SafeTensors& st) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : st.tensors) {
    if (name.empty() || name == "__metadata__")
      throw invalid_argument("safetensors: '" + name + "' cannot name a tensor");
    const int64_t n = element_count(t.shape);
    if (n < 0 || static_cast<uint64_t>(n) != t.data.size())
      throw invalid_argument(fmt::format("safetensors: tensor '{}' has shape {} but {} values",
                                         name, shape_text(t.shape), t.data.size()));
    const uint64_t bytes = t.data.size() * sizeof(float);
    header[name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!st.metadata.empty()) header["__metadata__"] = st.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, sizeof(n));
  out += text;
  for (const auto& [name, t] : st.tensors)
    if (!t.data.empty())
      out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  return out;
}

SafeTensors decode_safetensors(std::string_view bytes, const std::string& source) {
  auto fail = [&](const std::string& what) { return invalid_argument(source + ": " + what); };
  if (bytes.size() < 8)
    throw fail(
        fmt::format("{} bytes, too short for a safetensors file (the header length alone takes 8)",
                    bytes.size()));
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), sizeof(n));
  if (n > kMaxHeaderBytes)
    throw fail(
        fmt::format("header length {} exceeds the limit of {} bytes (is this a safetensors file?)",
                    n, kMaxHeaderBytes));
  if (n > bytes.size() - 8)
    throw fail(
        fmt::format("header length {} runs past the end of the file ({} bytes)", n, bytes.size()));
  const json header = parse_model_json(bytes.substr(8, n), source + ": header");
  if (!header.is_object()) throw fail("header is not a JSON object");
  const std::string_view data = bytes.substr(8 + n);

  SafeTensors st;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) throw fail("__metadata__ is not an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string())
          throw fail(fmt::format("__metadata__ '{}' is not a string: {}", k, excerpt(v.dump())));
        st.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!info.is_object())
      throw fail(what + ": expected an object with dtype, shape and data_offsets");
    if (!info.contains("dtype") || !info["dtype"].is_string()) throw fail(what + ": no dtype");
    const std::string dtype = info["dtype"].get<std::string>();
    if (dtype != "F32")
      throw fail(
          fmt::format("{}: dtype {} is not supported (layerlab reads F32 only)", what, dtype));
    const json shape = info.value("shape", json());
    if (!shape.is_array() || !std::all_of(shape.begin(), shape.end(), is_count))
      throw fail(fmt::format("{}: shape must be a list of non-negative integers, got {}", what,
                             excerpt(shape.dump())));
    const json offsets = info.value("data_offsets", json());
    if (!offsets.is_array() || offsets.size() != 2 || !is_count(offsets[0]) ||
        !is_count(offsets[1]))
      throw fail(
          fmt::format("{}: data_offsets must be [begin, end], got {}", what, offsets.dump()));
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end)
      throw fail(fmt::format("{}: data_offsets [{}, {}] end before they begin", what, begin, end));
    if (end > data.size())
      throw fail(fmt::format(
          "{}: data_offsets [{}, {}] run past the end of the data ({} bytes after the header)",
          what, begin, end, data.size()));
    Tensor t;
    for (const json& d : shape) t.shape.push_back(d.get<int64_t>());
    const int64_t count = element_count(t.shape);
    if (count < 0) throw fail(fmt::format("{}: shape {} is too large", what, shape_text(t.shape)));
    if (static_cast<uint64_t>(count) * sizeof(float) != end - begin)
      throw fail(
          fmt::format("{}: shape {} takes {} bytes as F32, but data_offsets [{}, {}] span {} bytes",
                      what, shape_text(t.shape), static_cast<uint64_t>(count) * sizeof(float),
                      begin, end, end - begin));
    t.data.resize(static_cast<size_t>(count));
    if (end > begin) std::memcpy(t.data.data(), data.data() + begin, end - begin);
    st.tensors.emplace(name, std::move(t));
    spans.push_back({begin, end, name});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const Span* previous = nullptr;
  for (const Span& s : spans) {
    if (s.begin < covered && previous)
      throw fail(fmt::format("tensors '{}' [{}, {}] and '{}' [{}, {}] overlap", previous->name,
                             previous->begin, previous->end, s.name, s.begin, s.end));
    if (s.begin > covered)
      throw fail(fmt::format("bytes [{}, {}) of the data belong to no tensor", covered, s.begin));
    covered = s.end;
    previous = &s;
  }
  if (covered != data.size())
    throw fail(fmt::format("bytes [{}, {}) of the data belong to no tensor", covered, data.size()));
  return st;
}

void write_safetensors(const std::string& path, const SafeTensors& st) {
  const std::string bytes = encode_safetensors(st);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw invalid_argument("cannot write " + path + ": " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      throw invalid_argument("cannot write " + path + ": " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw invalid_argument("cannot write " + path + ": " + ec.message());
  }
}

SafeTensors read_safetensors(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw not_found(path + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw invalid_argument(path + ": is a directory, not a safetensors file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_argument("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return decode_safetensors(ss.str(), path);
}

}  // namespace layerlab::model
