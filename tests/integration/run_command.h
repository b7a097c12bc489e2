// Runs the layerlab binary as a user would and captures what it prints.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace layerlab::testing {

// The scratch directories this test process made, removed when it exits, unless a test
// failed: then they stay for a look and their paths go to stderr. Only the process that
// made them removes them (a forked child that exited normally would otherwise take the
// parent's). CTest runs every test as its own process, so each cleans up after itself.
class ScratchDirs {
 public:
  static void add(const std::filesystem::path& dir) {
    static ScratchDirs dirs;
    dirs.dirs_.push_back(dir);
  }
  ~ScratchDirs() {
    if (::getpid() != owner_) return;
    const bool failed = ::testing::UnitTest::GetInstance()->Failed();
    for (const auto& dir : dirs_) {
      if (failed) {
        std::cerr << "kept for the failed test: " << dir.string() << "\n";
        continue;
      }
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }

 private:
  ScratchDirs() = default;
  const pid_t owner_ = ::getpid();
  std::vector<std::filesystem::path> dirs_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many times `what` occurs in `text` (overlapping ones counted).
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs `LAYERLAB_BINARY args` through the shell (args are trusted test strings).
inline CommandResult run_layerlab(const std::string& args, const std::string& env = "") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("layerlab-cli-" + std::to_string(::getpid()));
  if (std::filesystem::create_directories(dir)) ScratchDirs::add(dir);
  const auto out = dir / "stdout", err = dir / "stderr";
  const std::string cmd = env + (env.empty() ? "" : " ") + LAYERLAB_BINARY + std::string(" ") +
                          args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace layerlab::testing

namespace layerlab::testing {

// Starts `LAYERLAB_BINARY args` in the background (stdout/stderr to files in `dir`);
// returns its pid.
inline pid_t spawn_layerlab(const std::string& args, const std::filesystem::path& dir,
                            const std::string& env = "") {
  const pid_t pid = fork();
  if (pid == 0) {
    // env(1), so that `env` may hold VAR=VALUE assignments and a command prefix alike.
    const std::string cmd = "exec env " + env + (env.empty() ? "" : " ") + LAYERLAB_BINARY +
                            std::string(" ") + args + " >" + (dir / "bg.out").string() + " 2>" +
                            (dir / "bg.err").string();
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Kills (SIGKILL) and reaps a spawned child that still runs when the guard goes out of
// scope, so that a test failing an ASSERT part-way leaves no `run` or worker behind. A child
// the test has reaped itself is left alone: waitpid then says it is no child of ours, so a
// reused pid is never signalled.
class KillOnExit {
 public:
  explicit KillOnExit(pid_t pid) : pid_(pid) {}
  ~KillOnExit() {
    if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  KillOnExit(const KillOnExit&) = delete;
  KillOnExit& operator=(const KillOnExit&) = delete;

 private:
  pid_t pid_;
};

// Waits for a background process (bounded); its exit code, or -1 after killing it.
inline int wait_exit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// A fresh, empty directory for one test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("layerlab-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ScratchDirs::add(dir);
  return dir;
}

}  // namespace layerlab::testing
