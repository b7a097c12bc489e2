// How a coordinator's loop (`run`, `serve`) paces its rounds and sizes an adaptive study's
// window. Both loops share these so that a study behaves the same under either command.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "store/records.h"

namespace layerlab::cli {

// The wait between a coordinator's rounds. An adaptive study holds about 2 trials per worker
// in flight and a round adds only what finished since the last: while rounds keep finding
// room, its trials take less than a round and the workers wait for the next, so rounds come
// sooner (halving down to `shortest`), and a round that adds nothing lengthens the wait by
// 1 ms (up to `longest`) rather than restoring it at once: the window filled by one round is
// often still being trained at the next, a few milliseconds later, and free again soon
// after. (Doubling instead found a window of 13 ms trials up to 16 ms late, a third of
// each cycle; a 1 s trial is still seen within about 45 ms, after about 45 rounds.)
class RoundPace {
 public:
  RoundPace(std::chrono::milliseconds longest, std::chrono::milliseconds shortest);
  // The wait before the next round, given how many trials this round gave studies whose
  // workers wait for rounds (adaptive ones; under serve with a broker, also those whose
  // publish window the workers drained: CoordinatorPool::step).
  std::chrono::milliseconds next(int64_t adaptive_added);
  std::chrono::milliseconds current() const { return current_; }

 private:
  std::chrono::milliseconds longest_, shortest_, current_;
};

// Trials an adaptive study of `serve` may hold queued or running: 2 for each worker that
// trains, counting the live workers registered in the store (remote ones included) or the
// local ones if more (they may not have registered yet), and 8 more for workers joining
// between two looks at the store.
int64_t adaptive_window(const std::vector<store::WorkerRecord>& workers, store::Time now,
                        int local_workers);

}  // namespace layerlab::cli
