// IDX datasets (plain or gzipped): two files read by data::load("idx:IMAGES,LABELS[?classes=N]").
// Layout: byte 0: classes (0: no classes= query, else classes=byte0); bytes 1..4: the
// images file's length n, little-endian (clipped to what is left); then n bytes of images,
// and the rest is the labels file. tests/fuzz/make_seeds.py writes seeds in this layout.
#include <algorithm>

#include "data/dataset.h"
#include "tests/fuzz/data_support.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace layerlab::fuzz;
  if (size < 5 || size > kMaxInputBytes) return 0;
  const int classes = data[0];
  const size_t n = std::min<size_t>(
      size - 5, data[1] | (size_t{data[2]} << 8) | (size_t{data[3]} << 16) | (size_t{data[4]} << 24));
  const std::string_view rest = as_text(data + 5, size - 5);
  const ScratchDir& dir = ScratchDir::get();
  const std::string images = dir.write("images.idx", rest.substr(0, n));
  const std::string labels = dir.write("labels.idx", rest.substr(n));
  std::string spec = "idx:" + images + "," + labels;
  if (classes > 0) spec += "?classes=" + std::to_string(classes);
  expect_ok_or_error([&] { use_dataset(layerlab::data::load(spec)); });
  return 0;
}
