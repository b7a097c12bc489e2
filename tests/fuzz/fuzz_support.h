// Shared by the libFuzzer targets (tests/fuzz/*_fuzzer.cc) and by their regression replay
// (replay_main.cc): an input size limit, a per-process scratch directory for loaders that
// read files, and the contract every target checks.
//
// The contract: a parser given hostile bytes either returns or throws layerlab::Error (the
// error the edges turn into a message or an HTTP status). Any other exception (bad_alloc,
// a JSON type_error, std::out_of_range...) escapes the target and libFuzzer reports it as a
// crash, like a sanitizer report or a signal.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/error.h"

extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace layerlab::fuzz {

// Inputs larger than this are skipped (scripts/fuzz.sh also passes -max_len, smaller).
inline constexpr size_t kMaxInputBytes = 1 << 20;

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A directory of this process's own on a tmpfs (/dev/shm when there is one), removed at exit
// and, under a sanitizer, when the process dies of a crash. Loaders that take a path read
// files written here; each input overwrites the same few names, so nothing accumulates.
class ScratchDir {
 public:
  static ScratchDir& get() {
    static ScratchDir dir;
    return dir;
  }
  const std::string& path() const { return path_; }
  // Writes `bytes` to NAME inside the directory and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) std::abort();  // the harness itself failed: a full tmpfs is not a finding
    return file;
  }

 private:
  ScratchDir() {
    std::error_code ec;
    std::string base = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : "";
    if (base.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp && *tmp ? tmp : "/tmp";
    }
    remove_orphans(base);
    std::string templ = base + "/layerlab-fuzz-" + std::to_string(getpid()) + "-XXXXXX";
    if (!mkdtemp(templ.data())) std::abort();
    path_ = templ;
    instance_path() = path_;
    std::atexit(remove_dir);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(remove_dir);
  }
  // libFuzzer ends a run that times out or runs out of memory with _Exit, past atexit and
  // the sanitizer's death callback: directories of processes that are gone are removed by
  // the next run instead.
  static void remove_orphans(const std::string& base) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = entry.path().filename().string();
      const std::string prefix = "layerlab-fuzz-";
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        std::filesystem::remove_all(entry.path(), ec);
    }
  }
  static std::string& instance_path() {
    static std::string p;
    return p;
  }
  static void remove_dir() {
    std::error_code ec;
    if (!instance_path().empty()) std::filesystem::remove_all(instance_path(), ec);
  }
  std::string path_;
};

// Runs `f`; a layerlab::Error is the expected way to reject an input.
template <class F>
void expect_ok_or_error(F&& f) {
  try {
    f();
  } catch (const layerlab::Error&) {
  }
}

}  // namespace layerlab::fuzz
