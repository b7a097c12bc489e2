// A private RabbitMQ broker for the tests that need a real AMQP broker (the AMQP trial
// queue, worker fault tests). Header-only; uses scripts/services/rabbitmq.sh, which runs
// Debian's rabbitmq-server (`apt-get install rabbitmq-server`, or scripts/install-deps.sh).
//
//   auto& broker = layerlab::testing::RabbitMqService::instance();  // starts it (~8-12 s here)
//   run_worker("--broker " + broker.url());
//   broker.restart();                            // same port, durable queues kept
//   auto depth = broker.queue_messages();        // {"queue name": messages}
//   std::string dlq = broker.ctl("list_queues name messages_ready");
//
// One broker per test process, started on first use in a fresh temporary directory on free
// loopback ports (AMQP and Erlang distribution), and stopped when the process exits
// normally (a static object's destructor). If the process dies instead (a crash, a
// timeout's SIGKILL), the script's watchdog notices within a second, stops the node and
// removes its directory, so no broker outlives its test binary.
//
// CTest runs every test in its own process, so each test that touches the broker pays for
// one start. To share one broker between processes, start it once
// (`scripts/services/rabbitmq.sh start DIR PORT`) and set LAYERLAB_TEST_RABBITMQ_DIR=DIR:
// the tests then use that node, start it if it is down, and never stop it at exit.
//
// Queue depths of quorum queues in `rabbitmqctl list_queues` lag by a few seconds (they are
// published on a timer); poll when a test waits for a depth to change.
//
// Thread-safety: every member may be called from any thread; calls are serialised.
// Uses TempDir from support/temp_and_errors.h (which includes common/error.h: link the test
// against a layerlab library, as every broker test does anyway, for the src/ include path).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "support/temp_and_errors.h"

namespace layerlab::testing {

class RabbitMqService {
 public:
  // The process-wide broker, started on the first call. Throws std::runtime_error (which
  // gtest reports as the test's failure) when it cannot start.
  static RabbitMqService& instance() {
    static RabbitMqService service;
    return service;
  }

  // amqp://guest:guest@127.0.0.1:PORT/%2f (the default vhost).
  std::string url() const {
    return "amqp://guest:guest@127.0.0.1:" + std::to_string(port_) + "/%2f";
  }
  int port() const { return port_; }
  // The node's directory: mnesia/, log/rabbit.log, ports, pid files.
  std::string dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/log/rabbit.log"; }

  // Stops the node and starts it again on the same port with the same data (durable
  // queues and persistent messages survive). Returns when the node accepts connections.
  void restart() {
    std::lock_guard lock(mu_);
    run_or_throw("restart " + dir_, owner_env());
  }
  // Stops the node (gracefully; it is killed if it does not stop within 30 s).
  void stop() {
    std::lock_guard lock(mu_);
    run_or_throw("stop " + dir_, "");
  }
  // Starts the node again after stop() (no-op when it is running).
  void start() {
    std::lock_guard lock(mu_);
    run_or_throw("start " + dir_ + " " + std::to_string(port_), owner_env());
  }
  bool running() {
    std::lock_guard lock(mu_);
    return run_script("status " + dir_, "").exit_code == 0;
  }

  // Runs `rabbitmqctl -q ARGS` against this node and returns its stdout, e.g.
  // ctl("list_queues name messages") or ctl("list_queues name arguments"). ARGS are
  // trusted test strings, passed through the shell. Throws when rabbitmqctl fails.
  std::string ctl(const std::string& args) {
    std::lock_guard lock(mu_);
    return run_or_throw("ctl " + dir_ + " " + args, "");
  }

  // Messages per queue in the default vhost ("ready + unacknowledged"), from
  // `rabbitmqctl list_queues name messages`; another column of list_queues (e.g.
  // messages_unacknowledged: sent to a consumer, not yet acked) when given.
  std::map<std::string, long> queue_messages(const std::string& column = "messages") {
    std::map<std::string, long> depths;
    std::istringstream lines(ctl("list_queues name " + column));
    std::string line;
    while (std::getline(lines, line)) {
      const auto tab = line.rfind('\t');
      if (tab == std::string::npos) continue;
      try {
        depths[line.substr(0, tab)] = std::stol(line.substr(tab + 1));
      } catch (const std::exception&) {  // the header line ("name\tmessages")
      }
    }
    return depths;
  }

  ~RabbitMqService() {
    // Only the process that started it stops it (not a forked child, e.g. a death test),
    // and never a shared node.
    if (owner_pid_ != ::getpid() || shared_) return;
    std::lock_guard lock(mu_);
    run_script("stop " + dir_, "");
  }

  RabbitMqService(const RabbitMqService&) = delete;
  RabbitMqService& operator=(const RabbitMqService&) = delete;

