// The RabbitMQ TrialQueue against a real broker (a private rabbitmq-server started by
// tests/support/rabbitmq_service.h) and a SQLite store: delivery, acknowledgement after
// commit, redeliveries of finished trials, hand-backs that do not use up deliveries, the
// delivery limit and dead letters, and the errors a user can cause.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/error.h"
#include "queue/amqp_connection.h"
#include "queue/trial_queue.h"
#include "store/store.h"
#include "support/rabbitmq_service.h"
#include "support/tcp_relay.h"
#include "support/temp_and_errors.h"

namespace layerlab::queue {
namespace {

using ::layerlab::testing::RabbitMqService;
using ::layerlab::testing::TempDir;
using ::layerlab::testing::throws_error;
using std::chrono::milliseconds;

constexpr milliseconds kWait{5000};

class AmqpQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // One queue per test on the shared broker.
    url_ = RabbitMqService::instance().url() + "?queue=t." + info->name();
    study_ = store_->create_study("s", {{"metric", "val_accuracy"}});
  }

  std::vector<int64_t> add(int n) {
    std::vector<store::NewTrial> trials;
    for (int i = 0; i < n; ++i) trials.push_back({next_++, "iris", {{"units", 8}}});
    return store_->add_trials(study_, trials);
  }

  std::unique_ptr<TrialQueue> queue(const std::string& worker, int max_attempts = 3,
                                    int prefetch = 1, int max_prefetch = 0) {
    AmqpQueueOptions o;
    o.max_attempts = max_attempts;
    o.prefetch = prefetch;
    o.max_prefetch = max_prefetch;
    return make_amqp_queue(*store_, worker, url_, o);
  }

  // Trials of `ids` that the store has running: started by a receive() batch.
  int running(const std::vector<int64_t>& ids) {
    int n = 0;
    for (int64_t id : ids) n += store_->get_trial(id).status == store::TrialStatus::kRunning;
    return n;
  }

  void finish(const Delivery& d) {
    ASSERT_TRUE(store_->finish_trial(d.trial_id, d.attempt, store::TrialStatus::kCompleted,
                                     {{"ok", true}}, 0.5, ""));
  }

  // Messages in a queue of this test (ready + unacked, or another list_queues column);
  // quorum queue depths lag, so poll.
  long depth(const std::string& suffix, long want, const std::string& column = "messages") {
    const std::string name =
        "t." + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
        suffix;
    long n = -1;
    for (int i = 0; i < 100; ++i) {
      n = RabbitMqService::instance().queue_messages(column)[name];
      if (n == want) break;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return n;
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_ = store::open_store("sqlite:" + dir_.path("q.db"));
  std::string url_;
  int64_t study_ = 0;
  int64_t next_ = 0;
};

TEST_F(AmqpQueueTest, DeliversEachPublishedTrialOnceAndStartsItInTheStore) {
  const auto ids = add(5);
  queue("coordinator")->publish(study_, ids);
  auto q = queue("w1");
  std::set<int64_t> seen;
  for (int i = 0; i < 5; ++i) {
    auto d = q->receive(kWait);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->attempt, 1);
    EXPECT_EQ(d->dataset, "iris");
    EXPECT_EQ(d->params["units"], 8);
    EXPECT_EQ(store_->get_trial(d->trial_id).status, store::TrialStatus::kRunning);
    EXPECT_TRUE(seen.insert(d->trial_id).second);
    finish(*d);
    q->ack(*d);
  }
  EXPECT_EQ(seen, std::set<int64_t>(ids.begin(), ids.end()));
  EXPECT_FALSE(q->receive(milliseconds(300)));
  EXPECT_EQ(depth("", 0), 0);
}

// A worker died after committing and before acking: the redelivery is acknowledged
// without running the trial again.
TEST_F(AmqpQueueTest, ARedeliveryOfACommittedTrialIsSkipped) {
  const auto ids = add(2);
  queue("coordinator")->publish(study_, ids);
  {
    auto dying = queue("dying");
    auto d = dying->receive(kWait);
    ASSERT_TRUE(d);
    finish(*d);
  }  // closed without ack: the broker requeues it
  auto q = queue("w2");
  auto d = q->receive(kWait);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->trial_id, ids[1]) << "the committed trial must not be handed out again";
  EXPECT_EQ(d->attempt, 1);
  finish(*d);
  q->ack(*d);
  EXPECT_FALSE(q->receive(milliseconds(500)));
  EXPECT_EQ(store_->list_attempts(ids[0]).size(), 1u);
}

