// Running scripts/services/*.sh from tests: a shell command's exit status and output, and a
// watchdog that stops a service once the test process is gone. Used by postgres_service.h
// and pgbouncer_service.h.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "support/free_port.h"

#ifndef LAYERLAB_SOURCE_DIR
#error "LAYERLAB_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace layerlab::testing {

// `cmd` through the shell: its exit status and stdout, trailing newlines dropped.
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed: " + cmd};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = ::pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return {status, out};
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The port of a service a script started earlier, found by its files (no script run): the
// number in port_file, while the process whose pid starts pid_file is alive; 0 otherwise.
inline int running_service_port(const std::filesystem::path& port_file,
                                const std::filesystem::path& pid_file) {
  std::ifstream port_in(port_file), pid_in(pid_file);
  int port = 0;
  pid_t pid = 0;
  if (!(port_in >> port) || !(pid_in >> pid) || port <= 0 || pid <= 0 || ::kill(pid, 0) != 0)
    return 0;
  return port;
}

// The path of scripts/services/`name` (e.g. "postgres.sh").
inline std::string service_script(const std::string& name) {
  return std::string(LAYERLAB_SOURCE_DIR "/scripts/services/") + name;
}

// A process that runs `script stop dir` and removes dir once this process is gone, however
// it ends (a crash or a sanitizer abort skips destructors).
inline void watch_service(const std::string& script, const std::string& dir) {
  std::string cmd = "nohup bash -c 'while kill -0 " + std::to_string(::getpid()) +
                    " 2>/dev/null; do sleep 1; done; bash \"" + service_script(script) +
                    "\" stop \"" + dir + "\"; rm -rf \"" + dir + "\"' </dev/null >/dev/null 2>&1 &";
  if (std::system(cmd.c_str()) != 0) {
    // Without the watchdog only a crash leaves the service behind; go on.
  }
}

// A fresh, empty directory for a service: TMPDIR/layerlab_<prefix>_<pid>_<n>.
inline std::string fresh_service_dir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       ("layerlab_" + prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
          .string();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return dir;
}

// Starts `script` (scripts/services/) in `dir` by start(port) on a free port, trying again
// on another when it fails (a free port may be taken meanwhile), then watches it
// (watch_service). Returns the port; throws std::runtime_error naming `what`, with the
// script's output and `hint` (how to install it), when it cannot start.
inline int start_on_a_free_port(const std::string& script, const std::string& dir,
                                const std::function<std::pair<int, std::string>(int)>& start,
                                const std::string& what, const std::string& hint) {
  std::string last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = free_port();
    auto [rc, out] = start(port);
    if (rc == 0) {
      watch_service(script, dir);
      return port;
    }
    last = out;
    if (out.find("install-deps") != std::string::npos) break;
  }
  throw std::runtime_error("cannot start " + what + " in " + dir + ":\n" + last + "\n(" + hint +
                           ")");
}

}  // namespace layerlab::testing
