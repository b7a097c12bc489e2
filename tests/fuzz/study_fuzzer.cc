// Study files: the bytes through both entry points that take outside text:
// study::parse_study (a study file) and, for text starting with '{', study::parse_study_text
// (a request body, JSON). An accepted study must survive what the store and the coordinator
// do with it: its canonical JSON (to_json) must read back through StudySpec::from_json to the
// same canonical JSON, and the sampler must resolve its first, middle and last trials.
// (from_json itself only ever sees stored canonical specs, so it is not fed raw JSON here.)
#include <nlohmann/json.hpp>

#include "study/sampler.h"
#include "study/spec.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using layerlab::study::StudySpec;
using nlohmann::json;

void exercise(const StudySpec& spec) {
  const json canonical = spec.to_json();
  const std::string text = canonical.dump();
  const StudySpec again = StudySpec::from_json(canonical);
  if (again.to_json().dump() != text) {
    // A study whose canonical form does not round-trip would be stored as one study and
    // read back as another.
    __builtin_trap();
  }
  const int64_t total = spec.total_trials();
  (void)spec.configurations();
  if (total <= 0) return;
  auto sampler = layerlab::study::make_sampler(spec);
  for (int64_t n : {int64_t{0}, total / 2, total - 1}) {
    auto s = sampler->suggest(n, {}, {});
    if (s) (void)s->trial.to_json().dump();
  }
  (void)sampler->suggest(total, {}, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > layerlab::fuzz::kMaxInputBytes) return 0;
  const std::string text(layerlab::fuzz::as_text(data, size));
  layerlab::fuzz::expect_ok_or_error([&] { exercise(layerlab::study::parse_study(text, "fuzz.yaml")); });
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    layerlab::fuzz::expect_ok_or_error(
        [&] { exercise(layerlab::study::parse_study_text(text, "<request body>")); });
  }
  return 0;
}
