// CoordinatorPool: the coordinator of `layerlab serve`. Studies arrive through the store
// (the REST API creates them); each round it keeps every running study's queue fed and
// marks studies whose trials are all finished as finished. Workers anywhere that share the
// store train the trials.
//
// Thread-safety: one thread drives a CoordinatorPool.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "queue/trial_queue.h"
#include "store/store.h"
#include "study/coordinator.h"

namespace layerlab::study {

class CoordinatorPool {
 public:
  // `report` receives one line per event worth telling the operator (a study finished, a
  // study that cannot be coordinated).
  // `queue` carries the trials to the workers (the store queue or the broker).
  CoordinatorPool(store::Store& store, queue::TrialQueue& queue,
                  std::function<void(const std::string&)> report);
  ~CoordinatorPool();

  // One round over the running studies: tops each up (adaptive samplers keep at most
  // `max_in_flight` queued or running), fails the trials the broker dead-lettered, and
  // finishes the complete studies. A study whose stored spec cannot be read is reported once
  // and left alone; store and broker errors propagate.
  void step(int64_t max_in_flight);

  size_t active() const { return coordinators_.size(); }

 private:
  store::Store& store_;
  std::function<void(const std::string&)> report_;
  queue::TrialQueue& queue_;
  std::map<int64_t, std::unique_ptr<Coordinator>> coordinators_;
  std::set<int64_t> broken_;  // studies reported as impossible to coordinate
};

}  // namespace layerlab::study
