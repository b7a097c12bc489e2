// LeaseKeeper: renews the leases of the trials a worker holds, on a thread of its own, so
// that a training step longer than the lease never lets a live trial expire, and a dead
// worker's leases do expire (the thread dies with the process).
//
// Thread-safety: add(), remove(), lost(), held(), counts() and stop() may be called from
// any thread. The renew function runs only on the keeper's thread and never under the
// keeper's lock, so callers of add/remove/lost never wait for a renewal (and training
// threads, which never hold anything the keeper needs, never block it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "store/records.h"

namespace layerlab::queue {

class LeaseKeeper {
 public:
  // renew(attempts): extends the leases of every attempt held, in one call (one store
  // transaction), ordered by trial; element i false when attempts[i]'s lease is no longer
  // ours (it is then reported by lost() and no longer renewed). An exception (database
  // away) is counted in counts().failures, once per lease, and they are all tried again at
  // the next tick.
  using Renew = std::function<std::vector<bool>(const std::vector<store::AttemptRef>& attempts)>;

  // Starts the thread; every `interval` it renews the held leases (use lease / 3).
  LeaseKeeper(Renew renew, std::chrono::milliseconds interval);
  ~LeaseKeeper();  // stop()
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  void add(int64_t trial_id, int attempt) EXCLUDES(mu_);     // start renewing
  void remove(int64_t trial_id, int attempt) EXCLUDES(mu_);  // stop renewing (acked or handed back)
  bool lost(int64_t trial_id, int attempt) const EXCLUDES(mu_);
  size_t held() const EXCLUDES(mu_);  // leases being renewed

  struct Counts {
    uint64_t renewals = 0;  // leases renewed
    uint64_t failures = 0;  // leases whose renew call threw
    uint64_t lost = 0;      // leases found no longer ours
  };
  Counts counts() const EXCLUDES(mu_);

  // Stops and joins the thread; idempotent. Leases are no longer renewed afterwards.
  void stop() EXCLUDES(mu_);

 private:
  using Key = std::pair<int64_t, int>;
  void run() EXCLUDES(mu_);

  const Renew renew_;
  const std::chrono::milliseconds interval_;
  mutable Mutex mu_;
  std::condition_variable wake_;
  std::set<Key> held_ GUARDED_BY(mu_);
  std::set<Key> lost_ GUARDED_BY(mu_);  // removed by remove()
  Counts counts_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // started last, joined by stop()
};

}  // namespace layerlab::queue
