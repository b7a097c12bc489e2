// `layerlab rerun` end to end: a real study on a real store, every trial trained again and
// compared bit for bit; records altered through the store API (copies of real trials
// with one number changed) are reported with their first difference and a non-zero exit;
// the trials that cannot be rerun get their message; PostgreSQL keeps every double exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "integration/model/copy_trial.h"
#include "integration/study_commands.h"
#include "store/store.h"
#include "study/provenance.h"
#include "support/postgres_service.h"
#include "support/temp_and_errors.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::contains;
using testing::copy_trial;
using testing::export_json;
using testing::run_layerlab;
using testing::Study;
using testing::write_study;

testing::CommandResult run_study(const Study& s) {
  return run_layerlab("run " + s.file.string() + " --store '" + s.store + "' --workers 2");
}

testing::CommandResult rerun(const Study& s, const std::string& study, int64_t number) {
  return run_layerlab("rerun " + study + " " + std::to_string(number) + " --store '" + s.store +
                      "'");
}

// One quick study (16 trials: iris and wine, 1 and 2 layers, relu and tanh, 2 seeds) for
// every test of the suite.
class Rerun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    study_ = new Study(testing::finished_study("rerun-quick", testing::kQuickStudy));
  }
  static void TearDownTestSuite() { delete study_; }
  static Study* study_;
  const Study& s() const { return *study_; }
  std::unique_ptr<store::Store> open() const { return store::open_store(s().store); }
};
Study* Rerun::study_ = nullptr;

TEST_F(Rerun, EveryTrialReproducesBitForBitAndTheStoreIsUnchanged) {
  const json before = export_json(s(), "quick");
  for (int64_t n = 0; n < 16; ++n) {
    const auto r = rerun(s(), "quick", n);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "trial " + std::to_string(n) +
                                    " of study quick reproduced bit for bit (5 epochs, completed, "
                                    "val_accuracy "))
        << r.out;
  }
  EXPECT_EQ(export_json(s(), "quick"), before);
}

TEST_F(Rerun, AnUnalteredCopyReproducesAndItsProvenanceGivesTheThreads) {
  auto st = open();
  const json here = study::provenance(*backend::make_cpu_backend(1));
  copy_trial(*st, "quick", 3, "copied", [&](store::TrialFinish& f, json&) {
    f.result["provenance"] = here;
    f.result["backend"] = "cpu (as recorded, 1 thread)";
  });
  const auto r = rerun(s(), "copied", 3);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "trial 3 of study copied reproduced bit for bit")) << r.out;
  EXPECT_FALSE(contains(r.out, "no provenance")) << r.out;
}

TEST_F(Rerun, AnAlteredCurveIsReportedWithTheProvenanceThatDiffers) {
  auto st = open();
  json recorded = study::provenance(*backend::make_cpu_backend(1));
  recorded["host"] = "elsewhere.example";
  recorded["revision"] = "0123456789abcdef0123456789abcdef01234567";
  double stored = 0;
  copy_trial(*st, "quick", 5, "altered", [&](store::TrialFinish& f, json&) {
    f.result["provenance"] = recorded;
    double& v = f.epochs[2].val_loss;  // epoch 3, one ulp up
    v = std::nextafter(v, INFINITY);
    stored = v;
  });
  const auto r = rerun(s(), "altered", 5);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, fmt::format("trial 5 of study altered was not reproduced: first "
                                          "difference at epoch 3, val_loss: stored {} vs rerun {}",
                                          stored, std::nextafter(stored, -INFINITY))))
      << r.out;
  EXPECT_TRUE(contains(r.out, "likely causes:\n  host: 'elsewhere.example' (record) vs")) << r.out;
  EXPECT_TRUE(contains(r.out, "  revision: '0123456789abcdef0123456789abcdef01234567' (record)"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "threads:")) << "threads are the same: " << r.out;
}

TEST_F(Rerun, AnAlteredFinalMetricWithoutProvenanceIsReported) {
  auto st = open();
  copy_trial(*st, "quick", 6, "altered-metric", [&](store::TrialFinish& f, json&) {
    f.result["metrics"]["train_accuracy"] = 0.125;
    f.result.erase("provenance");
    f.result["pack_size"] = 4;
  });
  const auto r = rerun(s(), "altered-metric", 6);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(contains(r.out,
                       "first difference at final result, metrics.train_accuracy: stored "
                       "0.125 vs rerun "))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "the record has no provenance (trained before layerlab recorded "
                       "it)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "it was trained in a pack of 4 trials")) << r.out;
}

