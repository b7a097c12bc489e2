// The coordinators feed studies in bounded, fair steps over a real SQLite store: a window
// of queued trials per study, whole batches with numbers that do not depend on the pacing,
// round-robin between studies, and a study cancelled while its trials are being stored
// simply stops being fed (no exception escapes, `serve` stays up).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <set>

#include "study/coordinator.h"
#include "study/coordinator_pool.h"
#include "support/temp_and_errors.h"

namespace layerlab::study {
namespace {

using store::StudyStatus;
using store::TrialStatus;

// A random study of `trials` trials over one dataset.
StudySpec random_spec(const std::string& name, int64_t trials) {
  return StudySpec::from_json(
      {{"name", name},
       {"datasets", {"iris"}},
       {"method", "random"},
       {"budget", {{"trials", trials}}},
       {"parameters",
        {{"learning_rate", {{"distribution", "log_uniform"}, {"min", 1e-4}, {"max", 1e-1}}},
         {"hidden_layers", {{"values", {1, 2, 3}}}}}}});
}

StudySpec grid_spec(const std::string& name, int depths) {
  nlohmann::json values = nlohmann::json::array();
  for (int d = 1; d <= depths; ++d) values.push_back(d);
  return StudySpec::from_json({{"name", name},
                               {"datasets", {"iris"}},
                               {"parameters", {{"hidden_layers", {{"values", values}}}}}});
}

// The store queue, plus an action run on each publish (the coordinator publishes right
// after each add_trials transaction): a test does something "while trials are inserted".
class HookedQueue : public queue::TrialQueue {
 public:
  HookedQueue(store::Store& store, std::function<void(int calls)> on_publish)
      : inner_(queue::make_store_queue(store, "coordinator")), on_publish_(std::move(on_publish)) {}
  void publish(int64_t study_id, const std::vector<int64_t>& ids) override {
    inner_->publish(study_id, ids);
    on_publish_(++calls_);
  }
  std::optional<queue::Delivery> receive(std::chrono::milliseconds wait) override {
    return inner_->receive(wait);
  }
  std::vector<bool> finish(const std::vector<store::TrialFinish>& finishes) override {
    return inner_->finish(finishes);
  }
  void ack(const queue::Delivery& d) override { inner_->ack(d); }
  void requeue(const queue::Delivery& d) override { inner_->requeue(d); }
  void close() override { inner_->close(); }
  bool lost(const queue::Delivery& d) const override { return inner_->lost(d); }
  int64_t settle_dead_letters() override { return inner_->settle_dead_letters(); }

