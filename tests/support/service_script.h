// Running scripts/services/*.sh from tests: a shell command's exit status and output, and a
// watchdog that stops a service once the test process is gone. Used by postgres_service.h
// and pgbouncer_service.h.
#pragma once

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

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

}  // namespace layerlab::testing
