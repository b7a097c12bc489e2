// WorkerPool: the local worker processes of `layerlab run`, started as `layerlab worker`
// children of this binary. They die with the parent (PR_SET_PDEATHSIG), and a child that
// dies unexpectedly is started again (its trial comes back when its lease expires). The
// store and broker URLs (which may carry passwords) reach the children through their
// environment (LAYERLAB_STORE, LAYERLAB_BROKER), never their argv, which `ps` shows anyone.
//
// With "--study -" among the arguments, the children start before the study is stored and
// read its id from their standard input (send_study): their start (process, libraries,
// store connection) overlaps the parent's (store connection, migration, the study's row).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace layerlab::cli {

class WorkerPool {
 public:
  // args: the arguments after "layerlab worker". "--store URL" and "--broker URL" among
  // them are taken out and passed as LAYERLAB_STORE and LAYERLAB_BROKER instead.
  WorkerPool(int workers, std::vector<std::string> args, int blas_threads);
  ~WorkerPool();  // stop()

  // With "--study -": tells the children waiting for it which study to work on (a child
  // started again later gets it as its argument). Once at most.
  void send_study(int64_t study_id);

  // Reaps exited children; restarts those that died while the study still runs (at most
  // `max_restarts` in all), except those that exited with a code starting again would only
  // repeat (2: bad input, 3: a missing prerequisite). Returns the number restarted.
  int supervise(int max_restarts);
  // SIGTERM to every child, then waits up to `grace_seconds` before SIGKILL. A child still
  // waiting for its study holds nothing of one (no trial, no worker row): it is killed at
  // once, though it may be connecting to a store that does not answer.
  void stop(double grace_seconds = 10.0);
  int restarts() const { return restarts_; }
  // The exit code (2 or 3) of the first child left stopped because starting it again would
  // fail the same way; 0 if none.
  int stopped_code() const { return stopped_code_; }
  // Children running (or started and not yet reaped).
  int alive() const;

 private:
  // Starts a child; with its study to come, *study_socket is where it will be sent.
  pid_t spawn(int* study_socket);

  std::vector<std::string> args_;
  size_t study_arg_ = 0;               // index of "-" after "--study" in args_; 0: none
  std::vector<std::string> replaced_;  // "NAME=" of the variables children do not inherit
  std::vector<std::string> env_;       // NAME=VALUE set in the children instead
  std::vector<pid_t> children_;
  std::vector<int> study_sockets_;  // per child: where its study is sent; -1 once sent
  int restarts_ = 0;
  int stopped_code_ = 0;
};

}  // namespace layerlab::cli
