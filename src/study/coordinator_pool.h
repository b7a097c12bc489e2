// CoordinatorPool: the coordinator of `layerlab serve`. Studies arrive through the store
// (the REST API creates them); each round it keeps every running study's queue fed and
// marks studies whose trials are all finished as finished. Workers anywhere that share the
// store train the trials.
//
// Fair and bounded: a round stores at most batches_per_step batches of trials in all, one
// batch per study in turn (round-robin, starting after the study fed last), and each study
// only up to its window of queued trials (CoordinatorOptions), so one huge study can
// neither starve the others nor fill the disk. A study cancelled while it is fed simply
// stops being fed; a study that cannot be coordinated is reported once and left alone.
//
// With a broker (one queue, delivered in publish order), publish_horizon also bounds what
// each study has published and not started to about that long of its trials at the pace
// they start (at least step's max_in_flight): a study submitted after a large one waits
// behind about publish_horizon of the large one's work, not behind its whole window.
//
// Thread-safety: one thread drives a CoordinatorPool.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "queue/trial_queue.h"
#include "store/clock.h"
#include "store/store.h"
#include "study/coordinator.h"

namespace layerlab::study {

struct CoordinatorPoolOptions {
  CoordinatorOptions study;  // each study's window (max_queued)
  int batches_per_step = 5;  // batches of kTrialBatch trials stored per step, in all
  // 0: every stored trial is published at once (the store queue needs no publishing).
  std::chrono::milliseconds publish_horizon{0};
  // Paces the publish windows and reads the studies' time budgets (budget.hours).
  const store::Clock* clock = &store::system_clock();
};

class CoordinatorPool {
 public:
  // `report` receives one line per event worth telling the operator (a study finished or
  // cancelled, a study that cannot be coordinated).
  // `queue` carries the trials to the workers (the store queue or the broker).
  CoordinatorPool(store::Store& store, queue::TrialQueue& queue,
                  std::function<void(const std::string&)> report,
                  CoordinatorPoolOptions options = {});
  ~CoordinatorPool();

  // One round over the running studies: tops them up in turn (adaptive samplers keep at
  // most `max_in_flight` queued or running), fails the trials the broker dead-lettered, and
  // finishes the complete studies. A study that cannot be coordinated (its stored spec
  // cannot be read, its sampler throws) is reported once and left alone; a study cancelled
  // meanwhile is dropped. Only store and broker errors (kUnavailable, kAborted) propagate.
  // Returns the trials it gave adaptive studies and those started from publish windows that
  // were drained whole: the caller's next round comes sooner while either happens.
  int64_t step(int64_t max_in_flight);

  size_t active() const { return coordinators_.size(); }

 private:
  store::Store& store_;
  std::function<void(const std::string&)> report_;
  queue::TrialQueue& queue_;
  // Runs fn for study `s`; a failure that is not the store's or broker's being away marks
  // the study broken (reported once) and returns false.
  template <typename F>
  bool guarded(const store::StudyRecord& s, F&& fn);

  // A study's publish window, from the pace at which its published trials start.
  struct PublishPace {
    int64_t window = 0;
    int64_t measured_started = 0;  // Coordinator::started() at measured_at
    store::Time measured_at{};
    int64_t last_started = 0;  // Coordinator::started() at the last step
    int64_t waiting = 0;       // Coordinator::waiting() at the end of the last step
    bool grew = false;         // at the last step
  };
  int64_t pace_publishing(int64_t floor);

  CoordinatorPoolOptions options_;
  std::map<int64_t, std::unique_ptr<Coordinator>> coordinators_;
  std::map<int64_t, PublishPace> paces_;
  std::set<int64_t> broken_;  // studies reported as impossible to coordinate
  int64_t last_fed_ = 0;      // the study fed last: the next step starts after it
};

}  // namespace layerlab::study
