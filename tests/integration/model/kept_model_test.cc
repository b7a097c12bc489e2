// Kept models (a study's keep_weights) end to end with real worker processes on a real
// SQLite file: the kept set is each dataset's leaderboard top K (study/leaderboard.h) after
// a clean run, after a worker killed between training and commit (or just after the
// commit), and after a killed `run` resumed; `best --save` serves the kept model without
// training (and says so), or trains again when none is kept (and says that); `predict
// --store --trial` reads the model from the store, and refuses clearly when there is none.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <set>

#include "integration/study_commands.h"
#include "model/model.h"
#include "store/store.h"
#include "study/leaderboard.h"
#include "study/spec.h"
#include "support/postgres_service.h"
#include "support/temp_and_errors.h"

namespace layerlab {
namespace {

using testing::contains;
using testing::run_layerlab;
using testing::Study;
using testing::write_study;

// 2 datasets x 2 configurations x 4 seeds = 16 short trials; the 2 best of each dataset keep
// their weights.
constexpr const char* kKeptStudy = R"(name: kept
datasets: [iris, wine]
seeds: [0, 1, 2, 3]
keep_weights: {top: 2}
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 16}
  epochs: {value: 5}
)";

// Checks that the trials with kept weights are exactly each dataset's top `top` by the
// study's leaderboard rule, and that each kept file is that trial's model. Returns the
// kept trial ids.
std::set<int64_t> check_kept_set(const Study& s, const std::string& name, size_t top) {
  auto store = store::open_store(s.store);
  const store::StudyRecord rec = *store->find_study(name);
  const study::StudySpec spec = study::StudySpec::from_json(rec.spec);
  std::set<int64_t> expected;
  for (const study::StoredLeaderboard& b : study::leaderboards(*store, rec.id, spec, top))
    for (const study::LeaderboardEntry& e : b.board.top) expected.insert(e.trial_id);
  std::set<int64_t> kept;
  for (const store::KeptWeights& w : store->list_weights(rec.id)) {
    kept.insert(w.trial_id);
    const store::TrialRecord t = store->get_trial(w.trial_id);
    EXPECT_EQ(w.dataset, t.dataset);
    const std::string where = "kept weights of trial " + std::to_string(t.number);
    const std::optional<store::KeptWeights> full = store->find_weights(w.trial_id);
    const model::Model m =
        model::from_safetensors(model::decode_safetensors(full->bytes, where), where);
    EXPECT_EQ(m.info.at("trial"), std::to_string(t.number)) << where;
    EXPECT_EQ(m.info.at("dataset"), t.dataset) << where;
  }
  EXPECT_EQ(kept, expected);
  EXPECT_EQ(expected.size(), top * spec.datasets.size());
  return kept;
}

TEST(KeptModels, BestSaveServesTheKeptModelAndPredictReadsItFromTheStore) {
  const Study s = write_study("kept-best", kKeptStudy);
  const auto run = run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  check_kept_set(s, "kept", 2);

  const std::string model = (s.dir / "model.safetensors").string();
  const auto best =
      run_layerlab("best kept --dataset iris --store " + s.store + " --save " + model);
  ASSERT_EQ(best.exit_code, 0) << best.out << best.err;
  EXPECT_TRUE(contains(best.out, "using the model kept in the store for trial")) << best.out;
  EXPECT_TRUE(contains(best.out, "not trained again")) << best.out;
  EXPECT_FALSE(contains(best.out, "training trial")) << best.out;
  EXPECT_TRUE(contains(best.out, "saved " + model + " (")) << best.out;

  // The saved file and the store's copy predict the same.
  auto store = store::open_store(s.store);
  const store::TrialRecord top = store->list_trials(
      store->find_study("kept")->id,
      {study::ranked_statuses(), "iris", store::TrialSort::kValue, "", true, 1, 0})[0];
  const std::string iris = std::string(LAYERLAB_SOURCE_DIR) + "/data/builtin/iris.csv";
  const auto from_store = run_layerlab("predict --store " + s.store + " --trial " +
                                       std::to_string(top.id) + " --data " + iris);
  ASSERT_EQ(from_store.exit_code, 0) << from_store.err;
  EXPECT_EQ(std::count(from_store.out.begin(), from_store.out.end(), '\n'), 150);
  const auto saved = (s.dir / "top.safetensors").string();
  {
    const auto w = store->find_weights(top.id);
    ASSERT_TRUE(w);
    std::ofstream(saved, std::ios::binary) << w->bytes;
  }
  const auto from_file = run_layerlab("predict --model " + saved + " --data " + iris);
  EXPECT_EQ(from_file.out, from_store.out);
}

