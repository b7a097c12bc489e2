// A `layerlab serve` process for tests: started on a free loopback port, stopped (SIGTERM)
// at the end, with an HTTP client on it.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "integration/run_command.h"
#include "support/free_port.h"

namespace layerlab::testing {

// The port in the "dashboard at http://127.0.0.1:PORT/REST" line that a layerlab process
// started by spawn_layerlab in `dir` prints, waiting up to 20 s; 0 if it never came.
inline int announced_port(const std::filesystem::path& dir, const std::string& rest = "") {
  const std::regex listening("dashboard at http://127\\.0\\.0\\.1:([0-9]+)/" + rest);
  for (int i = 0; i < 400; ++i) {
    std::smatch m;
    const std::string err = read_file(dir / "bg.err");
    if (std::regex_search(err, m, listening)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

class ServerProcess {
 public:
  // Starts `layerlab serve --store URL --bind 127.0.0.1:0 EXTRA` with its output in dir.
  ServerProcess(const std::string& store_url, const std::filesystem::path& dir,
                const std::string& extra = "")
      : dir_(dir) {
    // The server answers an oversized body with 413 before reading it and closes: a client
    // still sending must get EPIPE, not die of SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    std::filesystem::create_directories(dir);
    pid_ = spawn_layerlab("serve --store " + store_url + " --bind 127.0.0.1:0 " + extra, dir);
    port_ = announced_port(dir);
    if (port_ == 0) ADD_FAILURE() << "serve did not start: " << read_file(dir / "bg.err");
  }
  ~ServerProcess() { stop(); }

  // SIGTERM, then the exit status (-1 if it had to be killed).
  int stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return exit_code_ = -1;
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(std::chrono::seconds(30));
    return c;
  }
  std::string log() const { return read_file(dir_ / "bg.err"); }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = 0;
  int port_ = 0;
  int exit_code_ = -1;
};

}  // namespace layerlab::testing
