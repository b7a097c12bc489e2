#include "queue/lease_keeper.h"

#include <vector>

#include "common/error.h"

namespace layerlab::queue {

LeaseKeeper::LeaseKeeper(Renew renew, std::chrono::milliseconds interval)
    : renew_(std::move(renew)), interval_(interval) {
  if (!renew_) throw invalid_argument("LeaseKeeper: no renew function");
  if (interval_.count() <= 0) throw invalid_argument("LeaseKeeper: the interval must be > 0");
  thread_ = std::thread([this] { run(); });
}

LeaseKeeper::~LeaseKeeper() {
  stop();
}

void LeaseKeeper::add(int64_t trial_id, int attempt) {
  MutexLock lock(mu_);
  held_.insert({trial_id, attempt});
}

void LeaseKeeper::remove(int64_t trial_id, int attempt) {
  MutexLock lock(mu_);
  held_.erase({trial_id, attempt});
  lost_.erase({trial_id, attempt});
}

bool LeaseKeeper::lost(int64_t trial_id, int attempt) const {
  MutexLock lock(mu_);
  return lost_.count({trial_id, attempt}) > 0;
}

size_t LeaseKeeper::held() const {
  MutexLock lock(mu_);
  return held_.size();
}

LeaseKeeper::Counts LeaseKeeper::counts() const {
  MutexLock lock(mu_);
  return counts_;
}

void LeaseKeeper::stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void LeaseKeeper::run() {
  MutexLock lock(mu_);
  auto next = std::chrono::steady_clock::now() + interval_;
  while (!stopping_) {
    if (wake_.wait_until(lock.native(), next, [this]() REQUIRES(mu_) { return stopping_; })) break;
    next = std::chrono::steady_clock::now() + interval_;
    std::vector<store::AttemptRef> due;
    for (const Key& k : held_) due.push_back({k.first, k.second});
    if (due.empty()) continue;
    lock.unlock();
    // Renew outside the lock: add/remove/lost stay free while the store is slow.
    std::vector<bool> renewed;
    bool failed = false;
    try {
      renewed = renew_(due);
    } catch (...) {
      failed = true;  // the store or broker is away: try again at the next tick
    }
    lock.lock();
    if (failed) {
      counts_.failures += due.size();
      continue;
    }
    // A renew function that answers for other leases than it was given is a bug, not a
    // store that is away: it ends the process rather than let leases lapse unnoticed.
    if (renewed.size() != due.size())
      throw internal_error("LeaseKeeper: the renew function answered " +
                           std::to_string(renewed.size()) + " of " + std::to_string(due.size()) +
                           " leases");
    for (size_t i = 0; i < due.size(); ++i) {
      if (renewed[i]) {
        ++counts_.renewals;
        continue;
      }
      ++counts_.lost;
      const Key k{due[i].trial_id, due[i].attempt};
      if (held_.erase(k)) lost_.insert(k);  // not if removed meanwhile
    }
  }
}

}  // namespace layerlab::queue