 private:
  std::unique_ptr<queue::TrialQueue> inner_;
  std::function<void(int)> on_publish_;
  int calls_ = 0;
};

// The store queue, recording what is published, in order: (study, trial id).
class RecordingQueue : public HookedQueue {
 public:
  explicit RecordingQueue(store::Store& store) : HookedQueue(store, [](int) {}) {}
  void publish(int64_t study_id, const std::vector<int64_t>& ids) override {
    HookedQueue::publish(study_id, ids);
    for (int64_t id : ids) published.emplace_back(study_id, id);
  }
  int64_t of(int64_t study) const {
    return std::count_if(published.begin(), published.end(),
                         [&](const auto& p) { return p.first == study; });
  }
  std::vector<std::pair<int64_t, int64_t>> published;
};

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<store::Store> store = store::open_store("sqlite:" + dir.path("s.db"));
  int64_t create(const StudySpec& spec) { return store->create_study(spec.name, spec.to_json()); }
  int64_t queued(int64_t study) { return store->counts(study)[TrialStatus::kQueued]; }
  int64_t stored(int64_t study) { return store->counts(study).total(); }
  // Claims up to n queued trials of the study, as workers would; how many it got.
  int64_t claim(int64_t study, int n) {
    return static_cast<int64_t>(store->claim_batch("w", {.study_id = study}, n).size());
  }
};

// serve's options with a broker, over `clock`: a publish horizon of 1 s.
CoordinatorPoolOptions broker_options(const store::Clock& clock) {
  CoordinatorPoolOptions o;
  o.publish_horizon = std::chrono::milliseconds(1000);
  o.clock = &clock;
  return o;
}

// A random study of `trials` in a fresh store, and a recording queue for its coordinators.
struct RecordedStudy {
  RecordedStudy(const std::string& name, int64_t trials)
      : spec(random_spec(name, trials)), id(f.create(spec)), queue(*f.store) {}
  Fixture f;
  StudySpec spec;
  int64_t id;
  RecordingQueue queue;
};

TEST(Coordinator, StoresWholeBatchesOnlyWhileTheWindowOfQueuedTrialsHasRoom) {
  Fixture f;
  const StudySpec spec = random_spec("big", 100'000);
  const int64_t id = f.create(spec);
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  Coordinator c(*f.store, *queue, spec, id, {.max_queued = 2500, .batches_per_call = 5});
  EXPECT_EQ(c.top_up(8), 2 * kTrialBatch) << "a second batch while 2000 < 2500 are queued";
  EXPECT_EQ(c.top_up(8), 0) << "the window is full: nothing more until workers claim";
  EXPECT_FALSE(c.complete());
  ASSERT_EQ(f.claim(id, 3000), 3000);
  EXPECT_EQ(c.top_up(8), kTrialBatch);  // 1000 queued: one batch brings it to 3000
  EXPECT_EQ(f.stored(id), 3 * kTrialBatch);
  EXPECT_EQ(f.queued(id), 3000);
  // Numbers are contiguous from 0, whatever the pacing.
  store::TrialFilter all;
  int64_t expected = 0;
  for (const store::TrialRecord& t : f.store->list_trials(id, all)) EXPECT_EQ(t.number, expected++);
}

TEST(Coordinator, BatchesPerCallBoundsOneCallAndTheNumbersMatchAnUnpacedRun) {
  Fixture f;
  const StudySpec spec = random_spec("paced", 4500);
  const int64_t paced = f.create(spec);
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  Coordinator c(*f.store, *queue, spec, paced, {.max_queued = 100'000, .batches_per_call = 1});
  EXPECT_EQ(c.top_up(8), kTrialBatch);
  EXPECT_EQ(c.top_up(8, 1), kTrialBatch);
  EXPECT_EQ(c.top_up(8, 1), 500);  // the last, smaller batch
  EXPECT_EQ(c.top_up(8), 0);

  // The same study stored in one go (another store) numbers every trial the same way.
  Fixture g;
  const int64_t unpaced = g.create(spec);
  auto other_queue = queue::make_store_queue(*g.store, "coordinator");
  Coordinator all_at_once(*g.store, *other_queue, spec, unpaced,
                          {.max_queued = 100'000, .batches_per_call = 5});
  EXPECT_EQ(all_at_once.top_up(8), 4500);
  const auto a = f.store->list_trials(paced, {});
  const auto b = g.store->list_trials(unpaced, {});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].number, b[i].number);
    EXPECT_EQ(a[i].params, b[i].params) << "trial " << a[i].number;
  }
}

// A tpe study fed over many rounds while trials finish, fail and stay running: every trial
// the coordinator stores is the one its sampler suggests from the store as it stood (the
// finished trials by number, the queued and running ones pending), though the coordinator
// reads the finished trials only once and then follows them.
TEST(Coordinator, AnAdaptiveStudyIsFedFromEveryFinishedTrial) {
  Fixture f;
  const StudySpec spec = StudySpec::from_json(
      {{"name", "adaptive"},
       {"datasets", {"iris"}},
       {"method", "tpe"},
       {"budget", {{"trials", 60}}},
       {"parameters",
        {{"learning_rate", {{"distribution", "log_uniform"}, {"min", 1e-4}, {"max", 1e-1}}},
         {"weight_decay", {{"distribution", "uniform"}, {"min", 0}, {"max", 1}}}}}});
  const int64_t id = f.create(spec);
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  Coordinator c(*f.store, *queue, spec, id);
  const std::unique_ptr<Sampler> reference = make_sampler(spec);
  std::optional<store::Claim> held;  // a trial that stays running over several rounds
  for (int round = 1; f.stored(id) < 60; ++round) {
    std::vector<Observation> finished;
    std::vector<Suggestion> pending;
    for (const store::TrialRecord& t : f.store->list_trials(id, {})) {
      const TrialSpec trial = TrialSpec::from_stored(t.params, t.dataset);
      if (t.status == TrialStatus::kQueued || t.status == TrialStatus::kRunning)
        pending.push_back({t.number, trial});
      else
        finished.push_back({t.number, trial, t.value.value_or(std::nan("")), t.value.has_value()});
    }
    const int64_t first = f.stored(id);
    const int64_t added = c.top_up(3);
    ASSERT_GT(added, 0) << "round " << round;
    const auto stored = f.store->list_trials(id, {.after_number = first - 1});
    ASSERT_EQ(static_cast<int64_t>(stored.size()), added);
    for (const store::TrialRecord& t : stored) {
      std::optional<Suggestion> s = reference->suggest(t.number, finished, pending);
      ASSERT_TRUE(s);
      nlohmann::json expected = s->trial.to_json();
      expected.erase("dataset");
      EXPECT_EQ(t.params, expected) << "trial " << t.number << ", round " << round;
      pending.push_back(std::move(*s));
    }
    // Workers: every queued trial is claimed; one is held over, a quarter fail.
    for (const store::Claim& claim : f.store->claim_batch("w", {.study_id = id}, 100)) {
      if (!held) {
        held = claim;
        continue;
      }
      const store::TrialRecord t = f.store->get_trial(claim.trial_id);
      const nn::Params p = TrialSpec::from_stored(t.params, t.dataset).params;
      const double v = std::pow(std::log10(p.learning_rate) + 2.5, 2) + p.weight_decay;
      ASSERT_TRUE(t.number % 4 == 3
                      ? f.store->finish_trial(claim.trial_id, claim.attempt, TrialStatus::kFailed,
                                              nullptr, std::nullopt, "threw")
                      : f.store->finish_trial(claim.trial_id, claim.attempt,
                                              TrialStatus::kCompleted, nullptr, v, ""));
    }
    if (round % 5 == 0 && held) {
      ASSERT_TRUE(f.store->finish_trial(held->trial_id, held->attempt, TrialStatus::kCompleted,
                                        nullptr, 0.25, ""));
      held.reset();
    }
  }
  EXPECT_EQ(f.stored(id), 60);
}

TEST(Coordinator, RefusesAnEmptyWindow) {
  Fixture f;
  const StudySpec spec = grid_spec("g", 2);
  const int64_t id = f.create(spec);
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  EXPECT_TRUE(testing::throws_error(
      [&] { Coordinator(*f.store, *queue, spec, id, {.max_queued = 0, .batches_per_call = 5}); },
      ErrorCode::kInvalidArgument, "max_queued"));
}

// `run`'s path: the study is cancelled between two transactions of one top_up. run is
// told so (an error naming the study); the coordinator stores nothing more and is complete
// once none of the study's trials is queued or running.
TEST(Coordinator, AStudyCancelledWhileItsTrialsAreStoredStopsBeingFed) {
  Fixture f;
  const StudySpec spec = random_spec("cancelled", 50'000);
  const int64_t id = f.create(spec);
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 1) f.store->cancel_study(id);  // after the first batch
  });
  Coordinator c(*f.store, queue, spec, id);
  EXPECT_TRUE(testing::throws_error([&] { c.top_up(8); }, ErrorCode::kFailedPrecondition,
                                    "study 'cancelled' was cancelled: no more of its trials are "
                                    "queued (2000 of 50000 stored)"));
  EXPECT_TRUE(c.stopped());
  // Nothing queued or running is left: run ends, and reports the study cancelled.
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.top_up(8), 0);
  EXPECT_EQ(f.stored(id), kTrialBatch);
  EXPECT_EQ(f.store->counts(id)[TrialStatus::kCancelled], kTrialBatch);
  EXPECT_EQ(f.store->get_study(id).status, StudyStatus::kCancelled);
}

