// ChangeFeed: follows the store (workers in other processes write to it) and turns what
// changed into events for the EventHub and updates for the analysis::StudyCache. Polls every
// `interval` on its own thread and its own store connection: the trial change log, the new
// epochs of the running trials it knows, the workers and the studies.
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

#include "analysis/study_cache.h"
#include "server/event_hub.h"
#include "store/store.h"

namespace layerlab::server {

class ChangeFeed {
 public:
  // Rows read per poll; more than this at once is streamed as `resync`.
  static constexpr int64_t kTrialsPerPoll = 2000;
  static constexpr size_t kEpochsPerPoll = 5000;

  ChangeFeed(std::unique_ptr<store::Store> store, analysis::StudyCache& cache, EventHub& hub,
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
  // A running trial whose epochs are streamed: the last epoch sent.
  struct Followed {
    int64_t study_id = 0;
    int attempt = 0;
    int last_epoch = -1;  // none yet
  };
  // The new epochs of `f`, as events (appended); updates f.last_epoch.
  void read_epochs(int64_t trial_id, Followed& f, std::vector<Event>& events);

  std::unique_ptr<store::Store> store_;
  analysis::StudyCache& cache_;
  EventHub& hub_;
  std::chrono::milliseconds interval_;
  int64_t cursor_ = 0;  // the last trial change seen
  // What the last poll saw of workers (status, trial, alive) and studies (status).
  std::map<std::string, std::tuple<int, int64_t, bool>> workers_;
  std::map<int64_t, int> studies_;
  std::map<int64_t, Followed> running_;  // trial id ->
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> polls_{0}, errors_{0};
  std::thread thread_;
};

}  // namespace layerlab::server
