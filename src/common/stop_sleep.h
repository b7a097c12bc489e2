// Sleeps that a stop flag (SIGINT, SIGTERM) cuts short.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace layerlab {

// How often a sleep looks at its stop flag: a process told to stop leaves that soon, not
// when the wait it asked for runs out.
inline constexpr std::chrono::milliseconds kStopCheck{20};

// Sleeps until `until`, or until *stop is set (nullptr: no flag). True when stopped.
inline bool sleep_until_unless(const std::atomic<bool>* stop,
                               std::chrono::steady_clock::time_point until) {
  for (;;) {
    if (stop && *stop) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - now, kStopCheck));
  }
}

inline bool sleep_unless(const std::atomic<bool>* stop, std::chrono::milliseconds d) {
  return sleep_until_unless(stop, std::chrono::steady_clock::now() + d);
}

}  // namespace layerlab