// A queue that refuses to publish is not taken for a cancellation: it propagates, and the
// study is not stopped.
TEST(Coordinator, AQueueThatRefusesToPublishPropagates) {
  Fixture f;
  const StudySpec spec = grid_spec("g", 2);
  const int64_t id = f.create(spec);
  int published = 0;
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 1) throw failed_precondition("the broker refuses this queue");
    published = calls;
  });
  Coordinator c(*f.store, queue, spec, id);
  EXPECT_TRUE(testing::throws_error([&] { c.top_up(8); }, ErrorCode::kFailedPrecondition,
                                    "the broker refuses"));
  EXPECT_FALSE(c.stopped());
  EXPECT_EQ(c.top_up(8), 0) << "stored already";
  EXPECT_EQ(published, 2) << "and published by the next call";
  EXPECT_EQ(f.queued(id), 2);
}

// With a publish window (serve with a broker) a stored batch is published only as far as
// the window allows; the rest follows as the study's published trials start, in number
// order, and started() counts them.
TEST(Coordinator, APublishWindowHoldsBackStoredTrialsUntilPublishedOnesStart) {
  RecordedStudy s("windowed", 2500);
  auto& [f, spec, id, queue] = s;
  Coordinator c(*f.store, queue, spec, id);
  c.set_publish_window(10);
  EXPECT_EQ(c.top_up(8, 1), kTrialBatch);
  EXPECT_EQ(queue.of(id), 10) << "stored 2000, published 10";
  EXPECT_EQ(c.publish(), 0) << "none of the 10 started";
  ASSERT_EQ(f.claim(id, 4), 4);
  EXPECT_EQ(c.publish(), 4);
  EXPECT_EQ(c.started(), 4);
  EXPECT_EQ(c.top_up(8, 1), 500) << "the window holds back publishing, not storing";
  EXPECT_EQ(queue.of(id), 14);
  c.set_publish_window(0);
  EXPECT_EQ(c.publish(), 2500 - 14) << "no window: everything stored is published";
  std::vector<int64_t> ids;
  for (const auto& [study, trial] : queue.published) ids.push_back(trial);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), 2500u);
  EXPECT_TRUE(testing::throws_error([&] { c.set_publish_window(-1); }, ErrorCode::kInvalidArgument,
                                    "negative publish window"));
}

