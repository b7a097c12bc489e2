// Heartbeat: a thread that records the worker's liveness and current trial in the store
// every few seconds, independent of training (the dashboard judges workers by its age).
#pragma once

#include <atomic>
#include <condition_variable>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "store/store.h"

namespace layerlab::worker {

class Heartbeat {
 public:
  Heartbeat(store::Store& store, std::string worker_id,
            std::chrono::milliseconds interval = std::chrono::milliseconds(2000));
  ~Heartbeat();  // stops and joins
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void set_current(int64_t trial_id) { current_ = trial_id; }  // 0: idle
  // The backend memory in use, reported with the next beat (set by the training thread:
  // the backend itself is not thread-safe).
  void set_memory(int64_t bytes) { memory_ = bytes; }

 private:
  void run() EXCLUDES(mu_);

  store::Store& store_;
  const std::string id_;
  const std::chrono::milliseconds interval_;
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> memory_{0};
  Mutex mu_;
  std::condition_variable wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace layerlab::worker
