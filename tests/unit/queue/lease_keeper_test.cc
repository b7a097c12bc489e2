// LeaseKeeper on its own, with a fake renew function.
#include "queue/lease_keeper.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace layerlab::queue {
namespace {

using std::chrono::milliseconds;

// A batch renew function from one that answers lease by lease.
template <typename F>
LeaseKeeper::Renew each(F f) {
  return [f](const std::vector<store::AttemptRef>& attempts) {
    std::vector<bool> out;
    for (const store::AttemptRef& a : attempts) out.push_back(f(a.trial_id, a.attempt));
    return out;
  };
}

// Waits up to 10 s for pred; true if it came.
template <typename P>
bool eventually(P pred) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return pred();
}

TEST(LeaseKeeper, RenewsHeldLeasesUntilRemoved) {
  std::atomic<int> calls_1{0}, calls_2{0};
  LeaseKeeper keeper(each([&](int64_t trial, int attempt) {
                       EXPECT_EQ(attempt, 1);
                       ++(trial == 1 ? calls_1 : calls_2);
                       return true;
                     }),
                     milliseconds(5));
  keeper.add(1, 1);
  keeper.add(2, 1);
  EXPECT_EQ(keeper.held(), 2u);
  EXPECT_TRUE(eventually([&] { return calls_1 >= 3 && calls_2 >= 3; }));
  keeper.remove(1, 1);
  std::this_thread::sleep_for(milliseconds(20));  // let a renewal in flight finish
  int after_remove = calls_1;
  EXPECT_TRUE(eventually([&] { return calls_2 >= after_remove + 3; }));
  EXPECT_EQ(calls_1, after_remove);
  EXPECT_GE(keeper.counts().renewals, 6u);
  EXPECT_FALSE(keeper.lost(2, 1));
}

TEST(LeaseKeeper, ALeaseThatIsNoLongerOursIsReportedLost) {
  LeaseKeeper keeper(each([](int64_t trial, int) { return trial != 7; }), milliseconds(5));
  keeper.add(7, 2);
  keeper.add(8, 1);
  EXPECT_TRUE(eventually([&] { return keeper.lost(7, 2); }));
  EXPECT_FALSE(keeper.lost(8, 1));
  EXPECT_EQ(keeper.held(), 1u);  // no longer renewed
  EXPECT_EQ(keeper.counts().lost, 1u);
  keeper.remove(7, 2);
  EXPECT_FALSE(keeper.lost(7, 2));
}

TEST(LeaseKeeper, ErrorsAreRetriedAtTheNextTick) {
  std::atomic<int> calls{0};
  LeaseKeeper keeper(each([&](int64_t, int) -> bool {
                       if (++calls <= 2) throw std::runtime_error("database is away");
                       return true;
                     }),
                     milliseconds(5));
  keeper.add(1, 1);
  EXPECT_TRUE(eventually([&] { return keeper.counts().renewals >= 1; }));
  EXPECT_EQ(keeper.counts().failures, 2u);
  EXPECT_FALSE(keeper.lost(1, 1));
}

// Every lease held is renewed in one call per tick (one store transaction for a pack),
// ordered by trial; a tick with nothing held calls nothing.
TEST(LeaseKeeper, RenewsAllHeldLeasesInOneCallPerTick) {
  Mutex mu;
  std::vector<std::vector<int64_t>> calls;
  LeaseKeeper keeper(
      [&](const std::vector<store::AttemptRef>& attempts) {
        std::vector<int64_t> trials;
        for (const store::AttemptRef& a : attempts) trials.push_back(a.trial_id);
        MutexLock lock(mu);
        calls.push_back(trials);
        return std::vector<bool>(attempts.size(), true);
      },
      milliseconds(5));
  std::this_thread::sleep_for(milliseconds(30));  // ticks with nothing held
  {
    MutexLock lock(mu);
    EXPECT_TRUE(calls.empty());
  }
  keeper.add(9, 1);
  keeper.add(3, 2);
  keeper.add(5, 1);
  EXPECT_TRUE(eventually([&] { return keeper.counts().renewals >= 9; }));
  keeper.stop();
  MutexLock lock(mu);
  ASSERT_FALSE(calls.empty());
  for (const auto& c : calls) {
    if (c.size() < 3) continue;  // a tick that came while the leases were being added
    EXPECT_EQ(c, (std::vector<int64_t>{3, 5, 9}));
  }
  EXPECT_EQ(calls.back(), (std::vector<int64_t>{3, 5, 9}));
}

TEST(LeaseKeeper, StopsPromptlyAndOnce) {
  // A stop that waited for the next renewal (an hour away) would hang the test.
  std::atomic<int> calls{0};
  {
    LeaseKeeper keeper(each([&](int64_t, int) {
                         ++calls;
                         return true;
                       }),
                       std::chrono::hours(1));
    keeper.add(1, 1);
    keeper.stop();
    keeper.stop();
  }  // and the destructor
  EXPECT_EQ(calls, 0);
}

TEST(LeaseKeeper, AddAndRemoveDoNotWaitForASlowRenewal) {
  std::atomic<bool> in_renew{false};
  std::atomic<bool> release{false};
  LeaseKeeper keeper(each([&](int64_t, int) {
                       in_renew = true;
                       while (!release) std::this_thread::sleep_for(milliseconds(1));
                       return true;
                     }),
                     milliseconds(1));
  keeper.add(1, 1);
  ASSERT_TRUE(eventually([&] { return in_renew.load(); }));
  // The renewal is stuck (a slow database) until released; the training side carries on
  // meanwhile.
  std::atomic<bool> done{false};
  std::thread training([&] {
    keeper.add(2, 1);
    EXPECT_FALSE(keeper.lost(1, 1));
    keeper.remove(2, 1);
    done = true;
  });
  EXPECT_TRUE(eventually([&] { return done.load(); })) << "add/remove waited for the renewal";
  release = true;
  training.join();
}

}  // namespace
}  // namespace layerlab::queue
