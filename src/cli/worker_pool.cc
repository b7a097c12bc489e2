#include "cli/worker_pool.h"

#include <sys/prctl.h>
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
      args_.push_back(args[i]);
    }
  }
  for (const auto& [name, value] : env) {
    replaced_.push_back(name + "=");
    if (!value.empty()) env_.push_back(name + "=" + value);
  }
  for (int i = 0; i < workers; ++i) children_.push_back(spawn());
}

WorkerPool::~WorkerPool() {
  stop();
}

pid_t WorkerPool::spawn() {
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
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw internal_error("cannot start a worker process: fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

int WorkerPool::supervise(int max_restarts) {
  int restarted = 0;
  for (pid_t& pid : children_) {
    if (pid <= 0) continue;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != pid) continue;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    pid = 0;
    if (!clean && restarts_ < max_restarts) {
      pid = spawn();
      ++restarts_;
      ++restarted;
    }
  }
  return restarted;
}

void WorkerPool::stop(double grace_seconds) {
  for (pid_t pid : children_)
    if (pid > 0) kill(pid, SIGTERM);
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
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

}  // namespace layerlab::cli
