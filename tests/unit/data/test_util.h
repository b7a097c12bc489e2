// Helpers for the data module's tests: fixture paths, temp dirs, error assertions.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/error.h"
#include "data/dataset.h"
#include "support/temp_and_errors.h"

namespace layerlab::data::testing {

inline std::string fixture(std::string_view name) {
  return std::string(LAYERLAB_SOURCE_DIR) + "/tests/data/" + std::string(name);
}

using ::layerlab::testing::TempDir;
using ::layerlab::testing::throws_error;

#define EXPECT_LOAD_ERROR(spec, code, part) \
  EXPECT_TRUE(                              \
      ::layerlab::data::testing::throws_error([&] { ::layerlab::data::load(spec); }, code, part))

// The class counts of a classification dataset.
inline std::vector<int64_t> class_counts(const Dataset& d) {
  std::vector<int64_t> n(static_cast<size_t>(d.classes), 0);
  for (float y : d.y) ++n[static_cast<size_t>(y)];
  return n;
}

}  // namespace layerlab::data::testing
