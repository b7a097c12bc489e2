// One training slot of a worker: receives deliveries from a TrialQueue, trains them on a
// Backend, reports epochs and results to a Store, acknowledges. Built from interfaces, so
// that tests run the loop in process (a real store, the store queue, the CPU backend, a
// ManualClock, their own FaultHook); run_worker (worker.h) builds the real ones.
//
// Results of short trials wait briefly to share one transaction, a pack's members commit
// together, and a delivery is acked only once its result is committed. A result the store
// refuses (the attempt is no longer current: the lease ran out and another worker took the
// trial) is acked and counted as late, never as committed.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "store/clock.h"
#include "store/store.h"
#include "worker/fault_injection.h"
#include "worker/worker.h"

namespace layerlab::backend {
class Backend;
}
namespace layerlab::queue {
class TrialQueue;
}

namespace layerlab::worker {

struct SlotServices {
  store::Store& store;        // this slot's own connection: reports, epochs, heartbeats
  queue::TrialQueue& queue;   // shared by the worker's slots
  backend::Backend& backend;  // this slot's
  const store::Clock& clock;  // when epochs flush and waiting results commit
  FaultHook& faults;
};

class Slot {
 public:
  // Registers the worker `id` in the store and starts its heartbeat.
  Slot(const WorkerOptions& options, const std::atomic<bool>& stop, std::string id,
       SlotServices services);
  ~Slot();  // stops the heartbeat and marks the worker stopped
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  // Runs until `stop` or, with options.exit_when_done, the study is over. Errors of the
  // store or broker that outlast the backoff propagate.
  WorkerSummary run();

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace layerlab::worker
