#include "cli/coordination.h"

#include <algorithm>

#include "analysis/views.h"

namespace layerlab::cli {

RoundPace::RoundPace(std::chrono::milliseconds longest, std::chrono::milliseconds shortest)
    : longest_(longest), shortest_(std::min(shortest, longest)), current_(longest) {}

std::chrono::milliseconds RoundPace::next(int64_t adaptive_added) {
  current_ = adaptive_added > 0 ? std::max(current_ / 2, shortest_)
                                : std::min(current_ + std::chrono::milliseconds(1), longest_);
  return current_;
}

int64_t adaptive_window(const std::vector<store::WorkerRecord>& workers, store::Time now,
                        int local_workers) {
  const auto live = std::count_if(workers.begin(), workers.end(),
                                  [&](const auto& w) { return analysis::worker_alive(w, now); });
  return 2 * std::max<int64_t>({live, local_workers, 1}) + 8;
}

}  // namespace layerlab::cli