TEST_F(Rerun, AnAlteredValueAndEpochCountAreReported) {
  auto st = open();
  copy_trial(*st, "quick", 7, "altered-value",
             [&](store::TrialFinish& f, json&) { f.value = *f.value + 0.5; });
  auto r = rerun(s(), "altered-value", 7);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, "first difference at final result, value: stored ")) << r.out;
  copy_trial(*st, "quick", 8, "altered-value",
             [&](store::TrialFinish& f, json&) { f.epochs.pop_back(); });
  r = rerun(s(), "altered-value", 8);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "first difference at epoch 5, epochs: stored 4 epochs vs rerun 5 "
                       "epochs"))
      << r.out;
}

TEST_F(Rerun, UnknownStudyOrTrial) {
  auto r = rerun(s(), "quik", 0);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no study 'quik' in this store (did you mean 'quick'?)")) << r.err;
  r = rerun(s(), "quick", 99);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "layerlab rerun: error: study quick has no trial 99 (16 trials)"))
      << r.err;
  r = run_layerlab("rerun quick -5 --store '" + s().store + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "trial number -5: numbers start at 0")) << r.err;
}

TEST_F(Rerun, TrialsThatCannotBeRerun) {
  auto st = open();
  copy_trial(*st, "quick", 0, "cannot");
  // Failed.
  copy_trial(*st, "quick", 2, "cannot", [](store::TrialFinish& f, json&) {
    f.status = store::TrialStatus::kFailed;
    f.error = "worker lost 3 times";
  });
  auto r = rerun(s(), "cannot", 2);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err,
                       "trial 2 of study cannot failed (worker lost 3 times): it has no "
                       "result to reproduce"))
      << r.err;
  // Trained on a GPU.
  copy_trial(*st, "quick", 3, "cannot", [](store::TrialFinish& f, json&) {
    f.result["backend"] = "cuda:0 (NVIDIA H200, CUDA 12.4)";
    f.result.erase("provenance");  // as recorded before provenance
  });
  r = rerun(s(), "cannot", 3);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err,
                       "trial 3 of study cannot was trained on cuda:0 (NVIDIA H200, CUDA "
                       "12.4): rerun trains on the CPU"))
      << r.err;
  copy_trial(*st, "quick", 4, "cannot", [](store::TrialFinish& f, json&) {
    f.result["provenance"] = {{"backend", "cuda:1"}, {"threads", 1}};
  });
  r = rerun(s(), "cannot", 4);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "trial 4 of study cannot was trained on cuda:1")) << r.err;
  // A precision the CPU backend does not have.
  copy_trial(*st, "quick", 5, "cannot",
             [](store::TrialFinish&, json& params) { params["precision"] = "bf16"; });
  r = rerun(s(), "cannot", 5);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err,
                       "trial 5 of study cannot used precision bf16; the CPU backend "
                       "computes in fp32"))
      << r.err;
  // Finished without a result.
  copy_trial(*st, "quick", 6, "cannot", [](store::TrialFinish& f, json&) { f.result = json(); });
  r = rerun(s(), "cannot", 6);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "trial 6 of study cannot is completed but has no stored result"))
      << r.err;
  // Queued: added, never claimed (last: a claim would take it).
  const auto cannot = st->find_study("cannot");
  st->add_trials(cannot->id, {{1, "iris", json::object(), 0}});
  r = rerun(s(), "cannot", 1);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err,
                       "trial 1 of study cannot is queued: only a finished trial can be "
                       "rerun"))
      << r.err;
  // Cancelled before it ran.
  st->cancel_study(cannot->id);
  r = rerun(s(), "cannot", 1);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.err, "trial 1 of study cannot was cancelled before it ran")) << r.err;
}

TEST_F(Rerun, ARecordWithoutBackendOrProvenanceRerunsOnOneThreadWithANote) {
  auto st = open();
  copy_trial(*st, "quick", 9, "no-backend", [](store::TrialFinish& f, json&) {
    f.result.erase("backend");
    f.result.erase("provenance");
  });
  const auto r = rerun(s(), "no-backend", 9);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out,
                       "has no provenance record (trained before layerlab recorded it); "
                       "its backend was 'not recorded'"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "note: the record does not say how many threads trained it; using 1"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "reproduced bit for bit")) << r.out;
}

TEST(RerunStatuses, PrunedAndEarlyStoppedTrialsReproduce) {
  const Study s = write_study("rerun-asha", R"(name: asha
datasets: [iris]
seeds: [0, 1, 2]
parameters:
  learning_rate: {values: [0.05, 1.0e-9]}
  units: {value: 8}
  epochs: {value: 9}
early_terminate: {type: asha, min_epochs: 1, eta: 3}
early_stopping: {patience: 1}
)");
  ASSERT_EQ(run_study(s).exit_code, 0);
  std::map<std::string, int> statuses;
  const json exported = export_json(s, "asha");
  for (const auto& t : exported["trials"]) {
    const int64_t n = t["number"];
    const std::string status = t["status"];
    ++statuses[status];
    const auto r = rerun(s, "asha", n);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(
        contains(r.out, "reproduced bit for bit (" + std::to_string(t["curve"].size()) + " epoch"))
        << r.out;
    EXPECT_TRUE(contains(r.out, status)) << r.out;
  }
  EXPECT_GE(statuses["pruned"], 1);
  EXPECT_GE(statuses["early_stopped"] + statuses["completed"], 1);
}

