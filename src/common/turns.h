// Turns: at most `running` holders at once and at most `waiting` callers waiting for a turn
// (each at most `longest_wait`); past that a caller is refused at once. Bounds how many
// threads an expensive kind of work can hold, so the others stay free for everything else.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>

#include "common/mutex.h"

namespace layerlab {

class Turns {
 public:
  struct Limits {
    size_t running = 1;
    size_t waiting = 1;
    std::chrono::milliseconds longest_wait{10'000};
  };

  explicit Turns(Limits limits) : limits_(limits) {}

  // A turn held until destroyed.
  class Turn {
   public:
    explicit Turn(Turns& t) : turns_(t) {}
    ~Turn() { turns_.release(); }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    Turns& turns_;
  };

  // True when a turn was taken (release it with Turn), false when the waiting room is full
  // or the wait was too long.
  bool take() {
    MutexLock lock(mu_);
    if (running_ >= limits_.running) {
      if (waiting_ >= limits_.waiting) return false;
      ++waiting_;
      const bool free =
          freed_.wait_for(lock.native(), limits_.longest_wait,
                          [this]() REQUIRES(mu_) { return running_ < limits_.running; });
      --waiting_;
      if (!free) return false;
    }
    ++running_;
    return true;
  }

  const Limits& limits() const { return limits_; }

 private:
  void release() {
    {
      MutexLock lock(mu_);
      --running_;
    }
    freed_.notify_one();
  }

  const Limits limits_;
  Mutex mu_;
  size_t running_ GUARDED_BY(mu_) = 0;
  size_t waiting_ GUARDED_BY(mu_) = 0;
  std::condition_variable freed_;
};

}  // namespace layerlab
