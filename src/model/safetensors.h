// safetensors files of F32 tensors (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to {"dtype",
// "shape", "data_offsets": [begin, end]} (offsets into the data that follows) plus an
// optional "__metadata__" object of strings, then the raw little-endian data.
//
// Reading validates everything before trusting it, and each error names the file and the
// problem: a header length beyond the file or beyond kMaxHeaderBytes, a header that is not a
// JSON object, a dtype other than F32, a shape that is not a list of non-negative integers,
// offsets outside the data, a shape whose size x 4 is not the span of its offsets,
// overlapping tensors, bytes of the data no tensor owns, non-string metadata.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::model {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major; product(shape) values
};

struct SafeTensors {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;

  // The tensor `name` with this shape, or InvalidArgument naming `source`, the tensor and
  // what was expected.
  const Tensor& get(const std::string& name, const std::vector<int64_t>& shape,
                    const std::string& source) const;
};

inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // as the reference implementation
inline constexpr int kMaxJsonDepth = 64;  // nesting of the header and of metadata entries

// JSON text from a model file (its header, a metadata entry), checked as outside input:
// nesting over kMaxJsonDepth, syntax errors and numbers out of range (1e400) are
// InvalidArgument starting with `what`.
nlohmann::json parse_model_json(std::string_view text, const std::string& what);

// The file's bytes. Throws InvalidArgument for a tensor whose data is not product(shape)
// values, or a name that is empty or "__metadata__".
std::string encode_safetensors(const SafeTensors& st);
// Parses bytes; `source` (the path) starts every error message.
SafeTensors decode_safetensors(std::string_view bytes, const std::string& source);

void write_safetensors(const std::string& path, const SafeTensors& st);
SafeTensors read_safetensors(const std::string& path);  // NotFound for a missing file

}  // namespace layerlab::model
