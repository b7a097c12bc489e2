// How run's and serve's loops pace their rounds and how many trials serve lets an adaptive
// study hold: the window follows the workers the store knows alive, remote ones included.
#include "cli/coordination.h"

#include <gtest/gtest.h>

#include <string>

namespace layerlab::cli {
namespace {

using std::chrono::milliseconds;

TEST(RoundPace, RoundsComeSoonerWhileAdaptiveStudiesTakeTrials) {
  RoundPace pace(milliseconds(25), milliseconds(2));
  EXPECT_EQ(pace.current(), milliseconds(25));
  EXPECT_EQ(pace.next(0), milliseconds(25));
  EXPECT_EQ(pace.next(4), milliseconds(12));
  EXPECT_EQ(pace.next(1), milliseconds(6));
  EXPECT_EQ(pace.next(3), milliseconds(3));
  EXPECT_EQ(pace.next(2), milliseconds(2));
  EXPECT_EQ(pace.next(2), milliseconds(2));  // never below the shortest
  EXPECT_EQ(pace.next(0), milliseconds(3));  // a round that adds nothing: 1 ms longer...
  EXPECT_EQ(pace.next(0), milliseconds(4));
  EXPECT_EQ(pace.next(0), milliseconds(5));
  EXPECT_EQ(pace.next(5), milliseconds(2));
  for (int i = 0; i < 22; ++i) pace.next(0);
  EXPECT_EQ(pace.current(), milliseconds(24));
  EXPECT_EQ(pace.next(0), milliseconds(25));  // ...up to the longest
  EXPECT_EQ(pace.next(0), milliseconds(25));
  EXPECT_EQ(pace.current(), milliseconds(25));
}

store::WorkerRecord worker(const std::string& id, store::Time heartbeat,
                           store::WorkerStatus status = store::WorkerStatus::kBusy) {
  store::WorkerRecord w;
  w.info.id = id;
  w.heartbeat_at = heartbeat;
  w.status = status;
  return w;
}

TEST(AdaptiveWindow, TwoTrialsForEachLiveWorkerRemoteOnesIncluded) {
  const store::Time now{milliseconds(1'700'000'000'000)};
  EXPECT_EQ(adaptive_window({}, now, 0), 10);  // none known yet: room for one
  EXPECT_EQ(adaptive_window({}, now, 3), 14);  // local workers that have not registered yet
  std::vector<store::WorkerRecord> workers;
  for (int i = 0; i < 40; ++i) workers.push_back(worker("remote-" + std::to_string(i), now));
  workers.push_back(worker("stopped", now, store::WorkerStatus::kStopped));
  workers.push_back(worker("silent", now - std::chrono::hours(1)));
  EXPECT_EQ(adaptive_window(workers, now, 0), 88);
  EXPECT_EQ(adaptive_window(workers, now, 2), 88);    // the local ones are among them
  EXPECT_EQ(adaptive_window(workers, now, 50), 108);  // more local ones starting
}

}  // namespace
}  // namespace layerlab::cli
