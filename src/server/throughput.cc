#include "server/throughput.h"

#include <algorithm>
#include <numeric>

#include "analysis/views.h"

namespace layerlab::server {

using nlohmann::json;

void QueueHistory::add(const QueueSample& s) {
  MutexLock lock(mu_);
  samples_.push_back(s);
  while (samples_.size() > capacity_) samples_.pop_front();
}

std::vector<QueueSample> QueueHistory::since(store::Time from) const {
  MutexLock lock(mu_);
  auto first = std::lower_bound(samples_.begin(), samples_.end(), from,
                                [](const QueueSample& s, store::Time t) { return s.at < t; });
  return {first, samples_.end()};
}

size_t QueueHistory::size() const {
  MutexLock lock(mu_);
  return samples_.size();
}

std::shared_ptr<const std::string> TtlCache::get(const std::string& key, store::Time now,
                                                 const std::function<std::string()>& make) {
  {
    MutexLock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && now - it->second.made < ttl_ && now >= it->second.made)
      return it->second.body;
  }
  auto body = std::make_shared<const std::string>(make());
  MutexLock lock(mu_);
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    std::erase_if(entries_, [&](const auto& e) { return now - e.second.made >= ttl_; });
    if (entries_.size() >= capacity_) {
      auto oldest = std::min_element(
          entries_.begin(), entries_.end(),
          [](const auto& a, const auto& b) { return a.second.made < b.second.made; });
      entries_.erase(oldest);
    }
  }
  entries_[key] = {now, body};
  return body;
}

namespace {

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

void add_into(std::vector<int64_t>& into, const std::vector<int64_t>& v) {
  for (size_t i = 0; i < into.size() && i < v.size(); ++i) into[i] += v[i];
}

}  // namespace

json throughput_json(const ThroughputWindow& w, const std::vector<store::FinishedSeries>& series,
                     const std::vector<QueueSample>& queue,
                     std::chrono::milliseconds sample_every) {
  const auto n = static_cast<size_t>(w.buckets);
  const store::Time to = w.from + w.bucket * w.buckets;
  json starts = json::array();
  for (size_t i = 0; i < n; ++i)
    starts.push_back(analysis::iso_time(w.from + w.bucket * static_cast<int64_t>(i)));

  // The busiest first, ties by id (the store gives them by id; stable_sort keeps that).
  std::vector<const store::FinishedSeries*> order;
  for (const store::FinishedSeries& s : series) order.push_back(&s);
  auto finished = [](const store::FinishedSeries* s) { return sum(s->done) + sum(s->failed); };
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto* a, const auto* b) { return finished(a) > finished(b); });

  std::vector<int64_t> total(n, 0);
  json workers = json::array();
  std::vector<int64_t> other_done(n, 0), other_failed(n, 0), other_lost(n, 0);
  size_t others = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const store::FinishedSeries& s = *order[k];
    add_into(total, s.done);
    add_into(total, s.failed);
    if (k < w.max_workers) {
      workers.push_back({{"worker", s.worker_id},
                         {"done", s.done},
                         {"failed", s.failed},
                         {"lost", s.lost},
                         {"finished", finished(&s)}});
    } else {
      ++others;
      add_into(other_done, s.done);
      add_into(other_failed, s.failed);
      add_into(other_lost, s.lost);
    }
  }
  json other = nullptr;
  if (others > 0)
    other = {{"count", others},
             {"done", other_done},
             {"failed", other_failed},
             {"lost", other_lost},
             {"finished", sum(other_done) + sum(other_failed)}};

  // The queue: the last sample taken in each bucket (null where none was: before the
  // server started, or a bucket shorter than the sampling interval).
  json depth = json::array(), in_flight = json::array();
  std::vector<const QueueSample*> last(n, nullptr);
  for (const QueueSample& s : queue) {
    if (s.at < w.from || s.at >= to) continue;
    last[static_cast<size_t>((s.at - w.from) / w.bucket)] = &s;
  }
  for (const QueueSample* s : last) {
    depth.push_back(s ? json(s->depth) : json(nullptr));
    in_flight.push_back(s ? json(s->in_flight) : json(nullptr));
  }

  return {{"from", analysis::iso_time(w.from)},
          {"to", analysis::iso_time(to)},
          {"bucket_seconds", std::chrono::duration<double>(w.bucket).count()},
          {"buckets", std::move(starts)},
          {"workers", std::move(workers)},
          {"other_workers", std::move(other)},
          {"total", std::move(total)},
          {"queue",
           {{"sample_seconds", std::chrono::duration<double>(sample_every).count()},
            {"depth", std::move(depth)},
            {"in_flight", std::move(in_flight)}}}};
}

}  // namespace layerlab::server
