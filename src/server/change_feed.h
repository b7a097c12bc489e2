// ChangeFeed: follows the store (workers in other processes write to it) and turns what
// changed into events for the EventHub and updates for the StudyCache. Polls every
// `interval` on its own thread and its own store connection.
//
// Thread-safety: start/stop from one thread; poll_once is for tests and runs on the
// caller's thread (do not mix with a started feed).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "server/event_hub.h"
#include "server/study_cache.h"
#include "store/store.h"

namespace layerlab::server {

class ChangeFeed {
 public:
  // Rows read per poll; more than this at once is streamed as `resync`.
  static constexpr int64_t kTrialsPerPoll = 2000;
  static constexpr int64_t kEpochsPerPoll = 5000;

  ChangeFeed(std::unique_ptr<store::Store> store, StudyCache& cache, EventHub& hub,
             std::chrono::milliseconds interval);
  ~ChangeFeed();  // stop()

  void start();
  void stop();
  // One poll: reads what changed since the last one and publishes it. Store errors
  // propagate (the thread reports them and retries on the next poll).
  void poll_once();
  uint64_t polls() const { return polls_.load(); }
  uint64_t errors() const { return errors_.load(); }

 private:
  void run();
  int64_t study_of(int64_t trial_id);

  std::unique_ptr<store::Store> store_;
  StudyCache& cache_;
  EventHub& hub_;
  std::chrono::milliseconds interval_;
  store::ChangeCursor cursor_;
  // What the last poll saw of workers (status, trial, alive) and studies (status).
  std::map<std::string, std::tuple<int, int64_t, bool>> workers_;
  std::map<int64_t, int> studies_;
  std::map<int64_t, int64_t> trial_study_;  // for epoch events; bounded by clearing
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> polls_{0}, errors_{0};
  std::thread thread_;
};

}  // namespace layerlab::server