TEST(KeptModels, BestSaveTrainsAgainWhenNothingIsKeptAndSaysSo) {
  std::string yaml = kKeptStudy;
  yaml.erase(yaml.find("keep_weights: {top: 2}\n"), 23);
  const Study s = write_study("kept-none", yaml);
  ASSERT_EQ(
      run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2").exit_code, 0);
  auto store = store::open_store(s.store);
  EXPECT_TRUE(store->list_weights(store->find_study("kept")->id).empty());
  const std::string model = (s.dir / "model.safetensors").string();
  const auto best =
      run_layerlab("best kept --dataset iris --store " + s.store + " --save " + model);
  ASSERT_EQ(best.exit_code, 0) << best.out << best.err;
  EXPECT_TRUE(contains(best.out, "(the study has no keep_weights)")) << best.out;
  EXPECT_TRUE(contains(best.out, "training trial")) << best.out;
  EXPECT_TRUE(contains(best.out, "saved " + model)) << best.out;
  // predict --trial on a store without kept models says why, naming the trial.
  const int64_t id = store->list_trials(store->find_study("kept")->id, {})[0].id;
  const auto none = run_layerlab("predict --store " + s.store + " --trial " + std::to_string(id) +
                                 " --data iris");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_TRUE(contains(none.err, "no model kept for trial " + std::to_string(id))) << none.err;
  EXPECT_TRUE(contains(none.err, "keep_weights")) << none.err;
  const auto unknown = run_layerlab("predict --store " + s.store + " --trial 99999 --data iris");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(contains(unknown.err, "no trial with id 99999")) << unknown.err;
  const auto both = run_layerlab("predict --store " + s.store + " --trial " + std::to_string(id) +
                                 " --model " + model + " --data iris");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_TRUE(contains(both.err, "excludes")) << both.err;
  const auto neither = run_layerlab("predict --data iris");
  EXPECT_NE(neither.exit_code, 0);
  EXPECT_TRUE(contains(neither.err, "give --model FILE, or --trial ID")) << neither.err;
}

// A kept file that is not a model (written by something else into the store) is refused
// by name, never read as one.
TEST(KeptModels, AKeptFileThatIsNotAModelIsAClearError) {
  const auto dir = testing::fresh_dir("kept-corrupt");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  int64_t id = 0;
  {
    auto store = store::open_store(url);
    const int64_t study = store->create_study("x", nullptr);
    store->add_trials(study, {{0, "iris", {}}});
    const std::optional<store::Claim> c = store->claim_next("w", {.study_id = study});
    ASSERT_TRUE(c);
    id = c->trial_id;
    store::TrialFinish f{id, c->attempt, store::TrialStatus::kCompleted, nullptr, 0.5, "", {}};
    f.keep = store::KeepWeights{std::make_shared<const std::string>("not a model"), 1, true};
    ASSERT_TRUE(store->finish_trials({f})[0]);
  }
  const auto r =
      run_layerlab("predict --store " + url + " --trial " + std::to_string(id) + " --data iris");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "trial " + std::to_string(id) + " in " + url)) << r.err;
}

class KeptModelsWorkerKilledAt : public ::testing::TestWithParam<std::string> {};

