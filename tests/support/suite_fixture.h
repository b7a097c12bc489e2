// A fixture that costs seconds (a study run to its end by the real `layerlab run`) built once
// per ctest run instead of once per test process: CTest runs every TEST as its own process,
// so a suite's SetUpTestSuite would otherwise run once per test.
//
// built_once(key, build): the first process to ask for `key` builds it, under an exclusive
// lock, into LAYERLAB_TEST_SUITE_CACHE/key (set by CTest's fixture, layerlab_suite_cache in
// tests/CMakeLists.txt, which empties the directory before the first test and removes it
// after the last); later processes wait for the lock and find it built. A build that failed
// (a test assertion inside `build`) is not kept: the next process tries again and fails on
// its own. Run directly (no variable), a binary builds into a fresh directory of its own.
// Tests then work on private_copy(), so none sees another's writes.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "integration/run_command.h"

namespace layerlab::testing {

inline std::filesystem::path built_once(
    const std::string& key, const std::function<void(const std::filesystem::path&)>& build) {
  const char* root = std::getenv("LAYERLAB_TEST_SUITE_CACHE");
  if (root == nullptr || *root == '\0') {
    const std::filesystem::path dir = fresh_dir(key);
    build(dir);
    return dir;
  }
  const std::filesystem::path dir = std::filesystem::path(root) / key;
  std::filesystem::create_directories(root);
  const std::string lock_path = (std::filesystem::path(root) / (key + ".lock")).string();
  const int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0) << "cannot open " << lock_path;
  if (fd < 0) return dir;
  EXPECT_EQ(::flock(fd, LOCK_EX), 0) << "cannot lock " << lock_path;
  const std::filesystem::path ready = dir / ".built";
  if (!std::filesystem::exists(ready)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    build(dir);
    if (!::testing::Test::HasFailure()) std::ofstream(ready) << "built\n";
  }
  ::close(fd);  // releases the lock
  return dir;
}

// A copy of `from` (files and directories, not the lock marker) in a fresh directory for
// this process: `name` as fresh_dir() takes it.
inline std::filesystem::path private_copy(const std::filesystem::path& from,
                                          const std::string& name) {
  const std::filesystem::path to = fresh_dir(name);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  std::filesystem::remove(to / ".built");
  return to;
}

}  // namespace layerlab::testing
