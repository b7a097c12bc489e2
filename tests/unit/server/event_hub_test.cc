// The event hub: per-study filtering, a bounded backlog that turns into one resync, close.
#include "server/event_hub.h"

#include <gtest/gtest.h>

namespace layerlab::server {
namespace {

using std::chrono::milliseconds;

TEST(EventHub, DeliversFormattedEventsFilteredByStudy) {
  EventHub hub;
  auto all = hub.subscribe(0, 10);
  auto one = hub.subscribe(7, 10);
  ASSERT_TRUE(all && one);
  hub.publish({{"trial", 7, "{\"id\":1}"}, {"trial", 8, "{\"id\":2}"}, {"worker", 0, "{}"}});
  EXPECT_EQ(all->next(milliseconds(10)).value(),
            "event: trial\ndata: {\"id\":1}\n\nevent: trial\ndata: {\"id\":2}\n\n"
            "event: worker\ndata: {}\n\n");
  EXPECT_EQ(one->next(milliseconds(10)).value(),
            "event: trial\ndata: {\"id\":1}\n\nevent: worker\ndata: {}\n\n");
  EXPECT_FALSE(one->next(milliseconds(10)));  // nothing new
}

TEST(EventHub, ASlowClientGetsOneResyncInsteadOfAnUnboundedBacklog) {
  EventHub hub;
  auto s = hub.subscribe(0, 10);
  std::vector<Event> many(EventHub::kBacklog + 5, Event{"epoch", 1, "{}"});
  hub.publish(many);
  EXPECT_EQ(s->next(milliseconds(10)).value(), "event: resync\ndata: {}\n\n");
  hub.publish({{"trial", 1, "{}"}});
  EXPECT_EQ(s->next(milliseconds(10)).value(), "event: trial\ndata: {}\n\n");
}

TEST(EventHub, LimitsClientsAndClosesEveryStream) {
  EventHub hub;
  auto a = hub.subscribe(0, 2);
  auto b = hub.subscribe(0, 2);
  EXPECT_FALSE(hub.subscribe(0, 2));
  EXPECT_EQ(hub.clients(), 2u);
  hub.unsubscribe(b);
  EXPECT_EQ(hub.clients(), 1u);
  hub.close();
  EXPECT_FALSE(a->next(milliseconds(1000)));  // returns at once
  EXPECT_TRUE(a->closed());
  EXPECT_FALSE(hub.subscribe(0, 2));
}

}  // namespace
}  // namespace layerlab::server
