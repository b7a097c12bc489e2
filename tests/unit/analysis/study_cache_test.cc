// StudyCache loads a study's finished trials a page at a time: a study of more than one
// page comes into the view whole, each finished trial once, the others left out.
#include "analysis/study_cache.h"

#include <gtest/gtest.h>

#include <set>

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
    ASSERT_TRUE(v.best());
    EXPECT_EQ(v.best()->number, kTrials - 1);
  });
}

}  // namespace
}  // namespace layerlab::analysis
