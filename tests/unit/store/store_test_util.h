// Helpers for the store and queue tests: a temp directory, a store on a fresh SQLite file
// with a manual clock, and error assertions.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "store/store.h"
#include "support/temp_and_errors.h"

namespace layerlab::store::testing {

using ::layerlab::testing::TempDir;
using ::layerlab::testing::throws_error;

// A store on dir/test.db driven by a manual clock; reopen() gives a second connection.
class StoreTest : public ::testing::Test {
 protected:
  std::string url() const { return "sqlite:" + dir_.path("test.db"); }
  std::unique_ptr<Store> reopen() { return open_store(url(), options()); }
  StoreOptions options() {
    StoreOptions o;
    o.clock = &clock_;
    return o;
  }
  // A study with `n` queued trials numbered 0..n-1 on dataset "iris".
  int64_t study_with_trials(const std::string& name, int n) {
    int64_t id = store_->create_study(name, {{"metric", "val_accuracy"}});
    std::vector<NewTrial> trials;
    for (int i = 0; i < n; ++i) trials.push_back({i, "iris", {{"units", 8 * (i + 1)}}});
    store_->add_trials(id, trials);
    return id;
  }

  TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<Store> store_ = reopen();
};

#define EXPECT_STORE_ERROR(stmt, code, part) \
  EXPECT_TRUE(::layerlab::store::testing::throws_error([&] { stmt; }, code, part))

}  // namespace layerlab::store::testing
