// Helpers shared by the unit tests: a temporary directory that cleans up after itself, an
// assertion that a call throws layerlab::Error with a given code and message part, and one
// that a text contains a part.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/error.h"

namespace layerlab::testing {

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("layerlab_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(std::string_view name) const { return (path_ / name).string(); }
  std::string dir() const { return path_.string(); }
  std::string write(std::string_view name, std::string_view bytes) const {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::filesystem::path path_;
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

// Whether `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// EXPECT that `text` contains `part`, showing both when it does not.
inline void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

}  // namespace layerlab::testing
