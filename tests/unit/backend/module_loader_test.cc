// The backend module loader (module_loader.h) against fake modules (fake_module.cc) and files
// that are no module, in every build: each way of failing names what is missing.
#include "backend/module_loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/error.h"
#include "support/temp_and_errors.h"

namespace layerlab::backend {
namespace {

using layerlab::testing::expect_contains;

namespace fs = std::filesystem;

// A search of its own, so that the tests never depend on LAYERLAB_CUDA_MODULE.
const ModuleSearch kSearch{"cuda", "test backend module", "liblayerlab_test_absent_module.so",
                           "LAYERLAB_TEST_BACKEND_MODULE"};

// Sets (or, with nullopt, unsets) an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The error load_module throws for the module at `path` (through the environment variable).
Error load_error(const std::string& path) {
  ScopedEnv env(kSearch.env_var.c_str(), path);
  try {
    load_module(kSearch);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "load_module(" << path << ") did not throw";
  return internal_error("none");
}

TEST(ModuleLoader, LooksBesideTheExecutableThenInstallDirThenLibraryPath) {
  ScopedEnv env(kSearch.env_var.c_str(), std::nullopt);
  const auto c = module_candidates(kSearch);
  ASSERT_EQ(c.size(), 3u);
  const fs::path dir = fs::read_symlink("/proc/self/exe").parent_path();
  EXPECT_EQ(c[0], (dir / kSearch.file).string());
  expect_contains(c[1], "/layerlab/" + kSearch.file);
  EXPECT_EQ(c[2], kSearch.file);
}

TEST(ModuleLoader, TheEnvironmentVariableAloneWhenSet) {
  {
    ScopedEnv env(kSearch.env_var.c_str(), "/somewhere/module.so");
    EXPECT_EQ(module_candidates(kSearch), std::vector<std::string>{"/somewhere/module.so"});
  }
  ScopedEnv empty(kSearch.env_var.c_str(), "");  // empty: as if unset
  EXPECT_EQ(module_candidates(kSearch).size(), 3u);
}

TEST(ModuleLoader, NotFoundAnywhereListsThePlacesTried) {
  ScopedEnv env(kSearch.env_var.c_str(), std::nullopt);
  Error error = internal_error("none");
  try {
    load_module(kSearch);
    ADD_FAILURE() << "loaded a module that does not exist";
  } catch (const Error& e) {
    error = e;
  }
  EXPECT_EQ(error.code(), ErrorCode::kFailedPrecondition);
  const std::string what = error.what();
  expect_contains(what, "test backend module " + kSearch.file + " was not found");
  for (const std::string& path : module_candidates(kSearch))
    if (path != kSearch.file) expect_contains(what, path);
  expect_contains(what, "the library search path");
  expect_contains(what, "set " + kSearch.env_var + " to its path");
}

TEST(ModuleLoader, MissingFileNamedByTheVariable) {
  const Error e = load_error("/nonexistent/dir/liblayerlab_cuda.so");
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(),
                  kSearch.env_var + "=/nonexistent/dir/liblayerlab_cuda.so: no such file");
}

TEST(ModuleLoader, AFileThatIsNoSharedObject) {
  const fs::path path = fs::temp_directory_path() / "layerlab-not-a-module.so";
  std::ofstream(path) << "this is text, not ELF\n";
  const Error e = load_error(path.string());
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), "cannot load the test backend module " + path.string() + ": ");
  expect_contains(e.what(), path.string() + ": ");  // dlopen's own words, e.g. invalid ELF header
  fs::remove(path);
}

TEST(ModuleLoader, ASharedObjectWithoutTheEntryPoint) {
  const Error e = load_error(FAKE_MODULE_no_entry);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(),
                  std::string(FAKE_MODULE_no_entry) + " is not a layerlab backend module");
  expect_contains(e.what(), kModuleEntry);
}

TEST(ModuleLoader, ALibraryTheModuleNeedsIsMissing) {
  const Error e = load_error(FAKE_MODULE_needs_absent);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), std::string("cannot load the test backend module ") +
                                FAKE_MODULE_needs_absent + ": ");
  expect_contains(e.what(), "liblayerlab_fake_absent_dep.so: cannot open shared object file");
  expect_contains(e.what(), "a library it needs is missing");
}

TEST(ModuleLoader, AModuleOfAnotherAbi) {
  const Error e = load_error(FAKE_MODULE_stale_abi);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(),
                  std::string(FAKE_MODULE_stale_abi) +
                      " was built for another layerlab (module ABI 999, this layerlab's " +
                      std::to_string(kModuleAbi) + ")");
  expect_contains(e.what(), "rebuild it");
}

TEST(ModuleLoader, AStaleModuleFromOtherBackendSources) {
  const Error e = load_error(FAKE_MODULE_stale_interface);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), std::string(FAKE_MODULE_stale_interface) + " is stale");
  expect_contains(e.what(), "backend interface 0000000000000000");
  expect_contains(e.what(), "rebuild it");
}

TEST(ModuleLoader, AModuleForAnotherDevice) {
  const Error e = load_error(FAKE_MODULE_other_device);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), "is a 'tpu' backend module, not a 'cuda' one");
}

TEST(ModuleLoader, LoadsAGoodModuleOnceAndItsErrorsCrossTheBoundary) {
  ScopedEnv env(kSearch.env_var.c_str(), FAKE_MODULE_good);
  const BackendModule& m = load_module(kSearch);
  EXPECT_EQ(&load_module(kSearch), &m);  // the same module, not a second copy
  EXPECT_EQ(m.abi, kModuleAbi);
  EXPECT_STREQ(m.device, "cuda");
  std::string why;
  EXPECT_EQ(m.device_count(&why), 0);
  EXPECT_EQ(why, "fake module: no device here");
  try {
    m.make(3, 1);
    ADD_FAILURE() << "make() did not throw";
  } catch (const Error& e) {  // a layerlab::Error thrown inside the module
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    expect_contains(e.what(), "device 'cuda:3': fake module: no device here");
  }
}

}  // namespace
}  // namespace layerlab::backend
