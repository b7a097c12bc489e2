// Retrying the calls of the worker loop while the store or broker is away. Private to
// src/worker/.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include "common/error.h"
#include "common/stop_sleep.h"

namespace layerlab::worker {

// The store or broker is away (kUnavailable, kAborted): the same call may succeed later.
inline bool retryable(const Error& e) {
  return e.code() == ErrorCode::kUnavailable || e.code() == ErrorCode::kAborted;
}

// Calls fn until it does not throw a retryable error, backing off (jittered, doubling to
// 5 s). Gives up with the last error after `limit`, and once `stop` is set gives up on a
// service that is away (kUnavailable) at once: a worker told to stop does not wait for it
// (what it holds goes back when its leases run out). A lost race (kAborted) is still
// retried then.
template <typename F>
auto with_backoff(F&& fn, const std::atomic<bool>& stop,
                  std::chrono::seconds limit = std::chrono::seconds(600)) {
  using std::chrono::milliseconds;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + limit;
  milliseconds wait{50};
  std::minstd_rand jitter(static_cast<unsigned>(getpid()));
  for (;;) {
    try {
      return fn();
    } catch (const Error& e) {
      if (!retryable(e) || Clock::now() > deadline) throw;
      if (stop && e.code() == ErrorCode::kUnavailable) throw;
    }
    const milliseconds pause = wait + milliseconds(jitter() % (wait.count() / 2 + 1));
    sleep_unless(&stop, pause);  // then the next try, once, if the service is away
    wait = std::min(wait * 2, milliseconds(5000));
  }
}

}  // namespace layerlab::worker
