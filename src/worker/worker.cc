// The worker process: one queue connection, and per slot a backend, each slot running the
// loop of slot.h. One slot reports through the queue's connection; several have one each.
#include "worker/worker.h"

#include <unistd.h>

#include <random>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "common/error.h"
#include "queue/trial_queue.h"
#include "worker/backoff.h"
#include "worker/slot.h"

namespace layerlab::worker {
namespace {

using std::chrono::milliseconds;

// Deliveries per slot and pack member held while trials take milliseconds (the AMQP queue's
// max_prefetch): queue_bench, empty trials, 2 workers, AMQP + PostgreSQL, raised from one
// to 8, 16 and 32 gave 2,250-3,000, 3,400-3,600 and 4,000-4,100 trials/s (docs/benchmarks.md).
constexpr int kShortTrialPrefetch = 32;

std::string make_worker_id() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  char suffix[9];
  std::snprintf(suffix, sizeof(suffix), "%08x", rd());
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + suffix;
}

// One slot with its backend, reporting through `store`; `queue` is shared by the slots.
WorkerSummary run_slot(const WorkerOptions& options, const std::atomic<bool>& stop,
                       const std::string& id, queue::TrialQueue& queue, store::Store& store) {
  auto backend = backend::make_backend(options.device, options.threads);
  return Slot(options, stop, id,
              {store, queue, *backend, store::system_clock(), environment_faults()})
      .run();
}

// A slot of several: its own store connection, so that the slots' reports do not queue
// behind one another's.
WorkerSummary run_own_slot(const WorkerOptions& options, const std::atomic<bool>& stop,
                           const std::string& id, queue::TrialQueue& queue) {
  store::StoreOptions so;
  so.stop = &stop;
  auto store = store::open_store(options.store_url, so);
  return run_slot(options, stop, id, queue, *store);
}

}  // namespace

WorkerSummary run_worker(const WorkerOptions& options, const std::atomic<bool>& stop,
                         store::Store& queue_store) {
  if (options.slots < 1) throw invalid_argument("worker: slots must be >= 1");
  if (options.pack < 1) throw invalid_argument("worker: pack must be >= 1");
  const std::string id = make_worker_id();
  // One slot reports through the queue's connection: one database backend per worker, and
  // one connection fewer to set up at start (about 45 ms each beside a study's start, with
  // password authentication). Its reports and the queue's calls come from one thread
  // anyway; the heartbeat (every 2 s) and the lease keeper's renewals (every lease/3) may
  // wait behind one of them.
  // Several slots have a connection each (run_own_slot).
  queue::StoreQueueOptions sq;
  sq.stop = &stop;  // a worker waiting for work leaves within kStopCheck of SIGTERM
  sq.lease = options.lease;
  sq.study_id = options.study_id;
  sq.max_attempts = options.max_attempts;
  sq.min_prefetch = options.pack;
  sq.max_prefetch = std::max(sq.max_prefetch, options.pack);
  queue::AmqpQueueOptions aq;
  aq.stop = &stop;
  // By default one delivery per slot and pack member, raised while trials are short to
  // kShortTrialPrefetch: several batches of results in flight, so the broker sends the next
  // batch while one is committed, and it starts in the same transaction (TrialQueue::finish).
  aq.prefetch = options.prefetch > 0 ? options.prefetch : options.slots * options.pack;
  if (options.prefetch == 0) aq.max_prefetch = std::min(65535, kShortTrialPrefetch * aq.prefetch);
  aq.max_attempts = options.max_attempts;
  aq.lease = options.lease;
  auto queue = queue::make_queue(queue_store, id, options.broker_url, sq, aq);
  auto slot_id = [&](int k) { return options.slots == 1 ? id : id + "/" + std::to_string(k + 1); };
  WorkerSummary total;
  if (options.slots == 1) {
    total = run_slot(options, stop, id, *queue, queue_store);
  } else {
    std::vector<WorkerSummary> sums(static_cast<size_t>(options.slots));
    std::vector<std::exception_ptr> errors(sums.size());
    std::atomic<bool> stop_all{false};
    // A slot that fails stops the others, and the first error is rethrown.
    std::vector<std::thread> slots;
    std::atomic<int> running{options.slots};
    for (int k = 0; k < options.slots; ++k)
      slots.emplace_back([&, k] {
        try {
          sums[static_cast<size_t>(k)] = run_own_slot(options, stop_all, slot_id(k), *queue);
        } catch (...) {
          errors[static_cast<size_t>(k)] = std::current_exception();
          stop_all = true;
        }
        --running;
      });
    while (running > 0) {
      if (stop) stop_all = true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    for (std::thread& t : slots) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    for (const WorkerSummary& w : sums) total += w;
  }
  with_backoff([&] { queue->close(); }, stop);  // hand back what was taken ahead
  return total;
}

}  // namespace layerlab::worker