// A coordinator started again (serve restarted) publishes the trials its predecessor stored
// and left queued, as it would new ones: all at once, or within its window.
TEST(Coordinator, AfterARestartTheQueuedTrialsArePublishedAgain) {
  RecordedStudy s("restarted", 2000);
  auto& [f, spec, id, first] = s;
  Coordinator(*f.store, first, spec, id).top_up(8);
  ASSERT_EQ(f.claim(id, 1500), 1500);
  RecordingQueue again(*f.store);
  Coordinator windowed(*f.store, again, spec, id);
  windowed.set_publish_window(100);
  EXPECT_EQ(windowed.top_up(8), 0);
  EXPECT_EQ(again.of(id), 100);
  RecordingQueue unwindowed(*f.store);
  EXPECT_EQ(Coordinator(*f.store, unwindowed, spec, id).top_up(8), 0);
  EXPECT_EQ(unwindowed.of(id), 500);
}

// Without a window (run, and serve on the store queue) every stored trial is published at
// once, as its batch is stored.
TEST(Coordinator, WithoutAPublishWindowEveryStoredTrialIsPublished) {
  RecordedStudy s("unwindowed", 2500);
  auto& [f, spec, id, queue] = s;
  Coordinator c(*f.store, queue, spec, id);
  EXPECT_EQ(c.top_up(8), 2500);
  EXPECT_EQ(queue.of(id), 2500);
  EXPECT_EQ(c.publish(), 0);
  EXPECT_EQ(c.started(), 0) << "counted only under a window";
}