 private:
  struct ScriptResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
  };

  RabbitMqService() : owner_pid_(::getpid()) {
    if (!std::filesystem::exists("/usr/lib/rabbitmq/bin/rabbitmq-server"))
      throw std::runtime_error(
          "RabbitMQ is not installed (no /usr/lib/rabbitmq/bin/rabbitmq-server); the broker "
          "tests need Debian's rabbitmq-server: run scripts/install-deps.sh test (or apt-get "
          "install rabbitmq-server)");
    if (!std::filesystem::exists(script())) throw std::runtime_error("missing " + script());

    if (const char* shared = std::getenv("LAYERLAB_TEST_RABBITMQ_DIR"); shared && *shared) {
      shared_ = true;
      dir_ = std::filesystem::absolute(shared).string();
      const ScriptResult r = run_script("start " + dir_, "");
      if (r.exit_code != 0) throw failure("start " + dir_, r);
      port_ = port_from_url(r.out);
      return;
    }

    tmp_.emplace();
    dir_ = tmp_->dir();
    // Free ports can be taken by someone else before the node binds them: a few tries.
    for (int attempt = 1;; ++attempt) {
      const auto [amqp, dist] = two_free_ports();
      const std::string args =
          "start " + dir_ + " " + std::to_string(amqp) + " " + std::to_string(dist);
      const ScriptResult r = run_script(args, owner_env());
      if (r.exit_code == 0) {
        port_ = port_from_url(r.out);
        return;
      }
      const bool port_clash =
          r.err.find("is taken") != std::string::npos || log_mentions("dist_port_already_used");
      if (!port_clash || attempt == 3) throw failure(args, r);
      run_script("stop " + dir_, "");
    }
  }

  static std::string script() {
    return std::string(LAYERLAB_SOURCE_DIR) + "/scripts/services/rabbitmq.sh";
  }

  // The script's environment for start/restart: a watchdog that stops the node and removes
  // its directory once this process is gone.
  std::string owner_env() const {
    if (shared_) return "";
    return "LAYERLAB_RABBITMQ_OWNER_PID=" + std::to_string(owner_pid_) +
           " LAYERLAB_RABBITMQ_CLEANUP=1";
  }

  // Runs `env rabbitmq.sh args`, capturing stdout (through a pipe) and stderr (a file).
  ScriptResult run_script(const std::string& args, const std::string& env) const {
    const std::string err_path = dir_ + "/.script.err";
    const std::string cmd =
        env + (env.empty() ? "" : " ") + script() + " " + args + " 2>" + err_path + " </dev/null";
    ScriptResult r;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) {
      r.err = "popen failed";
      return r;
    }
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(err_path);
    std::stringstream ss;
    ss << err.rdbuf();
    r.err = ss.str();
    return r;
  }

  std::string run_or_throw(const std::string& args, const std::string& env) const {
    const ScriptResult r = run_script(args, env);
    if (r.exit_code != 0) throw failure(args, r);
    return r.out;
  }

  std::runtime_error failure(const std::string& args, const ScriptResult& r) const {
    return std::runtime_error("scripts/services/rabbitmq.sh " + args + " failed (exit " +
                              std::to_string(r.exit_code) + "): " + r.err + r.out +
                              " [broker log: " + log_path() + "]");
  }

  bool log_mentions(const std::string& what) const {
    std::ifstream in(dir_ + "/log/server.out");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str().find(what) != std::string::npos;
  }

  // The port of the last "amqp://...:PORT/..." line of the script's output.
  static int port_from_url(const std::string& out) {
    const auto at = out.rfind("amqp://");
    if (at == std::string::npos) throw std::runtime_error("no broker URL in: " + out);
    const auto colon = out.find(':', out.find('@', at));
    return std::stoi(out.substr(colon + 1));
  }

  // Two distinct ports the kernel considers free on 127.0.0.1 (both held while picking).
  static std::pair<int, int> two_free_ports() {
    int fds[2] = {-1, -1};
    int ports[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      fds[i] = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = 0;
      socklen_t len = sizeof addr;
      if (fds[i] < 0 || ::bind(fds[i], reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
          ::getsockname(fds[i], reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::runtime_error("cannot pick a free port on 127.0.0.1");
      ports[i] = ntohs(addr.sin_port);
    }
    ::close(fds[0]);
    ::close(fds[1]);
    return {ports[0], ports[1]};
  }

  const pid_t owner_pid_;
  bool shared_ = false;
  std::optional<TempDir> tmp_;  // the node's directory unless shared; removed last
  std::string dir_;
  int port_ = 0;
  std::mutex mu_;
};

}  // namespace layerlab::testing
