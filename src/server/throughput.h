// Throughput monitoring: the queue's depth sampled over time (the store keeps no history of
// it), and the JSON of /api/v1/throughput (finished trials per worker and time bucket, from
// the attempts the store records, and the queue samples in the same buckets).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "store/records.h"

namespace layerlab::server {

struct QueueSample {
  store::Time at{};
  int64_t depth = 0;      // queued trials of running studies
  int64_t in_flight = 0;  // running trials of running studies
};

// The last `capacity` samples, oldest first; the server adds one every
// ServerOptions::queue_sample (10 s: a day's worth fits in the default capacity). Samples
// live in the server's memory: a restarted server starts a new history. Thread-safe.
class QueueHistory {
 public:
  static constexpr size_t kDefaultCapacity = 8640;
  explicit QueueHistory(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  void add(const QueueSample& s);
  // Samples taken at or after `from`, oldest first.
  std::vector<QueueSample> since(store::Time from) const;
  size_t size() const;

 private:
  const size_t capacity_;
  mutable Mutex mu_;
  std::deque<QueueSample> samples_ GUARDED_BY(mu_);
};

// Bodies of the monitoring routes (/workers, /throughput), kept for `ttl` per parsed request
// (cache_key), so that dashboards polling the same view cost one read of the attempts per
// ttl between them (a read that scans the window's attempts: a fraction of a second at
// 200,000). At most `capacity` keys: when full, expired ones go, then the oldest. Thread-safe;
// `make` runs outside the lock (two requests at once may both make the body).
class TtlCache {
 public:
  TtlCache(std::chrono::milliseconds ttl, size_t capacity) : ttl_(ttl), capacity_(capacity) {}

  std::shared_ptr<const std::string> get(const std::string& key, store::Time now,
                                         const std::function<std::string()>& make);

 private:
  struct Entry {
    store::Time made{};
    std::shared_ptr<const std::string> body;
  };
  const std::chrono::milliseconds ttl_;
  const size_t capacity_;
  Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
};

// The window of /api/v1/throughput: `buckets` buckets of `bucket` ending at `to` (the
// last bucket ends at `to`, so the newest bucket is partial only up to now).
struct ThroughputWindow {
  store::Time from{};
  std::chrono::milliseconds bucket{60'000};
  int buckets = 60;
  size_t max_workers = 10;  // series for the busiest workers; the rest are summed as one
};

// {"from", "to", "bucket_seconds", "buckets": [start times], "workers": [{"worker", "done":
// [...], "failed": [...], "lost": [...], "finished": total}], "other_workers": {"count",
// "done", "failed", "lost"} | null, "total": [finished per bucket], "queue": {"sample_seconds",
// "depth": [last sample in each bucket, or null], "in_flight": [...]}}. Workers are the
// `max_workers` with the most finished (done + failed) attempts in the window, most first
// (ties by id); the others are summed into other_workers, so the size is bounded by
// max_workers x buckets whatever the number of workers.
nlohmann::json throughput_json(const ThroughputWindow& w,
                               const std::vector<store::FinishedSeries>& series,
                               const std::vector<QueueSample>& queue,
                               std::chrono::milliseconds sample_every);

}  // namespace layerlab::server
