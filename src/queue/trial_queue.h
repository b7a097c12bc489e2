// TrialQueue: what carries trials from the coordinator to the workers. The store-backed
// queue (make_store_queue) is the default; the AMQP queue (make_amqp_queue, RabbitMQ) is
// for clusters.
//
// Delivery is at least once: a delivery that is neither acked nor requeued (the worker
// died) comes back, to this or another worker, with a higher attempt number. Results are
// exactly once because the worker commits them keyed by (trial_id, attempt) in the store
// (Store::finish_trial) *before* acking.
//
// Worker loop:
//   while (auto d = queue.receive(1s)) {      // the trial is now running, attempt d->attempt
//     train, checking queue.lost(*d) between epochs (stop early when it says true);
//     queue.finish({{d->trial_id, d->attempt, ...}});  // Store::finish_trials, maybe more
//     queue.ack(*d);
//   }
//   on SIGTERM: queue.requeue(d) for each delivery in hand.
//
// Thread-safety: every call may be made from any thread, concurrently (one worker process
// with several training slots shares one queue).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stop_sleep.h"
#include "store/store.h"

namespace layerlab::queue {

// One trial handed to this worker, already marked running in the store.
struct Delivery {
  int64_t trial_id = 0;
  int attempt = 0;  // the key for every write about this execution
  int64_t study_id = 0;
  int64_t number = 0;
  std::string dataset;
  nlohmann::json params;
  uint64_t tag = 0;         // the broker's delivery tag; 0 for the store queue
  uint64_t connection = 0;  // the broker connection it came on (tags are per connection)
};

class TrialQueue {
 public:
  virtual ~TrialQueue() = default;