// A worker died mid-trial: the next delivery loses its attempt and starts the next one;
// the dead worker's late result is refused.
TEST_F(AmqpQueueTest, ARedeliveryOfARunningTrialTakesItOver) {
  const auto ids = add(1);
  queue("coordinator")->publish(study_, ids);
  std::optional<Delivery> first;
  {
    auto dying = queue("dying");
    first = dying->receive(kWait);
    ASSERT_TRUE(first);
  }
  auto q = queue("w2");
  auto d = q->receive(kWait);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->attempt, 2);
  EXPECT_FALSE(store_->finish_trial(first->trial_id, first->attempt, store::TrialStatus::kCompleted,
                                    {}, 0.1, ""));
  finish(*d);
  q->ack(*d);
  const auto attempts = store_->list_attempts(ids[0]);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].outcome, "lost");
  EXPECT_EQ(attempts[1].outcome, "completed");
}

// SIGTERM hands trials back; that must not count against the delivery limit.
TEST_F(AmqpQueueTest, HandBacksDoNotUseUpDeliveries) {
  const auto ids = add(1);
  queue("coordinator", 2)->publish(study_, ids);
  auto q = queue("w1", 2);
  for (int i = 0; i < 4; ++i) {
    auto d = q->receive(kWait);
    ASSERT_TRUE(d) << "hand-back " << i;
    EXPECT_EQ(store_->get_trial(ids[0]).status, store::TrialStatus::kRunning);
    q->requeue(*d);
    EXPECT_EQ(store_->get_trial(ids[0]).status, store::TrialStatus::kQueued);
  }
  auto d = q->receive(kWait);
  ASSERT_TRUE(d);
  finish(*d);
  q->ack(*d);
  for (const auto& a : store_->list_attempts(ids[0]))
    EXPECT_TRUE(a.outcome == "released" || a.outcome == "completed") << a.outcome;
  EXPECT_EQ(depth(".dead", 0), 0);
}

// A hand-back while the broker is away (a worker stopped during an outage): released in
// the store, no copy can be published, so the original is left unacked for the broker to
// put back when the connection closes; it must not throw (the worker would report the trial
// as not handed back) nor ever ack the original without a copy.
TEST_F(AmqpQueueTest, AHandBackWithTheBrokerAwayLeavesTheOriginalToTheBroker) {
  const auto ids = add(1);
  queue("coordinator")->publish(study_, ids);
  auto relay = std::make_unique<testing::TcpRelay>("127.0.0.1", RabbitMqService::instance().port());
  const std::string relayed = "amqp://guest:guest@127.0.0.1:" + std::to_string(relay->port()) +
                              "/%2f?queue=t." +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name();
  AmqpQueueOptions o;
  auto q = make_amqp_queue(*store_, "w1", relayed, o);
  auto d = q->receive(kWait);
  ASSERT_TRUE(d);
  relay.reset();  // the broker is away: its connections cut, new ones refused
  EXPECT_NO_THROW(q->requeue(*d));
  EXPECT_EQ(store_->get_trial(ids[0]).status, store::TrialStatus::kQueued);
  q.reset();

  auto again = queue("w2")->receive(kWait);
  ASSERT_TRUE(again) << "the broker put the original back";
  EXPECT_EQ(again->trial_id, ids[0]);
  EXPECT_EQ(store_->get_trial(ids[0]).status, store::TrialStatus::kRunning);
}

