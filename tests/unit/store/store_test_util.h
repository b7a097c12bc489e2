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

namespace layerlab::store::testing {

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("layerlab_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(std::string_view name) const { return (path_ / name).string(); }
  std::string write(std::string_view name, std::string_view bytes) const {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::filesystem::path path_;
};

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

// Runs f, which must throw layerlab::Error with `code` and a message containing `part`.
template <typename F>
::testing::AssertionResult throws_error(F&& f, ErrorCode code, std::string_view part) {
  try {
    f();
  } catch (const Error& e) {
    std::string msg = e.what();
    if (e.code() != code)
      return ::testing::AssertionFailure() << "code " << error_code_name(e.code()) << ", expected "
                                           << error_code_name(code) << "; message: " << msg;
    if (msg.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << part << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "not a layerlab::Error: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

#define EXPECT_STORE_ERROR(stmt, code, part) \
  EXPECT_TRUE(::layerlab::store::testing::throws_error([&] { stmt; }, code, part))

}  // namespace layerlab::store::testing
