// CSV datasets: the bytes as a file read by data::load("csv:PATH?QUERY"), the way a study's
// dataset spec reaches the loader (gzip detection included). Layout: FILE [ '\0' QUERY ]
// (data_support.h), e.g. "...\0task=regression&classes=3".
#include "data/dataset.h"
#include "tests/fuzz/data_support.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace layerlab::fuzz;
  if (size > kMaxInputBytes) return 0;
  auto [file, query] = split_query(as_text(data, size));
  const std::string path = ScratchDir::get().write("input.csv", file);
  const std::string spec = spec_text("csv:", path, query);
  expect_ok_or_error([&] { use_dataset(layerlab::data::load(spec)); });
  return 0;
}
