// WorkerPool: the local worker processes of `layerlab run`, started as `layerlab worker`
// children of this binary. They die with the parent (PR_SET_PDEATHSIG), and a child that
// dies unexpectedly is started again (its trial comes back when its lease expires). The
// store and broker URLs (which may carry passwords) reach the children through their
// environment (LAYERLAB_STORE, LAYERLAB_BROKER), never their argv, which `ps` shows anyone.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace layerlab::cli {

class WorkerPool {
 public:
  // args: the arguments after "layerlab worker". "--store URL" and "--broker URL" among
  // them are taken out and passed as LAYERLAB_STORE and LAYERLAB_BROKER instead.
  WorkerPool(int workers, std::vector<std::string> args, int blas_threads);
  ~WorkerPool();  // stop()

  // Reaps exited children; restarts those that died while the study still runs (at most
  // `max_restarts` in all). Returns the number restarted.
  int supervise(int max_restarts);
  // SIGTERM to every child, then waits up to `grace_seconds` before SIGKILL.
  void stop(double grace_seconds = 10.0);
  int restarts() const { return restarts_; }

 private:
  pid_t spawn();

  std::vector<std::string> args_;
  std::vector<std::string> replaced_;  // "NAME=" of the variables children do not inherit
  std::vector<std::string> env_;       // NAME=VALUE set in the children instead
  std::vector<pid_t> children_;
  int restarts_ = 0;
};

}  // namespace layerlab::cli
