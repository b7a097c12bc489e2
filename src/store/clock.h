// The wall clock the store reads (timestamps, lease expiry), behind an interface so that a
// test can move time instead of sleeping (after leveldb's Env).
#pragma once

#include <atomic>
#include <chrono>

#include "store/records.h"

namespace layerlab::store {

// Thread-safe: now() may be called from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
};

// The system clock (shared, never destroyed).
Clock& system_clock();

// A clock that moves only when told to; starts at `start`. Thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Time start = Time{std::chrono::milliseconds{1'700'000'000'000}})
      : ms_(start.time_since_epoch().count()) {}
  Time now() const override { return Time{std::chrono::milliseconds{ms_.load()}}; }
  void advance(std::chrono::milliseconds d) { ms_ += d.count(); }

 private:
  std::atomic<int64_t> ms_;
};

}  // namespace layerlab::store
