// study/rerun.h in process: a trial trained and stored the way a worker stores it reruns
// bit for bit; a record one ulp off is reported at that epoch with the provenance that
// differs; the trials that cannot be rerun say why; a retrained trial becomes a model that
// predicts what its network computed.
#include "study/rerun.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu_backend.h"
#include "study/trained_model.h"
#include "study/trial_report.h"
#include "support/temp_and_errors.h"

namespace layerlab::study {
namespace {

using layerlab::testing::TempDir;
using layerlab::testing::throws_error;
using nlohmann::json;

// One study on iris; trial 0 trained on the CPU (1 thread) and stored as a worker stores it.
class RerunInProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::open_store("sqlite:" + dir_.path("s.db"));
    const json spec = {{"name", "tiny"},
                       {"datasets", {"iris"}},
                       {"parameters",
                        {{"hidden_layers", {{"value", 1}}},
                         {"units", {{"value", 8}}},
                         {"epochs", {{"value", 3}}}}}};
    study_ = store_->get_study(store_->create_study("tiny", StudySpec::from_json(spec).to_json()));
    TrialSpec t = TrialSpec::from_json({{"dataset", "iris"}});
    t.params.hidden_layers = 1;
    t.params.units = 8;
    t.params.epochs = 3;
    json params = t.to_json();
    params.erase("dataset");
    store_->add_trials(study_.id, {{0, "iris", params, 0}, {1, "iris", params, 0}});
    stored_ = train_and_store(t);
  }

  // Claims the next trial, trains `t` and finishes it with the worker's report.
  store::TrialFinish train_and_store(const TrialSpec& t) {
    const auto claim = store_->claim_next("w", {.study_id = study_.id});
    EXPECT_TRUE(claim.has_value());
    auto backend = backend::make_cpu_backend(1);
    const PreparedData data = prepare_data(t);
    const TrialOutcome outcome = run_trial(t, data, *backend);
    const TrialReport report = make_report(outcome, "val_accuracy", "w");
    store::TrialFinish f{claim->trial_id,
                         claim->attempt,
                         report.status,
                         report.result,
                         report.value,
                         report.error,
                         {}};
    for (const auto& e : outcome.result.epochs) f.epochs.push_back(epoch_row(e));
    EXPECT_EQ(store_->finish_trials({f}), std::vector<bool>{true});
    return f;
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  store::StudyRecord study_;
  store::TrialFinish stored_;
};

TEST_F(RerunInProcess, AStoredTrialReproducesBitForBit) {
  const StoredTrial t = load_stored_trial(*store_, study_, 0);
  EXPECT_EQ(t.threads, 1);
  EXPECT_TRUE(t.provenance.is_object());
  EXPECT_EQ(t.epochs.size(), 3u);
  const Retrained r = retrain(t, /*keep_parameters=*/false);
  EXPECT_FALSE(r.difference.has_value()) << r.difference->describe();
  const auto lines = describe_rerun(t, r);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("trial 0 of study tiny reproduced bit for bit (3 epochs"),
            std::string::npos)
      << lines.back();
}

TEST_F(RerunInProcess, ARecordOneUlpOffIsReportedAtItsEpochWithTheProvenanceThatDiffers) {
  StoredTrial t = load_stored_trial(*store_, study_, 0);
  double& v = t.epochs[1].val_loss;
  const double real = v;
  v = std::nextafter(v, INFINITY);
  t.provenance["host"] = "elsewhere.example";
  const Retrained r = retrain(t, false);
  ASSERT_TRUE(r.difference.has_value());
  EXPECT_NE(r.difference->describe().find("epoch 2, val_loss"), std::string::npos)
      << r.difference->describe();
  EXPECT_NE(r.difference->describe().find(fmt::format("vs rerun {}", real)), std::string::npos)
      << r.difference->describe();
  ASSERT_FALSE(r.likely_causes.empty());
  EXPECT_NE(r.likely_causes[0].find("host: 'elsewhere.example' (record)"), std::string::npos)
      << r.likely_causes[0];
  const auto lines = describe_rerun(t, r);
  EXPECT_NE(lines[0].find("was not reproduced: first difference at epoch 2"), std::string::npos)
      << lines[0];
}

TEST_F(RerunInProcess, TrialsThatCannotBeRerunSayWhy) {
  EXPECT_TRUE(throws_error([&] { load_stored_trial(*store_, study_, 1); },
                           ErrorCode::kFailedPrecondition,
                           "trial 1 of study tiny is queued: only a finished trial can be rerun"));
  EXPECT_TRUE(throws_error([&] { load_stored_trial(*store_, study_, 7); }, ErrorCode::kNotFound,
                           "study tiny has no trial 7 (2 trials)"));
  EXPECT_TRUE(throws_error([&] { load_stored_trial(*store_, study_, -1); },
                           ErrorCode::kInvalidArgument, "numbers start at 0"));
  store::TrialRecord gpu = store_->list_trials(study_.id, {})[0];
  gpu.result["provenance"]["backend"] = "cuda:0 (H200)";
  EXPECT_TRUE(throws_error([&] { load_stored_trial(*store_, study_, gpu); },
                           ErrorCode::kFailedPrecondition, "was trained on cuda:0 (H200)"));
  // For an export it is retrained on the CPU, with a note saying so.
  const StoredTrial exported = load_stored_trial(*store_, study_, gpu, /*for_export=*/true);
  ASSERT_FALSE(exported.notes.empty());
  EXPECT_NE(exported.notes.back().find("the CPU cannot match a GPU run bit for bit"),
            std::string::npos);
}

TEST_F(RerunInProcess, ARetrainedTrialBecomesAModelThatPredictsLikeItsNetwork) {
  const StoredTrial t = load_stored_trial(*store_, study_, 0);
  const Retrained r = retrain(t, /*keep_parameters=*/true);
  EXPECT_FALSE(r.difference.has_value());
  const model::Model m = trained_model(r.outcome, r.data);
  EXPECT_EQ(m.architecture.inputs, 4);
  EXPECT_EQ(m.architecture.hidden, std::vector<int>{8});
  EXPECT_EQ(m.classes, 3);
  EXPECT_EQ(m.info.at("dataset"), "iris");
  EXPECT_EQ(m.info.at("epochs"), "3");
  // Its validation accuracy on the raw validation rows is the trial's: the model standardises
  // them as the training did.
  const data::Dataset all = data::load("iris");
  const data::Split raw = data::split(all, t.trial_spec.validation_fraction,
                                      t.trial_spec.split_seed, t.trial_spec.stratify);
  const std::vector<float> out = model::predict(m, 1, raw.validation.x, raw.validation.rows);
  int right = 0;
  for (int64_t i = 0; i < raw.validation.rows; ++i) {
    const float* z = out.data() + i * 3;
    const int best = static_cast<int>(std::max_element(z, z + 3) - z);
    right += best == static_cast<int>(raw.validation.y[i]);
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(right) / static_cast<double>(raw.validation.rows),
                   r.outcome.result.epochs.back().val_metric);
  TrialOutcome without = r.outcome;
  without.result.parameters.clear();
  EXPECT_TRUE(throws_error([&] { trained_model(without, r.data); }, ErrorCode::kFailedPrecondition,
                           "without keeping its weights"));
}

}  // namespace
}  // namespace layerlab::study
