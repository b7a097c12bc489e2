// Queue overhead: empty trials per second. P worker processes receive, report and ack trials
// that do no work until N trials are done, committing results as the worker does (up to 32
// per transaction while more are in hand). Prints one JSON line.
//
//   queue_bench [--trials N] [--workers P] [--dir DIR] [--store URL]
//               [--broker amqp://...[?queue=NAME]] [--prefetch K] [--max-prefetch M]
//               [--timeout S]
//
// Without --broker (the default): the store-backed queue; the trials are written as queued
// and the workers claim them from the store. Without --store that store is a fresh SQLite
// file in DIR (removed first).
// With --broker: the parent creates the study and its trials in the store, then publishes
// them through make_amqp_queue (timed on its own: publish_per_second, the broker's
// confirms included); then the P workers, each with its own make_amqp_queue (prefetch K,
// default 1, raised up to M while trials are short when --max-prefetch is given, as a
// worker's default is), receive (which starts the trials in hand in one transaction) ->
// finish (which starts those that came meanwhile in the same transaction) -> ack. A broker
// URL without ?queue= gets a fresh queue name, so runs never share a queue.
// `seconds` runs from just before the workers are forked (everything already published)
// until the last worker has exited, as in the default mode. With --store, the study gets a
// fresh name, so runs can share a database.
// `steady_trials_per_second` leaves out the workers' start (connections, first claims) and
// the end of the queue: the trials finished from the moment the last worker got its first
// trial until 90% of all were done, over that time. It is null when the last worker started
// after half the trials were done (or never got one): the run was mostly start-up.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include "common/error.h"
#include "queue/trial_queue.h"
#include "store/store.h"

namespace {

using namespace layerlab;
using Clock = std::chrono::steady_clock;

// Shared between the parent and the forked workers (MAP_SHARED): trials finished so far, and
// the marks of the steady phase (times in steady_clock nanoseconds, one clock for all
// processes; -1 until reached).
struct Shared {
  std::atomic<int64_t> done{0};
  std::atomic<int> started{0};  // workers that have had a trial
  std::atomic<int64_t> all_started_ns{-1};
  std::atomic<int64_t> done_when_all_started{0};
  int64_t trials = 0;  // set before the fork, as the two below
  int64_t mark90 = 0;  // 90% of the trials
  std::atomic<int64_t> mark90_ns{-1};
  std::atomic<int64_t> all_done_ns{-1};
  int workers = 0;

  static int64_t now_ns() { return Clock::now().time_since_epoch().count(); }
  void finished_one() {
    const int64_t n = done.fetch_add(1) + 1;
    if (n == mark90) mark90_ns = now_ns();
    if (n == trials) all_done_ns = now_ns();
  }
  // A worker's first trial; the last worker's marks the start of the steady phase.
  void worker_started() {
    if (started.fetch_add(1) + 1 != workers) return;
    done_when_all_started = done.load();
    all_started_ns = now_ns();
  }
  // Trials per second in the steady phase, or a negative number when there was none.
  double steady_per_second() const {
    const int64_t from = done_when_all_started.load();
    if (all_started_ns < 0 || mark90_ns <= all_started_ns || 2 * from > trials) return -1;
    return static_cast<double>(mark90 - from) * 1e9 /
           static_cast<double>(mark90_ns - all_started_ns);
  }
};
static_assert(std::atomic<int64_t>::is_always_lock_free);

// Commits results as the worker does (src/worker/slot.cc): several per transaction while
// more deliveries are in hand (TrialQueue::finish, which also starts what the broker sent
// ahead), each acked after the commit.
class Reporter {
 public:
  Reporter(queue::TrialQueue& queue, Shared* shared) : queue_(queue), shared_(shared) {}
  bool empty() const { return pending_.empty(); }
  void add(queue::Delivery d) {
    if (!started_) shared_->worker_started();  // this worker's first trial
    started_ = true;
    pending_.push_back(std::move(d));
    if (pending_.size() >= kMaxBatchedResults) commit();
  }
  void commit() {
    if (pending_.empty()) return;
    std::vector<store::TrialFinish> finishes;
    for (const queue::Delivery& d : pending_)
      finishes.push_back(
          {d.trial_id, d.attempt, store::TrialStatus::kCompleted, nullptr, 1.0, "", {}});
    const std::vector<bool> applied = queue_.finish(finishes);
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (applied[i]) shared_->finished_one();
      queue_.ack(pending_[i]);
    }
    pending_.clear();
  }

