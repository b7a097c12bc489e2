// HandlerPool: runs request handlers off the network threads. libmicrohttpd binds each
// connection to one network thread, so a handler that takes long there (a study view made
// afresh, a wait for its turn, a POSTed study's datasets) would stall every other
// connection of that thread, /healthz included. On the pool, whichever thread is free takes
// the next request, and the network threads only move bytes.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace layerlab::server {

class HandlerPool {
 public:
  explicit HandlerPool(unsigned threads);
  ~HandlerPool();  // stop()
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Runs `job` on a pool thread; once the pool is stopping, on the caller's thread.
  void post(std::function<void()> job);
  // Runs what is queued, then joins the threads.
  void stop();

 private:
  void run();

  Mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace layerlab::server
