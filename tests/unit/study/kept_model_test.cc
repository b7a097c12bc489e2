// What a worker hands the store for a study with keep_weights (study::model_to_keep): the
// trained model as a safetensors file, with the study's record in its metadata; nothing for a
// trial that does not rank or a study that keeps nothing; a model over the size limit, or one
// trained without its weights, is skipped with the reason instead.
#include <gtest/gtest.h>

#include "backend/cpu_backend.h"
#include "study/trained_model.h"
#include "study/trial_report.h"

namespace layerlab::study {
namespace {

class KeptModelFor : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = StudySpec::from_json({{"name", "keeper"},
                                  {"datasets", {"iris"}},
                                  {"keep_weights", {{"top", 3}}},
                                  {"parameters", {{"units", {{"value", 8}}}}}});
    TrialSpec t = TrialSpec::from_json({{"dataset", "iris"}});
    t.params.hidden_layers = 1;
    t.params.units = 8;
    t.params.epochs = 2;
    data_ = prepare_data(t);
    auto backend = backend::make_cpu_backend(1);
    outcome_ = run_trials(std::span<const TrialSpec>(&t, 1), data_, *backend, {}, true)[0];
    report_ = make_report(outcome_, spec_.metric, "w");
  }
  StudySpec spec_;
  PreparedData data_;
  TrialOutcome outcome_;
  TrialReport report_;
};

TEST_F(KeptModelFor, ARankedTrialGivesItsModelAsSafetensors) {
  EXPECT_EQ(spec_.keep_top, 3);
  EXPECT_EQ(StudySpec::from_json(spec_.to_json()).keep_top, 3);  // canonical form keeps it
  ASSERT_EQ(report_.status, store::TrialStatus::kCompleted);
  const ModelToKeep k = model_to_keep(outcome_, data_, spec_, report_, 7);
  EXPECT_TRUE(k.skipped.empty()) << k.skipped;
  ASSERT_TRUE(k.keep);
  EXPECT_EQ(k.keep->top, 3);
  EXPECT_TRUE(k.keep->maximize);
  const model::Model m =
      model::from_safetensors(model::decode_safetensors(*k.keep->bytes, "kept"), "kept");
  EXPECT_EQ(m.info.at("study"), "keeper");
  EXPECT_EQ(m.info.at("trial"), "7");
  EXPECT_EQ(m.info.at("kept"), "true");
  EXPECT_EQ(m.info.at("dataset"), "iris");
  EXPECT_EQ(m.parameters, outcome_.result.parameters);
}

// prepare_data keeps the standardisation it applied, so a model needs no second load of the
// dataset; data prepared without one gets it fitted again, the same.
TEST_F(KeptModelFor, TheModelsStandardisationIsPrepareDatasOwn) {
  ASSERT_EQ(data_.scaler.mean.size(), static_cast<size_t>(data_.split.train.features));
  PreparedData without = data_;
  without.scaler = {};
  const model::Model kept = trained_model(outcome_, data_);
  const model::Model refit = trained_model(outcome_, without);
  EXPECT_EQ(kept.scaler.mean, refit.scaler.mean);
  EXPECT_EQ(kept.scaler.scale, refit.scaler.scale);
}

TEST_F(KeptModelFor, NothingForAStudyWithoutKeepWeightsOrATrialThatDoesNotRank) {
  StudySpec none = spec_;
  none.keep_top = 0;
  EXPECT_FALSE(model_to_keep(outcome_, data_, none, report_, 7).keep);
  for (store::TrialStatus s :
       {store::TrialStatus::kPruned, store::TrialStatus::kDiverged, store::TrialStatus::kFailed}) {
    TrialReport r = report_;
    r.status = s;
    const ModelToKeep k = model_to_keep(outcome_, data_, spec_, r, 7);
    EXPECT_FALSE(k.keep) << store::to_string(s);
    EXPECT_TRUE(k.skipped.empty());
  }
  TrialReport no_value = report_;
  no_value.value.reset();
  EXPECT_FALSE(model_to_keep(outcome_, data_, spec_, no_value, 7).keep);
}

TEST_F(KeptModelFor, AModelOverTheLimitIsSkippedWithTheReason) {
  const ModelToKeep k = model_to_keep(outcome_, data_, spec_, report_, 7, /*max_bytes=*/100);
  EXPECT_FALSE(k.keep);
  EXPECT_NE(k.skipped.find("weights not kept: the model is "), std::string::npos) << k.skipped;
  EXPECT_NE(k.skipped.find("over the limit of 100 bytes"), std::string::npos) << k.skipped;
}

TEST_F(KeptModelFor, ATrialTrainedWithoutItsWeightsIsSkippedWithTheReason) {
  TrialOutcome without = outcome_;
  without.result.parameters.clear();
  const ModelToKeep k = model_to_keep(without, data_, spec_, report_, 7);
  EXPECT_FALSE(k.keep);
  EXPECT_NE(k.skipped.find("weights not kept: the trial on iris was trained without keeping"),
            std::string::npos)
      << k.skipped;
}

}  // namespace
}  // namespace layerlab::study