// kill -9 of the worker holding trial 3 after its training (its weights built, nothing
// committed) or just after its commit: the retry or the committed result leaves exactly
// each dataset's top 2 kept, every kept file its own trial's model (no orphan, none missing).
TEST_P(KeptModelsWorkerKilledAt, KeptSetIsStillEachDatasetsTop) {
  const Study s = write_study("kept-crash-" + GetParam(), kKeptStudy);
  const std::string env = "LAYERLAB_TEST_CRASH=" + GetParam() +
                          ":3 LAYERLAB_TEST_CRASH_ONCE=" + (s.dir / "crashed").string();
  const auto r = run_layerlab(
      "run " + s.file.string() + " --store " + s.store + " --workers 2 --lease-seconds 1", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(s.dir / "crashed")) << "the hook never fired";
  auto store = store::open_store(s.store);
  const store::TrialRecord t3 = store->list_trials(
      store->find_study("kept")->id, {{}, "", store::TrialSort::kNumber, "", false, 1, 3})[0];
  ASSERT_EQ(t3.number, 3);
  EXPECT_EQ(t3.status, store::TrialStatus::kCompleted);
  EXPECT_EQ(t3.attempts, GetParam() == "after_training" ? 2 : 1);
  check_kept_set(s, "kept", 2);
}

INSTANTIATE_TEST_SUITE_P(Points, KeptModelsWorkerKilledAt,
                         ::testing::Values("after_training", "after_commit"),
                         [](const auto& p) { return p.param; });

// The same on PostgreSQL (BYTEA, the per-board advisory lock), two workers committing at
// once, one killed between training and commit.
TEST(KeptModels, PostgresStoreKeepsEachDatasetsTopThroughAKilledWorker) {
  Study s = write_study("kept-pg", kKeptStudy);
  s.store = testing::PostgresService::instance().fresh_database_url();
  const std::string env = "LAYERLAB_TEST_CRASH=after_training:5 LAYERLAB_TEST_CRASH_ONCE=" +
                          (s.dir / "crashed").string();
  const auto r = run_layerlab(
      "run " + s.file.string() + " --store '" + s.store + "' --workers 2 --lease-seconds 1", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(s.dir / "crashed")) << "the hook never fired";
  const std::set<int64_t> kept = check_kept_set(s, "kept", 2);
  const std::string iris = std::string(LAYERLAB_SOURCE_DIR) + "/data/builtin/iris.csv";
  auto store = store::open_store(s.store);
  for (int64_t id : kept) {
    if (store->get_trial(id).dataset != "iris") continue;
    const auto p = run_layerlab("predict --store '" + s.store + "' --trial " + std::to_string(id) +
                                " --data " + iris);
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(std::count(p.out.begin(), p.out.end(), '\n'), 150);
  }
}

// A `run` killed mid-study (its workers lose their leases) and run again: the resumed study
// ends with each dataset's top 2 kept, counting the trials of both runs.
TEST(KeptModels, ResumedStudyKeepsTheRightTop) {
  // digits, wider and longer: its trials take about half a second each here, so the study
  // is still running when killed (at 12 epochs a loaded machine once finished it first).
  std::string yaml = kKeptStudy;
  yaml.replace(yaml.find("[iris, wine]"), 12, "[digits, wine]");
  yaml.replace(yaml.find("units: {value: 16}"), 18, "units: {value: 64}");
  yaml.replace(yaml.find("epochs: {value: 5}"), 18, "epochs: {value: 60}");
  const Study s = write_study("kept-resume", yaml);
  const pid_t pid = testing::spawn_layerlab(
      "run " + s.file.string() + " --store " + s.store + " --workers 2 --lease-seconds 1", s.dir);
  const ::layerlab::testing::KillOnExit pid_guard(pid);
  ASSERT_TRUE(testing::wait_finished(s, "kept", 4));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const int64_t before = testing::finished(s, "kept");
  ASSERT_LT(before, 16) << "the study finished before the interruption";
  const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store +
                              " --workers 2 --lease-seconds 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "resuming")) << r.err;
  EXPECT_EQ(testing::finished(s, "kept"), 16);
  check_kept_set(s, "kept", 2);
}

}  // namespace
}  // namespace layerlab