 private:
  static constexpr size_t kMaxBatchedResults = 32;  // as the worker's (src/worker/slot.cc)
  queue::TrialQueue& queue_;
  Shared* shared_;
  std::vector<queue::Delivery> pending_;
  bool started_ = false;
};

// Until the queue has had nothing for 50 ms.
int store_queue_work(const std::string& url, int index, Shared* shared) {
  auto store = store::open_store(url);
  auto queue = queue::make_store_queue(*store, "bench-" + std::to_string(index));
  Reporter reporter(*queue, shared);
  while (true) {
    std::optional<queue::Delivery> d = queue->receive(
        reporter.empty() ? std::chrono::milliseconds(50) : std::chrono::milliseconds(0));
    if (d) {
      reporter.add(std::move(*d));
    } else if (reporter.empty()) {
      return 0;
    } else {
      reporter.commit();
    }
  }
}

// Until all `trials` are done (counted across workers in `shared`) or the deadline passes.
int amqp_work(const std::string& url, const std::string& broker, int index, int prefetch,
              int max_prefetch, int64_t trials, Clock::time_point deadline, Shared* shared) {
  try {
    auto store = store::open_store(url);
    queue::AmqpQueueOptions options;
    options.prefetch = prefetch;
    options.max_prefetch = max_prefetch;
    auto queue = queue::make_amqp_queue(*store, "bench-" + std::to_string(index), broker, options);
    Reporter reporter(*queue, shared);
    while (shared->done.load() < trials) {
      if (Clock::now() > deadline) {
        std::cerr << "queue_bench: worker " << index << ": timed out\n";
        return 3;
      }
      std::optional<queue::Delivery> d;
      try {
        d = queue->receive(reporter.empty() ? std::chrono::milliseconds(50)
                                            : std::chrono::milliseconds(0));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnavailable) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (d) {
        reporter.add(std::move(*d));
      } else {
        reporter.commit();
      }
    }
    reporter.commit();
    queue->close();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "queue_bench: worker " << index << ": " << e.what() << "\n";
    return 2;
  }
}

std::string kind_of(const std::string& url) {
  return store::parse_store_url(url).kind == store::StoreUrl::Kind::kPostgres ? "postgresql"
                                                                              : "sqlite";
}

}  // namespace

