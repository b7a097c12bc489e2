// StudyCache loads a study's finished trials a page at a time: a study of more than one
// page comes into the view whole, each finished trial once, the others left out.
#include "analysis/study_cache.h"

#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include "analysis/aggregates.h"
#include "store/store.h"
#include "store/trial_pages.h"
#include "study/spec.h"
#include "support/temp_and_errors.h"

namespace layerlab::analysis {
namespace {

TEST(StudyCache, LoadsAStudyOfSeveralPagesWhole) {
  const testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  const study::StudySpec spec =
      study::parse_study("name: s\ndatasets: [iris]\nseeds: [0, 1, 2, 3, 4, 5, 6]\n", "s.yaml");
  const int64_t study = store->create_study("s", spec.to_json());
  constexpr int kTrials = store::kTrialPage + 4;
  constexpr int kFails = 17;  // left out: no result
  std::vector<store::NewTrial> trials;
  for (int n = kTrials - 1; n >= 0; --n) trials.push_back({n, "iris", {{"seed", n % 7}}});
  store->add_trials(study, trials);  // in reverse: ids do not follow numbers
  for (int i = 0; i < kTrials; ++i) {
    const store::Claim c = *store->claim_next("w", {.study_id = study});
    const int64_t number = store->get_trial(c.trial_id).number;
    if (number == kFails) {
      ASSERT_TRUE(store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kFailed, {},
                                      std::nullopt, "threw"));
      continue;
    }
    const double value = static_cast<double>(number) / kTrials;
    ASSERT_TRUE(store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted,
                                    {{"metrics", {{"val_accuracy", value}}}}, value, ""));
  }
  StudyCache cache(*store);
  cache.with_study(study, [&](StudyView& v) {
    ASSERT_EQ(v.trials.size(), static_cast<size_t>(kTrials - 1));
    std::set<int64_t> numbers;
    for (const CachedTrial& t : v.trials) {
      numbers.insert(t.number);
      EXPECT_EQ(v.scalar_json(t.params[static_cast<size_t>(v.param_index("seed"))]), t.number % 7);
    }
    EXPECT_EQ(numbers.size(), v.trials.size()) << "each trial once";
    EXPECT_FALSE(numbers.count(kFails));
    EXPECT_EQ(*numbers.rbegin(), kTrials - 1) << "the last page is read";
    const auto boards = leaderboards(v, 1);
    ASSERT_EQ(boards.size(), 1u);
    ASSERT_FALSE(boards[0].top.empty());
    EXPECT_EQ(boards[0].top[0].number, kTrials - 1);
  });
}

// Issue 52: cache misses take turns. While the only turn is taken (its maker blocked here)
// another miss is refused at once, and a cached response is answered as usual.
TEST(StudyCache, MissesBeyondTheirTurnsAreRefusedWhileCachedResponsesAreServed) {
  const testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  const study::StudySpec spec = study::parse_study("name: s\ndatasets: [iris]\n", "s.yaml");
  const int64_t study = store->create_study("s", spec.to_json());
  StudyCache cache(*store, Turns::Limits{1, 0});
  auto quick = [](store::Store&, const StudyCache::ViewAccess&) { return std::string("made"); };
  ASSERT_EQ(*cache.response(study, "cached", *store, quick), "made");

  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread maker([&] {
    cache.response(study, "slow", *store,
                   [&entered, released](store::Store&, const StudyCache::ViewAccess&) {
                     entered.set_value();
                     released.wait();
                     return std::string("slow");
                   });
  });
  entered.get_future().wait();
  try {
    cache.response(study, "other", *store, quick);
    ADD_FAILURE() << "a miss was made while the only turn was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable) << e.what();
  }
  EXPECT_EQ(*cache.response(study, "cached", *store, quick), "made");
  release.set_value();
  maker.join();
  EXPECT_EQ(*cache.response(study, "slow", *store, quick), "slow") << "made once, then cached";
  EXPECT_EQ(*cache.response(study, "other", *store, quick), "made") << "the turn is free again";
}

TEST(StudyCache, KeptResponsesStayWithinTheByteBoundLeastRecentlyUsedFirst) {
  const testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  const study::StudySpec spec = study::parse_study("name: s\ndatasets: [iris]\n", "s.yaml");
  const int64_t study = store->create_study("s", spec.to_json());
  StudyCache cache(*store);
  int made = 0;
  // Each response is 40% of the bound: two fit, a third pushes the oldest out.
  constexpr size_t size = StudyCache::kMaxResponseBytes * 2 / 5;
  auto big = [&made](store::Store&, const StudyCache::ViewAccess&) {
    ++made;
    return std::string(size, 'x');
  };
  cache.response(study, "a", *store, big);
  cache.response(study, "b", *store, big);
  cache.response(study, "a", *store, big);  // a is now the more recent
  EXPECT_EQ(made, 2);
  cache.response(study, "c", *store, big);  // b goes
  cache.response(study, "a", *store, big);
  EXPECT_EQ(made, 3) << "a was kept";
  cache.response(study, "b", *store, big);
  EXPECT_EQ(made, 4) << "b was dropped to keep the bytes bounded";
  // A response over the bound alone is answered, never kept.
  auto huge = [&made](store::Store&, const StudyCache::ViewAccess&) {
    ++made;
    return std::string(StudyCache::kMaxResponseBytes + 1, 'y');
  };
  EXPECT_EQ(cache.response(study, "huge", *store, huge)->size(), StudyCache::kMaxResponseBytes + 1);
  cache.response(study, "huge", *store, huge);
  EXPECT_EQ(made, 6);
}

}  // namespace
}  // namespace layerlab::analysis
