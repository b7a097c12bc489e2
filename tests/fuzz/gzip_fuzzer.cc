// The gzip reader: data::gunzip (one or more concatenated members, as data files may be) on
// the bytes, and data::read_data_file on them as a file (magic-byte detection, plain files
// returned as they are). The two must agree.
#include "data/file_io.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace layerlab::fuzz;
  if (size > kMaxInputBytes) return 0;
  const std::string_view bytes = as_text(data, size);
  bool unzipped = false;
  std::string out;
  expect_ok_or_error([&] {
    out = layerlab::data::gunzip(bytes, "fuzz.gz");
    unzipped = true;
  });
  const std::string path = ScratchDir::get().write("input.gz", bytes);
  expect_ok_or_error([&] {
    const std::string read = layerlab::data::read_data_file(path, "fuzz.gz");
    const bool gz = layerlab::data::is_gzip(bytes);
    if (gz && (!unzipped || read != out)) __builtin_trap();
    if (!gz && read != bytes) __builtin_trap();
  });
  return 0;
}
