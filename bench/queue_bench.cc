// Queue overhead: empty trials per second through the store-backed queue. P worker
// processes claim (receive), report (finish_trial) and ack trials that do no work, on one
// SQLite file, until N trials are done. Prints one JSON line.
//   queue_bench [--trials N] [--workers P] [--dir DIR]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "queue/trial_queue.h"
#include "store/store.h"

namespace {

using namespace layerlab;

int work(const std::string& url, int index) {
  auto store = store::open_store(url);
  auto queue = queue::make_store_queue(*store, "bench-" + std::to_string(index));
  while (auto d = queue->receive(std::chrono::milliseconds(50))) {
    store->finish_trial(d->trial_id, d->attempt, store::TrialStatus::kCompleted, nullptr, 1.0, "");
    queue->ack(*d);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t trials = 20000;
  int workers = 2;
  std::string dir = "/tmp/layerlab-queue-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--trials") trials = std::stoll(argv[i + 1]);
    if (flag == "--workers") workers = std::stoi(argv[i + 1]);
    if (flag == "--dir") dir = argv[i + 1];
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string url = "sqlite:" + dir + "/bench.db";
  {
    auto store = store::open_store(url);
    const int64_t study = store->create_study("queue-bench", nlohmann::json::object());
    std::vector<store::NewTrial> batch;
    for (int64_t n = 0; n < trials; ++n) {
      batch.push_back({n, "none", nlohmann::json::object()});
      if (batch.size() == 5000 || n + 1 == trials) {
        store->add_trials(study, batch);
        batch.clear();
      }
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < workers; ++w)
    if (fork() == 0) _exit(work(url, w));
  int failures = 0;
  for (int w = 0; w < workers; ++w) {
    int status = 0;
    wait(&status);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto store = store::open_store(url);
  const int64_t done =
      store->counts(store->find_study("queue-bench")->id)[store::TrialStatus::kCompleted];
  std::printf(
      "{\"trials\": %lld, \"completed\": %lld, \"workers\": %d, \"seconds\": %.3f, "
      "\"trials_per_second\": %.0f, \"worker_failures\": %d}\n",
      static_cast<long long>(trials), static_cast<long long>(done), workers, seconds,
      done / seconds, failures);
  return done == trials && failures == 0 ? 0 : 1;
}
