// serve's coordinator: feeds every running study, finishes complete ones, reports and
// skips a study it cannot read.
#include "study/coordinator_pool.h"

#include <gtest/gtest.h>

#include "support/temp_and_errors.h"

namespace layerlab::study {
namespace {

nlohmann::json spec_json(const std::string& name, int depths) {
  nlohmann::json values = nlohmann::json::array();
  for (int d = 1; d <= depths; ++d) values.push_back(d);
  return {{"name", name},
          {"datasets", {"iris"}},
          {"parameters", {{"hidden_layers", {{"values", values}}}}}};
}

TEST(CoordinatorPool, QueuesEveryRunningStudyAndFinishesCompleteOnes) {
  layerlab::testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  const int64_t a = store->create_study("a", StudySpec::from_json(spec_json("a", 3)).to_json());
  const int64_t b = store->create_study("b", StudySpec::from_json(spec_json("b", 2)).to_json());
  std::vector<std::string> lines;
  auto queue = queue::make_store_queue(*store, "coordinator");
  CoordinatorPool pool(*store, *queue, [&](const std::string& l) { lines.push_back(l); });
  pool.step(10);
  EXPECT_EQ(store->counts(a)[store::TrialStatus::kQueued], 3);
  EXPECT_EQ(store->counts(b)[store::TrialStatus::kQueued], 2);
  EXPECT_EQ(pool.active(), 2u);
  // Finish b's trials as a worker would: the next round marks b finished and drops it.
  for (const store::Claim& c : store->claim_batch("w", {.study_id = b}, 10))
    ASSERT_TRUE(store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted,
                                    nlohmann::json::object(), 0.5, ""));
  pool.step(10);
  EXPECT_EQ(store->get_study(b).status, store::StudyStatus::kFinished);
  EXPECT_EQ(store->get_study(a).status, store::StudyStatus::kRunning);
  EXPECT_EQ(pool.active(), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "study 'b' finished: 2 trials");
}

// serve's next round comes sooner only while adaptive studies take trials: step() tells it
// how many they took, and nothing for the others.
TEST(CoordinatorPool, CountsTheTrialsItGaveAdaptiveStudies) {
  layerlab::testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  nlohmann::json tpe = spec_json("tpe", 1);
  tpe["method"] = "tpe";
  tpe["budget"] = {{"trials", 20}};
  tpe["parameters"]["learning_rate"] = {
      {"distribution", "log_uniform"}, {"min", 1e-3}, {"max", 1e-1}};
  const int64_t grid =
      store->create_study("grid", StudySpec::from_json(spec_json("grid", 3)).to_json());
  auto queue = queue::make_store_queue(*store, "coordinator");
  CoordinatorPool pool(*store, *queue, [](const std::string&) {});
  EXPECT_EQ(pool.step(4), 0);  // the grid study took its 3 trials
  EXPECT_EQ(store->counts(grid)[store::TrialStatus::kQueued], 3);
  const int64_t adaptive = store->create_study("tpe", StudySpec::from_json(tpe).to_json());
  EXPECT_EQ(pool.step(4), 4);  // its window
  EXPECT_EQ(pool.step(4), 0);  // full: nothing finished since
  for (const store::Claim& c : store->claim_batch("w", {.study_id = adaptive}, 3))
    ASSERT_TRUE(store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted,
                                    nlohmann::json::object(), 0.5, ""));
  EXPECT_EQ(pool.step(4), 3);
  EXPECT_EQ(store->counts(adaptive).total(), 7);
}

TEST(CoordinatorPool, AStudyItCannotReadIsReportedOnceAndLeftAlone) {
  layerlab::testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  const int64_t bad = store->create_study("bad", {{"name", "bad"}, {"datasets", "iris"}});
  const int64_t good =
      store->create_study("good", StudySpec::from_json(spec_json("good", 2)).to_json());
  std::vector<std::string> lines;
  auto queue = queue::make_store_queue(*store, "coordinator");
  CoordinatorPool pool(*store, *queue, [&](const std::string& l) { lines.push_back(l); });
  pool.step(10);
  pool.step(10);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("study 'bad': cannot coordinate it: "), std::string::npos) << lines[0];
  EXPECT_EQ(store->counts(bad).total(), 0);
  EXPECT_EQ(store->get_study(bad).status, store::StudyStatus::kRunning);
  EXPECT_EQ(store->counts(good)[store::TrialStatus::kQueued], 2);
}

}  // namespace
}  // namespace layerlab::study
