// Helpers for the study module's tests: fixture paths, parsing, error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "study/sampler.h"
#include "study/spec.h"

namespace layerlab::study::testing {

inline std::string source_path(std::string_view relative) {
  return std::string(LAYERLAB_SOURCE_DIR) + "/" + std::string(relative);
}

inline std::string fixture(std::string_view name) {
  return source_path("tests/data/studies/" + std::string(name));
}

inline StudySpec parse(const std::string& yaml) {
  return parse_study(yaml, "study.yaml");
}

// The message parse_study() throws for `yaml` (checking it is InvalidArgument), or "no error".
inline std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "no error";
}

// Suggestions 0..n-1, asked in order with no history.
inline std::vector<Suggestion> first_suggestions(Sampler& sampler, int64_t n) {
  std::vector<Suggestion> out;
  for (int64_t i = 0; i < n; ++i) {
    auto s = sampler.suggest(i, {}, {});
    EXPECT_TRUE(s.has_value()) << "no suggestion " << i;
    if (!s) break;
    EXPECT_EQ(s->number, i);
    out.push_back(std::move(*s));
  }
  return out;
}

// A trial's identity: dataset, validation settings and every resolved parameter, seed included.
inline std::string identity(const TrialSpec& t) {
  return t.to_json().dump();
}

}  // namespace layerlab::study::testing