// On the CPU a member of a pack computes exactly what it computes alone: trials trained in
// packs rerun bit for bit.
TEST(RerunPacks, PackedTrialsReproduceBitForBit) {
  const Study s = write_study("rerun-packs", testing::kQuickStudy);
  ASSERT_EQ(
      run_layerlab("run " + s.file.string() + " --store '" + s.store + "' --workers 1 --pack 4")
          .exit_code,
      0);
  int packed = 0;
  const json exported = export_json(s, "quick");
  for (const auto& t : exported["trials"]) {
    packed += t["result"].value("pack_size", 1) > 1;
    const auto r = rerun(s, "quick", t["number"]);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "reproduced bit for bit")) << r.out;
  }
  EXPECT_GE(packed, 2);
}

// Doubles through a store and back: the JSON result (text in both stores) and the epoch
// columns (REAL in SQLite, double precision in PostgreSQL). Every double comes back with
// the same bits, with one exception: SQLite stores a REAL -0.0 as 0 (PostgreSQL keeps it;
// JSON text keeps it in both). No epoch column can be -0 (losses, accuracies and RMSEs are
// sums of non-negative terms), and rerun compares those columns' zeros without their sign.
void expect_doubles_round_trip(const std::string& url, bool keeps_negative_zero_columns) {
  auto st = store::open_store(url);
  const int64_t study = st->create_study("doubles", json::object());
  st->add_trials(study, {{0, "iris", json::object(), 0}});
  store::ClaimOptions claim;
  claim.study_id = study;
  const auto c = st->claim_next("w", claim);
  ASSERT_TRUE(c);
  const std::vector<double> values = {0.1,
                                      1.0 / 3.0,
                                      2.0 / 3.0,
                                      0.30000000000000004,
                                      std::nextafter(1.0, 2.0),
                                      -0.0,
                                      1e-300,
                                      2.2250738585072014e-308,
                                      4.9406564584124654e-324,  // the smallest subnormal
                                      1.7976931348623157e308,
                                      123456789.12345679,
                                      0.9666666666666667,
                                      std::nextafter(0.5, 0.0)};
  json result = {{"values", values}};
  std::vector<store::EpochRow> rows;
  for (size_t i = 0; i < values.size(); ++i) {
    store::EpochRow r;
    r.epoch = static_cast<int>(i) + 1;
    r.train_loss = r.val_loss = r.val_metric = r.seconds = values[i];
    r.extra = {{"learning_rate", values[i]}};
    rows.push_back(r);
  }
  ASSERT_TRUE(st->finish_trial(c->trial_id, c->attempt, store::TrialStatus::kCompleted, result,
                               values[1], "", rows));
  const auto t = st->get_trial(c->trial_id);
  auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  ASSERT_TRUE(t.value);
  EXPECT_TRUE(same(*t.value, values[1]));
  const auto back = t.result["values"].get<std::vector<double>>();
  const auto epochs = st->list_epochs(c->trial_id, c->attempt);
  ASSERT_EQ(back.size(), values.size());
  ASSERT_EQ(epochs.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(same(back[i], values[i])) << url << ": result " << values[i] << " -> " << back[i];
    const store::EpochRow& r = epochs[i].row;
    EXPECT_TRUE(same(r.extra["learning_rate"].get<double>(), values[i])) << url << values[i];
    const bool negative_zero = values[i] == 0 && std::signbit(values[i]);
    const double want = negative_zero && !keeps_negative_zero_columns ? 0.0 : values[i];
    for (double v : {r.train_loss, r.val_loss, r.val_metric, r.seconds})
      EXPECT_TRUE(same(v, want)) << url << ": epoch column " << values[i] << " -> " << v;
  }
}

TEST(StoredDoubles, RoundTripExactlyThroughSqlite) {
  const auto dir = testing::fresh_dir("doubles");
  expect_doubles_round_trip("sqlite:" + (dir / "d.db").string(), false);
}

TEST(StoredDoubles, RoundTripExactlyThroughPostgres) {
  expect_doubles_round_trip(testing::PostgresService::instance().fresh_database_url(), true);
}

TEST(RerunOnPostgres, TrialsReproduceBitForBit) {
  Study s = write_study("rerun-pg", testing::kQuickStudy);
  s.store = testing::PostgresService::instance().fresh_database_url();
  ASSERT_EQ(run_study(s).exit_code, 0);
  for (int64_t n : {0, 5, 10, 15}) {
    const auto r = rerun(s, "quick", n);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "reproduced bit for bit")) << r.out;
  }
}

}  // namespace
}  // namespace layerlab