// close() hands back what came ahead of receive() (prefetch) without using deliveries: they
// were started together in the store, and are given back as if never started (not lost,
// and their next start is attempt 1 again).
TEST_F(AmqpQueueTest, CloseHandsBackPrefetchedTrials) {
  const auto ids = add(4);
  queue("coordinator", 1)->publish(study_, ids);
  {
    auto q = queue("w1", 1, /*prefetch=*/4);
    auto d = q->receive(kWait);
    ASSERT_TRUE(d);
    finish(*d);
    q->ack(*d);
    std::this_thread::sleep_for(milliseconds(300));  // let the other three arrive
    q->close();
  }
  // max_attempts 1: had close() let them go back as failed deliveries, they would now be
  // dead-lettered instead of delivered.
  auto q = queue("w2", 1);
  int got = 0;
  while (auto d = q->receive(milliseconds(1500))) {
    EXPECT_EQ(store_->get_trial(d->trial_id).lost, 0);
    EXPECT_EQ(d->attempt, 1);
    EXPECT_EQ(store_->list_attempts(d->trial_id).size(), 1u);
    finish(*d);
    q->ack(*d);
    ++got;
  }
  EXPECT_EQ(got, 3);
}

// A message names its trial and its study, nothing else (a placeholder trial number went
// out with every first publish); a hand-back's copy is the same message.
TEST_F(AmqpQueueTest, AMessageNamesItsTrialAndItsStudyAndAHandBackCopiesIt) {
  const auto ids = add(3);
  queue("coordinator")->publish(study_, {ids[0], ids[1]});
  int64_t handed_back = 0;
  {
    auto q = queue("w1", 3, /*prefetch=*/2);
    auto d = q->receive(kWait);
    ASSERT_TRUE(d);
    finish(*d);
    q->ack(*d);
    handed_back = d->trial_id == ids[0] ? ids[1] : ids[0];
    std::this_thread::sleep_for(milliseconds(300));  // let the other one arrive
    q->close();                                      // and go back as a copy
  }
  queue("coordinator")->publish(study_, {ids[2]});
  // Read as an operator would, unacknowledged (back in the queue when c closes).
  amqp::Connection c(amqp::parse_broker_url(url_), std::chrono::seconds(0));
  const std::string name =
      "t." + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::set<nlohmann::json> bodies;
  for (int i = 0; i < 50 && bodies.size() < 2; ++i) {
    if (auto m = c.get(name))
      bodies.insert(nlohmann::json::parse(m->body));
    else
      std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(bodies, (std::set<nlohmann::json>{{{"trial", handed_back}, {"study", study_}},
                                              {{"trial", ids[2]}, {"study", study_}}}));
}

// A trial whose workers keep dying is failed by the store at its delivery after the
// limit, and its message is dead-lettered to NAME.dead for operators.
TEST_F(AmqpQueueTest, APoisonTrialIsDeadLetteredAndFailedInTheStore) {
  const auto ids = add(1);
  auto coordinator = queue("coordinator", 2);
  coordinator->publish(study_, ids);
  for (int i = 0; i < 2; ++i) {
    auto dying = queue("dying" + std::to_string(i), 2);
    ASSERT_TRUE(dying->receive(kWait)) << "delivery " << i + 1;
  }
  EXPECT_FALSE(queue("w", 2)->receive(milliseconds(800)));
  int64_t settled = 0;
  for (int i = 0; i < 50 && settled == 0; ++i) {
    settled = coordinator->settle_dead_letters();
    if (!settled) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(settled, 1);
  const auto t = store_->get_trial(ids[0]);
  EXPECT_EQ(t.status, store::TrialStatus::kFailed);
  EXPECT_NE(t.error.find("delivered 2 times without a result"), std::string::npos) << t.error;
  EXPECT_EQ(depth(".dead", 1), 1);
}

// A worker that dies costs the trials it held without starting them a broker delivery,
// not an attempt: at max_attempts 1 they still run (the broker's limit is a backstop
// above max_attempts), while the trial it was running is failed.
TEST_F(AmqpQueueTest, ATrialHeldUnstartedByAWorkerThatDiedStillRuns) {
  const auto ids = add(2);
  auto coordinator = queue("coordinator", 1);
  coordinator->publish(study_, {ids[0]});
  {
    auto dying = queue("dying", 1, /*prefetch=*/2);
    ASSERT_TRUE(dying->receive(kWait));
    coordinator->publish(study_, {ids[1]});
    std::this_thread::sleep_for(milliseconds(300));  // ids[1] reaches the dying worker
  }                                                  // dies without acking either
  EXPECT_EQ(store_->get_trial(ids[1]).status, store::TrialStatus::kQueued)
      << "never started, so never charged an attempt";
  auto q = queue("w", 1);
  std::vector<int64_t> ran;
  while (auto d = q->receive(milliseconds(1500))) {
    ran.push_back(d->trial_id);
    finish(*d);
    q->ack(*d);
  }
  EXPECT_EQ(ran, std::vector<int64_t>{ids[1]});
  EXPECT_EQ(store_->get_trial(ids[0]).status, store::TrialStatus::kFailed);
  EXPECT_EQ(store_->get_trial(ids[1]).status, store::TrialStatus::kCompleted);
  EXPECT_EQ(depth(".dead", 1), 1);
}

// Short trials raise what a worker holds (several start per store transaction). Stalled on
// a long one (a sweep's deep networks after its shallow ones), it hands back what waits
// behind it, unused (given back: not lost, and not an attempt), well before the trial in hand has
// been held for kLongHold (a second) (amqp_queue.cc).
TEST_F(AmqpQueueTest, ShortTrialsRaiseThePrefetchAndAStallHandsBackWhatWaits) {
  const auto ids = add(60);
  queue("coordinator")->publish(study_, ids);
  auto q = queue("w", 3, /*prefetch=*/1, /*max_prefetch=*/8);
  int done = 0;
  bool raised = false;
  for (int i = 0; i < 40 && !raised; ++i) {
    auto d = q->receive(kWait);
    ASSERT_TRUE(d);
    finish(*d);
    q->ack(*d);
    ++done;
    raised = running(ids) > 0;  // started ahead: the prefetch went up
  }
  ASSERT_TRUE(raised) << "40 trials acked at once did not raise the prefetch";
  EXPECT_GE(done, 8);
  std::optional<Delivery> held;
  for (int i = 0; i < 20 && !held; ++i) {
    auto d = q->receive(kWait);
    ASSERT_TRUE(d);
    if (running(ids) > 1) {
      held = d;  // others were started with it and wait
    } else {
      finish(*d);
      q->ack(*d);
    }
  }
  ASSERT_TRUE(held);
  // Held, with no receive(), for at most 800 ms: under kLongHold, so only the stall rule
  // hands the others back.
  int now_running = 0;
  for (int i = 0; i < 40; ++i) {
    now_running = running(ids);
    if (now_running == 1) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(now_running, 1) << "the trials waiting behind a long one stayed with its worker";
  finish(*held);
  q->ack(*held);
  while (auto d = q->receive(milliseconds(1500))) {
    finish(*d);
    q->ack(*d);
  }
  for (int64_t id : ids) {
    EXPECT_EQ(store_->get_trial(id).status, store::TrialStatus::kCompleted) << id;
    EXPECT_EQ(store_->get_trial(id).lost, 0) << id;
    EXPECT_EQ(store_->get_trial(id).attempts, 1) << id;  // a fault-free run: attempt 1
  }
  EXPECT_EQ(depth(".dead", 0), 0);
}

// Short trials: the results of those in hand and the deliveries that came meanwhile go
// into the store in one transaction, and receive() then hands the new ones out at once.
TEST_F(AmqpQueueTest, FinishStartsWhatCameAheadInTheSameTransaction) {
  const auto first = add(1);
  queue("coordinator")->publish(study_, first);
  auto q = queue("w1", 3, /*prefetch=*/2);
  const std::optional<Delivery> d = q->receive(kWait);
  ASSERT_TRUE(d);
  const auto second = add(1);
  queue("coordinator")->publish(study_, second);
  // Sent to this consumer (unacked), then read by its I/O thread: waiting, unstarted.
  ASSERT_EQ(depth("", 2, "messages_unacknowledged"), 2);
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_EQ(store_->get_trial(second[0]).status, store::TrialStatus::kQueued);

  const uint64_t transactions = store_->stats().transactions;
  const std::vector<bool> applied = q->finish(
      {{d->trial_id, d->attempt, store::TrialStatus::kCompleted, {{"ok", true}}, 0.5, "", {}}});
  EXPECT_EQ(applied, std::vector<bool>{true});
  EXPECT_EQ(store_->stats().transactions, transactions + 1);
  EXPECT_EQ(store_->get_trial(first[0]).status, store::TrialStatus::kCompleted);
  EXPECT_EQ(store_->get_trial(second[0]).status, store::TrialStatus::kRunning);
  q->ack(*d);
  const uint64_t before_receive = store_->stats().transactions;  // (reads count too)
  const std::optional<Delivery> next = q->receive(milliseconds(0));
  ASSERT_TRUE(next);
  EXPECT_EQ(store_->stats().transactions, before_receive) << "started with the finish";
  EXPECT_EQ(next->trial_id, second[0]);
  EXPECT_EQ(next->attempt, 1);
  EXPECT_EQ(q->finish({{next->trial_id, 1, store::TrialStatus::kCompleted, nullptr, 0.6, "", {}}}),
            std::vector<bool>{true});
  q->ack(*next);
  EXPECT_EQ(depth("", 0), 0);
}

TEST_F(AmqpQueueTest, AMessageThatIsNotATrialIsDeadLetteredNotRetried) {
  // A trial id this store does not have (another deployment's message).
  queue("coordinator")->publish(study_, {987654});
  auto q = queue("w1");
  EXPECT_FALSE(q->receive(milliseconds(1000)));
  EXPECT_EQ(depth(".dead", 1), 1);
}

TEST_F(AmqpQueueTest, WrongPasswordIsAClearConfigurationError) {
  std::string url = RabbitMqService::instance().url();
  url.replace(url.find("guest:guest"), 11, "guest:nope");
  auto q = make_amqp_queue(*store_, "w", url + "?queue=t.pw");
  EXPECT_TRUE(throws_error([&] { q->publish(study_, add(1)); }, ErrorCode::kFailedPrecondition,
                           "ACCESS_REFUSED"));
  EXPECT_TRUE(
      throws_error([&] { q->receive(kWait); }, ErrorCode::kFailedPrecondition, "guest:***@"));
}

TEST_F(AmqpQueueTest, AQueueDeclaredWithAnotherLimitIsRefusedWithAHint) {
  queue("coordinator", 3)->publish(study_, add(1));
  EXPECT_TRUE(throws_error([&] { queue("coordinator", 5)->publish(study_, add(1)); },
                           ErrorCode::kFailedPrecondition, "delivery limit"));
}

TEST_F(AmqpQueueTest, AnUnreachableBrokerIsUnavailableAndReceiveJustWaits) {
  auto q = make_amqp_queue(*store_, "w", "amqp://guest:guest@127.0.0.1:1/%2f");
  EXPECT_TRUE(
      throws_error([&] { q->publish(study_, add(1)); }, ErrorCode::kUnavailable, "127.0.0.1:1"));
  EXPECT_FALSE(q->receive(milliseconds(300)));  // reconnecting in the background
}

// A worker told to stop (SIGTERM) while it waits for work leaves at once, not when its wait
// runs out; then, with work waiting, receive() still delivers it.
TEST_F(AmqpQueueTest, ReceiveReturnsSoonAfterTheStopFlagIsSet) {
  std::atomic<bool> stop{false};
  AmqpQueueOptions o;
  o.stop = &stop;
  auto q = make_amqp_queue(*store_, "w", url_, o);
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(q->receive(std::chrono::minutes(2)));
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1))
      << "it waited for its work rather than for the stop flag";
  stop = false;
  q->publish(study_, add(1));
  EXPECT_TRUE(q->receive(kWait));
}

TEST(AmqpQueueUrl, BadUrlsAreRejectedWithTheReason) {
  TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("u.db"));
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "http://x"); },
                           ErrorCode::kInvalidArgument, "not an amqp:// URL"));
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "amqps://u:secret@h/v"); },
                           ErrorCode::kInvalidArgument, "TLS"));
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "amqp://u:secret@h:5672/?x=1"); },
                           ErrorCode::kInvalidArgument, "unknown option 'x'"));
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "amqp://u:secret@h/?queue=a b"); },
                           ErrorCode::kInvalidArgument, "queue name"));
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "amqp://u:secret@h/?queue=a b"); },
                           ErrorCode::kInvalidArgument, "u:***@h"));
  AmqpQueueOptions o;
  o.prefetch = 0;
  EXPECT_TRUE(throws_error([&] { make_amqp_queue(*store, "w", "amqp://h/", o); },
                           ErrorCode::kInvalidArgument, "prefetch"));
}

}  // namespace
}  // namespace layerlab::queue
