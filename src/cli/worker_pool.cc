#include "cli/worker_pool.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "common/error.h"

namespace layerlab::cli {

WorkerPool::WorkerPool(int workers, std::vector<std::string> args, int blas_threads)
    : args_(std::move(args)), blas_threads_(blas_threads) {
  for (int i = 0; i < workers; ++i) children_.push_back(spawn());
}

WorkerPool::~WorkerPool() {
  stop();
}

pid_t WorkerPool::spawn() {
  std::vector<std::string> argv_s = {"layerlab", "worker"};
  argv_s.insert(argv_s.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string threads = std::to_string(blas_threads_);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw internal_error("cannot start a worker process: fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
    setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);
    execv("/proc/self/exe", argv.data());
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