  // Makes trials (already written as queued) available to workers. Store queue: no-op,
  // the queued rows are the queue.
  virtual void publish(int64_t study_id, const std::vector<int64_t>& trial_ids) = 0;
  // The next trial for this worker, waiting up to `wait`; nullopt when none came. Errors of
  // the store or broker propagate (kUnavailable: back off and call again).
  virtual std::optional<Delivery> receive(std::chrono::milliseconds wait) = 0;
  // Commits results (Store::finish_trials); element i says whether finishes[i] applied.
  // The AMQP queue also starts, in the same transaction, the deliveries the broker sent
  // ahead (Store::finish_and_start_trials); the store queue, while trials are short, claims
  // the next ones in it (Store::finish_and_claim_trials): short trials cost one commit per
  // batch instead of two. Errors as receive(); nothing is written then.
  virtual std::vector<bool> finish(const std::vector<store::TrialFinish>& finishes) = 0;
  // Done with d; call after its result is committed.
  virtual void ack(const Delivery& d) = 0;
  // Hands d back unfinished (SIGTERM) without counting it against the retry limit.
  virtual void requeue(const Delivery& d) = 0;
  // Hands back the trials taken ahead (prefetched) and not yet returned by receive(), as if
  // never taken (Store::give_back_trials: their next start is the same attempt); call
  // before the worker stops. receive() may be called again afterwards.
  virtual void close() = 0;
  // True once d is known to be no longer this worker's (its lease ran out and it may be
  // running elsewhere): stop training it; its result will not be accepted unless nobody
  // took the trial over. Cheap: reads local state only.
  virtual bool lost(const Delivery& d) const = 0;
  // Coordinator side: fails in the store the trials the broker gave up on (dead-lettered
  // after its delivery limit) and returns how many. The store queue has none: the store
  // fails trials whose leases ran out too often itself.
  virtual int64_t settle_dead_letters() = 0;
};

struct StoreQueueOptions {
  // When set, receive() returns (empty) within kStopCheck once *stop is true.
  const std::atomic<bool>* stop = nullptr;
  std::chrono::milliseconds lease{30'000};  // renewed every lease/3 by a LeaseKeeper thread
  std::chrono::milliseconds poll_min{5};    // first wait when nothing is queued...
  std::chrono::milliseconds poll_max{500};  // ...doubling (jittered) up to this
  int64_t study_id = 0;                     // 0: trials of any study
  int max_attempts = 3;                     // lost attempts before a trial is failed
  // Trials claimed per transaction, at most. The queue claims one at a time while trials
  // take long and doubles up to this while they take under 20 ms, so short trials share
  // transactions and long ones are never held back from other workers. 32, as many as a
  // worker commits results at once: queue_bench (empty trials, PostgreSQL) ran 1.9-2.1x
  // faster at 2 workers and 1.3-1.9x at 16 than with 8 (docs/benchmarks.md).
  int max_prefetch = 32;
  // Trials claimed per transaction, at least (a worker training packs of K asks for K).
  int min_prefetch = 1;
};

// The store-backed queue: receive() claims with Store::claim_batch (one transaction with a
// lease), a LeaseKeeper renews the leases of the deliveries in hand, ack() stops renewing,
// requeue() calls Store::release_trial. `store` must outlive the queue; kInvalidArgument
// for an empty worker id or options out of range (lease < 3 ms, poll_min < 1 ms, poll_max
// < poll_min, max_attempts < 1).
std::unique_ptr<TrialQueue> make_store_queue(store::Store& store, std::string worker_id,
                                             const StoreQueueOptions& options = {});

struct AmqpQueueOptions {
  // When set, receive() returns (empty) within kStopCheck once *stop is true.
  const std::atomic<bool>* stop = nullptr;
  // Deliveries in hand (unacked) at once. More than the worker's slots lets short trials
  // start together and their results commit together (one transaction each way), at the
  // price of trials held by a busy worker while another may idle at the end of a study.
  // A redelivered trial (its last worker may have died of it) is started alone.
  int prefetch = 1;
  // Above prefetch: the queue raises what it holds to this while trials are short (each
  // acked within 50 ms of receive, 8 in a row), and drops back to prefetch, handing back
  // what waits, as soon as deliveries have waited 100 ms without the worker taking one (its
  // trial in hand takes long), or one is held for a second. 0: prefetch, fixed.
  int max_prefetch = 0;
  // Lost attempts (started, never finished: the worker died) before the store fails a
  // trial. The broker's own delivery limit is a backstop above it (broker_delivery_limit):
  // a trial held unstarted by a worker that died loses a delivery, not an attempt.
  int max_attempts = 3;
  std::chrono::milliseconds lease{30'000};  // store lease of a started trial (takeover check)
  std::chrono::seconds heartbeat{10};       // AMQP heartbeat of the consumer connection
};

// The deliveries after which the broker dead-letters a message, whoever held it: a
// backstop well above max_attempts, since a crash also costs a delivery to every message
// its worker held unstarted. Part of the queue's declaration: processes on one queue agree
// on max_attempts.
int broker_delivery_limit(int max_attempts);

// The RabbitMQ queue (broker URL amqp://user:pass@host:port/vhost[?queue=NAME]). publish()
// sends one persistent message per trial to a durable quorum queue and returns once the
// broker has confirmed them all. receive() takes deliveries (at most `prefetch` unacked)
// and starts each in the store (Store::start_trial): a redelivery of a trial already
// finished is acknowledged without running. ack() after the result is committed; requeue()
// releases the trial in the store and hands it back without using up a delivery (a copy is
// published, then the original acked; with the broker away the original is left for the
// broker to put back when the connection closes). A trial started `max_attempts` times without a
// result (its workers died) is failed by the store at its next delivery and rejected; it
// and any message delivered broker_delivery_limit times without an ack are dead-lettered
// to NAME.dead (kept for operators) and NAME.dead.store (read by settle_dead_letters). The
// connection comes back by itself after the broker restarts (jittered backoff to 5 s);
// deliveries of the old connection are redelivered by the broker and skipped or taken over
// through the store. Errors: kInvalidArgument for a bad URL or options, kFailedPrecondition
// (thrown by receive or publish) for refused credentials, a missing vhost or a queue
// declared with another limit, kUnavailable while the broker is away.
std::unique_ptr<TrialQueue> make_amqp_queue(store::Store& store, std::string worker_id,
                                            std::string_view broker_url,
                                            const AmqpQueueOptions& options = {});

// The AMQP queue when broker_url is given, else the store queue.
std::unique_ptr<TrialQueue> make_queue(store::Store& store, std::string worker_id,
                                       std::string_view broker_url,
                                       const StoreQueueOptions& store_options,
                                       const AmqpQueueOptions& amqp_options);

}  // namespace layerlab::queue
