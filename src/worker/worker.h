// The worker loop: claim a trial from the queue, train it, report epochs and the result to
// the store, acknowledge; heartbeat in the store so the dashboard sees every worker.
//
// Failures are classified (after abseil's codes): the store or broker away (Unavailable,
// Aborted) -> back off and retry the same call; the trial's parameters or data are bad
// (InvalidArgument, NotFound, FailedPrecondition) -> the trial ends `failed` with the
// reason, no retry; the process dies -> the lease expires and the trial is retried up to
// the limit. A stop request (SIGTERM) stops claiming, hands back the trial in hand and
// returns.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "store/store.h"

namespace layerlab::worker {

struct WorkerOptions {
  std::string store_url = store::kDefaultStoreUrl;
  std::string broker_url;  // amqp://...; empty: the store is the queue
  int slots = 1;           // trials trained at once (threads, each with its own store connection)
  // 0: trials of any study. With a broker every worker takes trials of every study on its
  // queue; study_id then only says which study exit_when_done waits for.
  int64_t study_id = 0;
  std::string device = "cpu";
  // Up to this many trials of one shape (study::pack_key) train together in one batched
  // computation per slot; 1 trains trial by trial.
  int pack = 1;
  int threads = 1;  // CPU threads per trial (the CPU backend's team)
  // With a broker: deliveries in hand at once (see AmqpQueueOptions::prefetch); 0: one per
  // slot and pack member, raised up to 32 per slot and member while trials take
  // milliseconds (AmqpQueueOptions::max_prefetch).
  int prefetch = 0;
  std::chrono::milliseconds lease{30'000};
  int max_attempts = 3;
  // Return once the study (study_id) is no longer running and nothing is left to claim.
  bool exit_when_done = false;
};

struct WorkerSummary {
  int64_t trials = 0;       // results committed
  int64_t handed_back = 0;  // trials requeued on a stop request
  int64_t lost = 0;         // trials abandoned because their lease was lost
  int64_t late = 0;         // results the store refused: the attempt was no longer current

  WorkerSummary& operator+=(const WorkerSummary& o) {
    trials += o.trials;
    handed_back += o.handed_back;
    lost += o.lost;
    late += o.late;
    return *this;
  }
};

// Runs until `stop` becomes true or, with exit_when_done, the study is over. The summary
// adds up the slots. queue_store is the queue's connection to options.store_url (claims,
// leases, deliveries), opened by the caller, which may have used it first (the command
// resolves --study with it: one connection fewer to open). A single slot reports through
// it too; with several, each slot opens its own.
WorkerSummary run_worker(const WorkerOptions& options, const std::atomic<bool>& stop,
                         store::Store& queue_store);

}  // namespace layerlab::worker
