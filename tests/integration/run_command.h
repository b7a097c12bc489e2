// Runs the layerlab binary as a user would and captures what it prints.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace layerlab::testing {

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

// Runs `LAYERLAB_BINARY args` through the shell (args are trusted test strings).
inline CommandResult run_layerlab(const std::string& args, const std::string& env = "") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("layerlab-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
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