// serve with a broker: each study publishes about publish_horizon of its trials at the pace
// they start (at least max_in_flight), so a study submitted after a large one is published
// right behind a few of the large one's trials, not behind its whole window of 10,000.
TEST(CoordinatorPool, PublishesEachStudyAtThePaceItsTrialsStart) {
  Fixture f;
  store::ManualClock clock;
  RecordingQueue queue(*f.store);
  std::vector<std::string> lines;
  CoordinatorPool pool(
      *f.store, queue, [&](const std::string& l) { lines.push_back(l); }, broker_options(clock));
  const int64_t large = f.create(random_spec("large", 20'000));
  EXPECT_EQ(pool.step(12), 12) << "a new study's first window: the next round comes sooner";
  EXPECT_EQ(f.queued(large), 5 * kTrialBatch) << "stored as before";
  EXPECT_EQ(queue.of(large), 12) << "published: max_in_flight";

  // All 12 start within 100 ms: 120/s, so 120 for the next second, published at once.
  ASSERT_EQ(f.claim(large, 12), 12);
  clock.advance(std::chrono::milliseconds(100));
  EXPECT_EQ(pool.step(12), 12) << "the window was drained: the next round comes sooner";
  EXPECT_EQ(queue.of(large), 12 + 120);

  // Nothing starts: the window shrinks (halving each step, down to max_in_flight) and
  // nothing more is published while 120 wait.
  for (int i = 0; i < 10; ++i) {
    clock.advance(std::chrono::milliseconds(100));
    EXPECT_EQ(pool.step(12), 0);
  }
  EXPECT_EQ(queue.of(large), 132);

  // A small study submitted now is published behind the 132 of the large one's, not
  // behind the 12,000 it has stored.
  const int64_t small = f.create(random_spec("small", 30));
  clock.advance(std::chrono::milliseconds(100));
  pool.step(12);
  EXPECT_EQ(queue.of(small), 12);
  EXPECT_EQ(queue.of(large), 132);
  const auto first_small = std::find_if(queue.published.begin(), queue.published.end(),
                                        [&](const auto& p) { return p.first == small; });
  EXPECT_EQ(first_small - queue.published.begin(), 132);

  // 12 of the large one's start in the next 100 ms: its window is 120 again, of which 108
  // wait, so 12 more are published.
  ASSERT_EQ(f.claim(large, 12), 12);
  clock.advance(std::chrono::milliseconds(100));
  EXPECT_EQ(pool.step(12), 0) << "12 of a window of 12 started, but 108 still wait";
  EXPECT_EQ(queue.of(large), 132 + 12);
  EXPECT_TRUE(lines.empty());
}

// A worker starts its deliveries in batches: a look a few milliseconds after one sees a
// burst, not a pace. Between measures (100 ms apart) a drained window only doubles.
TEST(CoordinatorPool, AWindowDrainedBetweenMeasuresDoubles) {
  Fixture f;
  store::ManualClock clock;
  RecordingQueue queue(*f.store);
  CoordinatorPool pool(
      *f.store, queue, [](const std::string&) {}, broker_options(clock));
  const int64_t id = f.create(random_spec("bursts", 20'000));
  pool.step(12);
  ASSERT_EQ(queue.of(id), 12);
  ASSERT_EQ(f.claim(id, 12), 12);
  clock.advance(std::chrono::milliseconds(10));
  EXPECT_EQ(pool.step(12), 12);
  EXPECT_EQ(queue.of(id), 12 + 24) << "12 started in 10 ms: doubled, not 1,200";
  ASSERT_EQ(f.claim(id, 24), 24);
  clock.advance(std::chrono::milliseconds(10));
  EXPECT_EQ(pool.step(12), 24);
  EXPECT_EQ(queue.of(id), 36 + 48);
  ASSERT_EQ(f.claim(id, 10), 10);  // 38 still wait: not drained
  clock.advance(std::chrono::milliseconds(10));
  EXPECT_EQ(pool.step(12), 0);
  EXPECT_EQ(queue.of(id), 84 + 10);
  // 130 ms after the first look, a measure: 46 started in 130 ms, 353 in the next second.
  clock.advance(std::chrono::milliseconds(100));
  EXPECT_EQ(pool.step(12), 0);
  EXPECT_EQ(queue.of(id), 46 + 353);
}

// A study whose publishing fails where its window grew (after the step fed it) is reported
// once and no longer coordinated; the step goes on with the others.
TEST(CoordinatorPool, APublishThatFailsWhereTheWindowGrewIsReportedOnce) {
  Fixture f;
  store::ManualClock clock;
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 3) throw internal_error("the broker refuses");  // the grown window's
  });
  std::vector<std::string> lines;
  CoordinatorPool pool(
      *f.store, queue, [&](const std::string& l) { lines.push_back(l); }, broker_options(clock));
  const int64_t id = f.create(random_spec("refused", 20'000));
  pool.step(12);  // publish 1: the first window
  ASSERT_EQ(f.claim(id, 12), 12);
  clock.advance(std::chrono::milliseconds(100));
  EXPECT_NO_THROW(pool.step(12));  // publish 2 tops the window up, 3 (refused) grows it
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "study 'refused': cannot coordinate it: the broker refuses");
  EXPECT_EQ(pool.active(), 0u);
  EXPECT_NO_THROW(pool.step(12));
  EXPECT_EQ(lines.size(), 1u);
}

// `serve`'s path: a study cancelled while the pool inserts its trials ends cancelled, the
// pool reports it and goes on with the others; nothing escapes step().
TEST(CoordinatorPool, AStudyCancelledMidInsertionEndsCancelledAndServeGoesOn) {
  Fixture f;
  const int64_t doomed = f.create(random_spec("doomed", 50'000));
  const int64_t other = f.create(grid_spec("other", 3));
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 1) f.store->cancel_study(doomed);  // right after doomed's first batch
  });
  std::vector<std::string> lines;
  CoordinatorPool pool(*f.store, queue, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_NO_THROW(pool.step(10));
  EXPECT_EQ(f.store->get_study(doomed).status, StudyStatus::kCancelled);
  EXPECT_EQ(f.queued(doomed), 0);
  EXPECT_EQ(f.stored(doomed), kTrialBatch) << "no batch after the cancellation";
  EXPECT_EQ(f.queued(other), 3);
  EXPECT_EQ(pool.active(), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "study 'doomed' is no longer running: no more of its trials are queued");
  EXPECT_NO_THROW(pool.step(10));
  EXPECT_EQ(f.stored(doomed), kTrialBatch);
  EXPECT_EQ(lines.size(), 1u);
}

// A study cancelled between rounds is simply no longer fed.
TEST(CoordinatorPool, AStudyCancelledBetweenRoundsIsNoLongerFed) {
  Fixture f;
  const int64_t id = f.create(random_spec("r", 50'000));
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  CoordinatorPoolOptions o;
  o.batches_per_step = 1;
  CoordinatorPool pool(
      *f.store, *queue, [](const std::string&) {}, o);
  pool.step(10);
  EXPECT_EQ(f.stored(id), kTrialBatch);
  f.store->cancel_study(id);
  pool.step(10);
  EXPECT_EQ(f.stored(id), kTrialBatch);
  EXPECT_EQ(pool.active(), 0u);
}

// One huge study (100,000 trials here; the same holds for 10^8) and a small one created
// after it: the small one is fed in the next step, the huge one never holds more than its
// window of queued trials, and workers claim trials of both.
TEST(CoordinatorPool, AHugeStudyNeitherStarvesAnotherNorFillsTheStore) {
  Fixture f;
  const int64_t huge = f.create(random_spec("huge", 100'000));
  const int64_t small = f.create(grid_spec("small", 3));
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  CoordinatorPoolOptions o;
  o.study.max_queued = 4000;
  o.batches_per_step = 1;
  CoordinatorPool pool(
      *f.store, *queue, [](const std::string&) {}, o);
  pool.step(10);
  EXPECT_EQ(f.stored(huge) + f.stored(small), kTrialBatch) << "one batch per step in all";
  pool.step(10);
  EXPECT_EQ(f.queued(small), 3) << "its turn came although the huge study has more";
  for (int i = 0; i < 20; ++i) pool.step(10);
  EXPECT_EQ(f.stored(huge), 2 * kTrialBatch) << "the window: 4000 queued";

  // Workers take trials of both; the huge study is topped up as they do, within its window.
  EXPECT_EQ(f.claim(small, 10), 3);
  EXPECT_EQ(f.claim(huge, 2500), 2500);
  pool.step(10);
  EXPECT_EQ(f.stored(huge), 3 * kTrialBatch);
  EXPECT_EQ(f.queued(huge), 3500);
  for (int i = 0; i < 20; ++i) pool.step(10);
  EXPECT_LT(f.queued(huge), o.study.max_queued + kTrialBatch);
  EXPECT_EQ(f.store->get_study(huge).status, StudyStatus::kRunning);
}

// With a larger budget the studies take turns within one step.
TEST(CoordinatorPool, StudiesTakeTurnsWithinAStep) {
  Fixture f;
  const int64_t a = f.create(random_spec("a", 100'000));
  const int64_t b = f.create(random_spec("b", 100'000));
  auto queue = queue::make_store_queue(*f.store, "coordinator");
  CoordinatorPoolOptions o;
  o.study.max_queued = 100'000;
  o.batches_per_step = 3;
  CoordinatorPool pool(
      *f.store, *queue, [](const std::string&) {}, o);
  pool.step(10);  // a, b, a
  EXPECT_EQ(f.stored(a), 2 * kTrialBatch);
  EXPECT_EQ(f.stored(b), kTrialBatch);
  pool.step(10);  // b, a, b: the turn goes on where it stopped
  EXPECT_EQ(f.stored(a), 3 * kTrialBatch);
  EXPECT_EQ(f.stored(b), 3 * kTrialBatch);
}

struct Failure {
  std::string name;
  std::function<void()> raise;
  std::string reported;
};

void PrintTo(const Failure& c, std::ostream* os) {
  *os << c.name;
}

class CoordinatorPoolFailure : public ::testing::TestWithParam<Failure> {};

// Whatever one study's feeding throws (not only layerlab::Error) is reported once and
// leaves that study alone; the others go on.
TEST_P(CoordinatorPoolFailure, IsReportedOnceAndTheOtherStudiesGoOn) {
  Fixture f;
  const int64_t bad = f.create(grid_spec("bad", 2));
  const int64_t good = f.create(grid_spec("good", 2));
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 1) GetParam().raise();  // bad's first batch
  });
  std::vector<std::string> lines;
  CoordinatorPool pool(*f.store, queue, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_NO_THROW(pool.step(10));
  EXPECT_NO_THROW(pool.step(10));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("study 'bad': cannot coordinate it: " + GetParam().reported, 0), 0u)
      << lines[0];
  EXPECT_EQ(f.queued(good), 2);
  EXPECT_EQ(f.store->get_study(bad).status, StudyStatus::kRunning);
  EXPECT_EQ(pool.active(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Thrown, CoordinatorPoolFailure,
    ::testing::Values(Failure{"bad_alloc", [] { throw std::bad_alloc(); }, "out of memory"},
                      Failure{"runtime_error", [] { throw std::runtime_error("boom"); },
                              "unexpected error: boom"},
                      Failure{"json", [] { (void)nlohmann::json::parse("{").size(); },
                              "unexpected error: [json.exception.parse_error.101]"},
                      Failure{"error", [] { throw internal_error("broken"); }, "broken"}),
    [](const auto& p) { return p.param.name; });

// The store or broker away is not the study's fault: it propagates (serve retries the
// round) and the study stays coordinated.
TEST(CoordinatorPool, TheStoreOrBrokerAwayPropagates) {
  Fixture f;
  const int64_t id = f.create(grid_spec("g", 2));
  bool away = true;
  HookedQueue queue(*f.store, [&](int calls) {
    if (calls == 1 && away) throw unavailable("broker away");
  });
  CoordinatorPool pool(*f.store, queue, [](const std::string&) {});
  EXPECT_TRUE(testing::throws_error([&] { pool.step(10); }, ErrorCode::kUnavailable, "away"));
  away = false;
  EXPECT_NO_THROW(pool.step(10));
  EXPECT_EQ(f.queued(id), 2);
  EXPECT_EQ(pool.active(), 1u);
}

}  // namespace
}  // namespace layerlab::study
