// WorkerPool: the local worker processes of `layerlab run`, started as `layerlab worker`
// children of this binary. They die with the parent (PR_SET_PDEATHSIG), and a child that
// dies unexpectedly is started again (its trial comes back when its lease expires).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace layerlab::cli {

class WorkerPool {
 public:
  // args: the arguments after "layerlab worker".
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
  int blas_threads_;
  std::vector<pid_t> children_;
  int restarts_ = 0;
};

}  // namespace layerlab::cli
