// The event hub: per-study filtering, a bounded backlog that turns into one resync, limits
// in total and per client, wake-ups for suspended connections, close.
#include "server/event_hub.h"

#include <gtest/gtest.h>

namespace layerlab::server {
namespace {

constexpr EventHub::Limits kRoomy{10, 10};
constexpr const char* kGreeting = "retry: 2000\n\n";

// What the stream has to send now.
std::string take(EventHub::Subscription& s) {
  std::string out;
  s.read(out);
  return out;
}

TEST(EventHub, DeliversFormattedEventsFilteredByStudy) {
  EventHub hub;
  auto all = hub.subscribe(0, "a", kRoomy).stream;
  auto one = hub.subscribe(7, "a", kRoomy).stream;
  ASSERT_TRUE(all && one);
  EXPECT_EQ(take(*all), kGreeting);
  EXPECT_EQ(take(*one), kGreeting);
  hub.publish({{"trial", 7, "{\"id\":1}"}, {"trial", 8, "{\"id\":2}"}, {"worker", 0, "{}"}});
  EXPECT_EQ(take(*all),
            "event: trial\ndata: {\"id\":1}\n\nevent: trial\ndata: {\"id\":2}\n\n"
            "event: worker\ndata: {}\n\n");
  EXPECT_EQ(take(*one), "event: trial\ndata: {\"id\":1}\n\nevent: worker\ndata: {}\n\n");
  EXPECT_EQ(take(*one), "");  // nothing new
}

TEST(EventHub, ASlowClientGetsOneResyncInsteadOfAnUnboundedBacklog) {
  EventHub hub;
  auto s = hub.subscribe(0, "a", kRoomy).stream;
  take(*s);
  std::vector<Event> many(EventHub::kBacklog + 5, Event{"epoch", 1, "{}"});
  hub.publish(many);
  EXPECT_EQ(take(*s), "event: resync\ndata: {}\n\n");
  hub.publish({{"trial", 1, "{}"}});
  EXPECT_EQ(take(*s), "event: trial\ndata: {}\n\n");
}

TEST(EventHub, LimitsClientsInTotalAndPerClient) {
  EventHub hub;
  const EventHub::Limits limits{3, 2};
  auto a = hub.subscribe(0, "10.0.0.1", limits);
  auto b = hub.subscribe(0, "10.0.0.1", limits);
  ASSERT_TRUE(a.stream && b.stream);
  EXPECT_EQ(hub.subscribe(0, "10.0.0.1", limits).refusal, EventHub::Refusal::kPerClient);
  auto c = hub.subscribe(0, "10.0.0.2", limits);
  ASSERT_TRUE(c.stream);
  EXPECT_EQ(hub.subscribe(0, "10.0.0.3", limits).refusal, EventHub::Refusal::kTotal);
  EXPECT_EQ(hub.clients(), 3u);
  b.stream->close();  // the connection went away: its places are free again
  EXPECT_EQ(hub.clients(), 2u);
  EXPECT_TRUE(hub.subscribe(0, "10.0.0.1", limits).stream);
}

TEST(EventHub, WakesItsConnectionWhenThereIsSomethingToSend) {
  EventHub hub;
  auto s = hub.subscribe(3, "a", kRoomy).stream;
  int wakes = 0;
  s->on_ready([&] { ++wakes; });
  EXPECT_EQ(wakes, 0);
  hub.publish({{"trial", 4, "{}"}});  // another study's: no wake
  EXPECT_EQ(wakes, 0);
  hub.publish({{"trial", 3, "{}"}});
  EXPECT_EQ(wakes, 1);
  hub.ping();
  EXPECT_EQ(wakes, 2);
  EXPECT_EQ(take(*s), std::string(kGreeting) + "event: trial\ndata: {}\n\n: ping\n\n");
  // Registered after something arrived: woken at once.
  hub.publish({{"trial", 3, "{}"}});
  int late = 0;
  s->on_ready([&] { ++late; });
  EXPECT_EQ(late, 1);
}

TEST(EventHub, CloseEndsEveryStreamAndRefusesNewOnes) {
  EventHub hub;
  auto a = hub.subscribe(0, "a", kRoomy).stream;
  int wakes = 0;
  a->on_ready([&] { ++wakes; });
  hub.close();
  EXPECT_EQ(wakes, 1);
  std::string out;
  EXPECT_FALSE(a->read(out));  // ended, after the greeting
  EXPECT_EQ(out, kGreeting);
  hub.publish({{"trial", 1, "{}"}});
  EXPECT_EQ(wakes, 1);  // nothing wakes a stream after close
  EXPECT_EQ(hub.subscribe(0, "a", kRoomy).refusal, EventHub::Refusal::kClosed);
}

}  // namespace
}  // namespace layerlab::server
