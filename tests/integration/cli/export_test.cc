// `export` reads a study a page of trials at a time: on a study of several pages every trial
// comes out once, in number order, with the columns of parameters and metrics that only a
// trial of the last page has.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/study_commands.h"
#include "store/store.h"

namespace layerlab {
namespace {

using nlohmann::json;

constexpr int kTrials = 2345;  // over two pages of 1,000
constexpr int kOddOne = 2300;  // the only trial with a momentum and an f1

testing::Study study_of_several_pages() {
  const testing::Study s = testing::write_study("export-pages", "");
  auto st = store::open_store(s.store);
  const int64_t id = st->create_study("pages", json::object());
  std::vector<store::NewTrial> trials;
  // Added in reverse: the trials' ids do not follow their numbers.
  for (int n = kTrials - 1; n >= 0; --n) {
    json params = {{"lr", n / 1000.0}};
    if (n == kOddOne) params["momentum"] = 0.9;
    trials.push_back({n, "iris", params});
  }
  st->add_trials(id, trials);
  const store::ClaimOptions o{.study_id = id};
  for (int i = 0; i < 40; ++i) {  // the 40 first in queue order finish, with a curve
    const store::Claim c = *st->claim_next("w", o);
    json metrics = {{"acc", 0.5}};
    EXPECT_TRUE(st->finish_trial(
        c.trial_id, c.attempt, store::TrialStatus::kCompleted, {{"metrics", metrics}}, 0.5, "",
        {{1, 1.0, 1.0, 0.4, 0.1, nullptr}, {2, 0.8, 0.9, 0.5, 0.1, nullptr}}));
  }
  const store::TrialRecord odd = st->list_trials(id, {.limit = 1, .after_number = kOddOne - 1})[0];
  EXPECT_EQ(odd.number, kOddOne);
  const store::Claim c = *st->start_trial(odd.id, "w", std::chrono::milliseconds(30'000));
  EXPECT_TRUE(st->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted,
                               {{"metrics", {{"acc", 0.7}, {"f1", 0.6}}}}, 0.7, ""));
  return s;
}

TEST(Export, CsvOfSeveralPagesHasEveryTrialOnceAndEveryColumn) {
  const testing::Study s = study_of_several_pages();
  const auto r = testing::run_layerlab("export pages --format csv --store " + s.store);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(line,
            "number,dataset,status,value,attempts,lr,momentum,acc,f1,epochs_run,seconds,error");
  int expected = 0;
  while (std::getline(lines, line)) {
    ASSERT_EQ(line.substr(0, line.find(',')), std::to_string(expected)) << line;
    if (expected == kOddOne) {
      EXPECT_EQ(line, "2300,iris,completed,0.7,1,2.3,0.9,0.7,0.6,,,");
    }
    ++expected;
  }
  EXPECT_EQ(expected, kTrials);
}

TEST(Export, JsonOfSeveralPagesHasEveryTrialOnceWithItsCurve) {
  const testing::Study s = study_of_several_pages();
  const json out = testing::export_json(s, "pages");
  EXPECT_EQ(out["study"], "pages");
  ASSERT_EQ(out["trials"].size(), static_cast<size_t>(kTrials));
  int curves = 0;
  for (int n = 0; n < kTrials; ++n) {
    const json& t = out["trials"][static_cast<size_t>(n)];
    ASSERT_EQ(t["number"], n);
    if (t["status"] == "completed" && n != kOddOne) {
      ASSERT_EQ(t["curve"].size(), 2u) << t;
      EXPECT_EQ(t["curve"][1]["val_metric"], 0.5);
      EXPECT_EQ(t["attempt_log"].size(), 1u);
      ++curves;
    }
  }
  EXPECT_EQ(curves, 40);
  EXPECT_EQ(out["trials"][kOddOne]["params"]["momentum"], 0.9);
}

TEST(Export, JsonOfAStudyWithoutTrials) {
  const testing::Study s = testing::write_study("export-empty", "");
  store::open_store(s.store)->create_study("empty", json::object());
  const auto r = testing::run_layerlab("export empty --format json --store " + s.store);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["trials"], json::array());
  EXPECT_TRUE(r.out.ends_with("\"trials\": []\n}\n")) << r.out;
}

}  // namespace
}  // namespace layerlab