int main(int argc, char** argv) {
  int64_t trials = 20000;
  int workers = 2;
  int prefetch = 1;
  int max_prefetch = 0;
  double timeout_s = 600;
  std::string dir = "/tmp/layerlab-queue-bench";
  std::string url;
  std::string broker;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "queue_bench: " << flag << " needs a value\n";
      return 2;
    }
    const std::string value = argv[i + 1];
    if (flag == "--trials") {
      trials = std::stoll(value);
    } else if (flag == "--workers") {
      workers = std::stoi(value);
    } else if (flag == "--dir") {
      dir = value;
    } else if (flag == "--store") {
      url = value;
    } else if (flag == "--broker") {
      broker = value;
    } else if (flag == "--prefetch") {
      prefetch = std::stoi(value);
    } else if (flag == "--max-prefetch") {
      max_prefetch = std::stoi(value);
    } else if (flag == "--timeout") {
      timeout_s = std::stod(value);
    } else {
      std::cerr << "queue_bench: unknown option " << flag << "\n";
      return 2;
    }
  }
  if (trials < 1 || workers < 1 || prefetch < 1) {
    std::cerr << "queue_bench: --trials, --workers and --prefetch must be positive\n";
    return 2;
  }
  if (max_prefetch != 0 && max_prefetch <= prefetch) {
    std::cerr << "queue_bench: --max-prefetch must be above --prefetch (or 0: fixed)\n";
    return 2;
  }
  const int64_t stamp = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  std::string study_name = "queue-bench";
  if (url.empty()) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    url = "sqlite:" + dir + "/bench.db";
  } else {
    study_name += "-" + std::to_string(getpid()) + "-" + std::to_string(stamp);
  }
  if (!broker.empty() && broker.find("queue=") == std::string::npos)
    broker += std::string(broker.find('?') == std::string::npos ? "?" : "&") +
              "queue=queue-bench-" + std::to_string(getpid()) + "-" + std::to_string(stamp);

  double add_seconds = 0;
  double publish_seconds = 0;
  {
    // Destroyed before the fork: no connection or thread of the parent's crosses it.
    auto store = store::open_store(url);
    const auto t0 = Clock::now();
    const int64_t study = store->create_study(study_name, nlohmann::json::object());
    std::vector<int64_t> ids;
    ids.reserve(static_cast<size_t>(trials));
    std::vector<store::NewTrial> batch;
    for (int64_t n = 0; n < trials; ++n) {
      batch.push_back({n, "none", nlohmann::json::object()});
      if (batch.size() == 5000 || n + 1 == trials) {
        const auto added = store->add_trials(study, batch);
        ids.insert(ids.end(), added.begin(), added.end());
        batch.clear();
      }
    }
    add_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!broker.empty()) {
      auto queue = queue::make_amqp_queue(*store, "bench-publisher", broker);
      const auto p0 = Clock::now();
      queue->publish(study, ids);
      publish_seconds = std::chrono::duration<double>(Clock::now() - p0).count();
    }
  }

  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("queue_bench: mmap");
    return 1;
  }
  auto* shared = new (mem) Shared;
  shared->workers = workers;
  shared->trials = trials;
  shared->mark90 = std::max<int64_t>(1, trials * 9 / 10);
  std::cout.flush();
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (int w = 0; w < workers; ++w) {
    if (fork() == 0) {
      _exit(broker.empty()
                ? store_queue_work(url, w, shared)
                : amqp_work(url, broker, w, prefetch, max_prefetch, trials, deadline, shared));
    }
  }
  int failures = 0;
  for (int w = 0; w < workers; ++w) {
    int status = 0;
    wait(&status);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Seconds from the fork to a mark, null when it was never reached: where a run's time
  // beyond its steady phase went (start-up, the queue's end, the workers' exit).
  const auto since_start = [&](int64_t ns) {
    if (ns < 0) return std::string("null");
    char text[32];
    std::snprintf(text, sizeof text, "%.3f",
                  static_cast<double>(ns - start.time_since_epoch().count()) / 1e9);
    return std::string(text);
  };
  const double steady = shared->steady_per_second();
  auto store = store::open_store(url);
  const int64_t done =
      store->counts(store->find_study(study_name)->id)[store::TrialStatus::kCompleted];
  std::printf(
      "{\"queue\": \"%s\", \"store\": \"%s\", \"trials\": %lld, \"completed\": %lld, "
      "\"workers\": %d, \"prefetch\": %d, \"max_prefetch\": %d, \"seconds\": %.3f, "
      "\"trials_per_second\": %.0f, \"steady_trials_per_second\": %s, "
      "\"done_when_all_started\": %lld, \"all_started_at\": %s, \"mark90_at\": %s, "
      "\"all_done_at\": %s, "
      "\"add_seconds\": %.3f, \"publish_seconds\": %.3f, \"publish_per_second\": %s, "
      "\"worker_failures\": %d}\n",
      broker.empty() ? "store" : "amqp", kind_of(url).c_str(), static_cast<long long>(trials),
      static_cast<long long>(done), workers, prefetch, max_prefetch, seconds, done / seconds,
      steady < 0 ? "null" : std::to_string(std::lround(steady)).c_str(),
      static_cast<long long>(shared->done_when_all_started.load()),
      since_start(shared->all_started_ns).c_str(), since_start(shared->mark90_ns).c_str(),
      since_start(shared->all_done_ns).c_str(), add_seconds, publish_seconds,
      broker.empty() ? "null"
                     : std::to_string(static_cast<int64_t>(trials / publish_seconds)).c_str(),
      failures);
  return done == trials && failures == 0 ? 0 : 1;
}
