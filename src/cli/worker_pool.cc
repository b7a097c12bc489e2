#include "cli/worker_pool.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <string_view>
#include <thread>

#include "cli/secrets.h"
#include "common/error.h"

namespace layerlab::cli {

WorkerPool::WorkerPool(int workers, std::vector<std::string> args, int blas_threads) {
  // Every variable the children must not inherit from here: the URLs (set below when given)
  // and the BLAS thread count.
  std::map<std::string, std::string> env = {
      {kStoreEnv, ""}, {kBrokerEnv, ""}, {"OPENBLAS_NUM_THREADS", std::to_string(blas_threads)}};
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--store" || args[i] == "--broker") && i + 1 < args.size()) {
      env[secret_env_of(args[i])] = args[i + 1];
      ++i;
    } else {
      if (args[i] == "-" && i > 0 && args[i - 1] == "--study") study_arg_ = args_.size();
      args_.push_back(args[i]);
    }
  }
  for (const auto& [name, value] : env) {
    replaced_.push_back(name + "=");
    if (!value.empty()) env_.push_back(name + "=" + value);
  }
  for (int i = 0; i < workers; ++i) {
    study_sockets_.push_back(-1);
    children_.push_back(spawn(&study_sockets_.back()));
  }
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::send_study(int64_t study_id) {
  if (study_arg_ == 0 || args_[study_arg_] != "-") return;
  args_[study_arg_] = std::to_string(study_id);
  const std::string line = args_[study_arg_] + "\n";
  for (int& fd : study_sockets_) {
    if (fd < 0) continue;
    // A child that died has closed its end: EPIPE, no SIGPIPE; supervise() starts it again
    // with the study as its argument.
    [[maybe_unused]] const ssize_t n = send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    close(fd);
    fd = -1;
  }
}

pid_t WorkerPool::spawn(int* study_socket) {
  // Everything the child needs is built before fork(): in a process with threads the child
  // may only make async-signal-safe calls until exec (a setenv there allocated, and hung on
  // the sanitizer allocator's lock taken by another thread at the moment of the fork).
  std::vector<std::string> argv_s = {"layerlab", "worker"};
  argv_s.insert(argv_s.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    if (std::none_of(replaced_.begin(), replaced_.end(),
                     [&](const std::string& r) { return var.substr(0, r.size()) == r; }))
      env_s.emplace_back(var);
  }
  env_s.insert(env_s.end(), env_.begin(), env_.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The child's standard input is one end of a socket pair while its study is to come (a
  // socket rather than a pipe: a send to a child that died fails instead of raising
  // SIGPIPE). Both ends are close-on-exec, so no other child holds this one's open.
  int sv[2] = {-1, -1};
  const bool study_to_come = study_arg_ != 0 && args_[study_arg_] == "-";
  if (study_to_come && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw internal_error("cannot start a worker process: socketpair failed");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    if (study_to_come) {
      close(sv[0]);
      close(sv[1]);
    }
    throw internal_error("cannot start a worker process: fork failed");
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    if (study_to_come && dup2(sv[1], STDIN_FILENO) < 0) _exit(127);
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  if (study_to_come) {
    close(sv[1]);
    *study_socket = sv[0];
  }
  return pid;
}

int WorkerPool::supervise(int max_restarts) {
  int restarted = 0;
  for (size_t i = 0; i < children_.size(); ++i) {
    pid_t& pid = children_[i];
    if (pid <= 0) continue;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != pid) continue;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid = 0;
    // Bad input or a missing prerequisite (main.cc's exit codes: a device, an authorization,
    // a store URL): the same arguments in the same environment fail again.
    if (code == 2 || code == 3) {
      if (stopped_code_ == 0) stopped_code_ = code;
      continue;
    }
    if (code != 0 && restarts_ < max_restarts) {
      pid = spawn(&study_sockets_[i]);
      ++restarts_;
      ++restarted;
    }
  }
  return restarted;
}

int WorkerPool::alive() const {
  return static_cast<int>(
      std::count_if(children_.begin(), children_.end(), [](pid_t pid) { return pid > 0; }));
}

void WorkerPool::stop(double grace_seconds) {
  for (size_t i = 0; i < children_.size(); ++i) {
    if (children_[i] > 0) kill(children_[i], study_sockets_[i] >= 0 ? SIGKILL : SIGTERM);
    if (study_sockets_[i] >= 0) close(study_sockets_[i]);
    study_sockets_[i] = -1;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(grace_seconds * 1000));
  for (pid_t& pid : children_) {
    while (pid > 0) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = 0;
      } else if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        pid = 0;
      } else {
        // A worker exits 20-50 ms after SIGTERM; looking every 20 ms kept run (and the
        // leaderboard) waiting up to 20 ms more at the end of every study.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  }
}

}  // namespace layerlab::cli
