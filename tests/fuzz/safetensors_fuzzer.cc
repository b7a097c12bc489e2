// safetensors files and the models stored in them: model::decode_safetensors on the bytes;
// an accepted file must encode and decode back to the same tensors, and is then read as a
// model (model::from_safetensors, what `layerlab predict` does with a model file).
//
// Two input layouts: a safetensors file as it is, or, when the input starts with '{',
// HEADER_JSON '\0' DATA, to which the harness prepends the 8-byte header length. The second
// lets mutations of the header (its JSON, the model metadata inside) keep a consistent
// length prefix, which a byte-level mutator would almost never do.
#include <cstring>

#include "model/model.h"
#include "model/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool same(const layerlab::model::SafeTensors& a, const layerlab::model::SafeTensors& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, t] : a.tensors) {
    auto it = b.tensors.find(name);
    if (it == b.tensors.end() || it->second.shape != t.shape ||
        it->second.data.size() != t.data.size())
      return false;
    // Bit patterns, not values: NaNs must survive too.
    if (!t.data.empty() &&
        std::memcmp(t.data.data(), it->second.data.data(), t.data.size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace layerlab::fuzz;
  namespace model = layerlab::model;
  if (size > kMaxInputBytes) return 0;
  std::string file(as_text(data, size));
  if (size > 0 && data[0] == '{') {
    const size_t nul = file.find('\0');
    const uint64_t n = nul == std::string::npos ? size : nul;
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    file = prefix + file.substr(0, n) + (nul == std::string::npos ? "" : file.substr(nul + 1));
  }
  expect_ok_or_error([&] {
    const model::SafeTensors st = model::decode_safetensors(file, "fuzz.safetensors");
    const std::string again = model::encode_safetensors(st);
    if (!same(st, model::decode_safetensors(again, "re-encoded"))) __builtin_trap();
    const model::Model m = model::from_safetensors(st, "fuzz.safetensors");
    m.check();
  });
  return 0;
}
