#include "study/provenance.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <regex>

#include "backend/cpu_backend.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

TEST(Provenance, DescribesTheBuildAndTheMachine) {
  auto b = backend::make_cpu_backend(3);
  const json p = provenance(*b);
  EXPECT_EQ(p["backend"], "cpu");
  EXPECT_EQ(p["backend_description"], b->describe());
  EXPECT_NE(p["backend_description"].get<std::string>().find("OpenBLAS"), std::string::npos);
  EXPECT_EQ(p["threads"], 3);
  EXPECT_EQ(p["precision"], "fp32");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(p["host"], host);
  EXPECT_EQ(p["os"].get<std::string>().rfind("Linux ", 0), 0u) << p["os"];
  EXPECT_FALSE(p["compiler"].get<std::string>().empty());
  EXPECT_FALSE(p["layerlab_version"].get<std::string>().empty());
  // A git describe of the checkout (this test runs in one) or "unknown" outside one.
  const std::string rev = p["revision"];
  EXPECT_EQ(rev, build_revision());
  EXPECT_TRUE(rev == "unknown" || std::regex_search(rev, std::regex("[0-9a-f]{40}(-dirty)?$")))
      << rev;
}

TEST(Provenance, DifferencesNameFieldRecordAndHere) {
  const json here = {{"host", "a"}, {"threads", 2}, {"revision", "r1"}, {"compiler", "GCC 12"}};
  const json record = {{"host", "b"}, {"threads", 2}, {"revision", "r0"}};
  const auto d = provenance_differences(record, here);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "host: 'b' (record) vs 'a' (here)");
  EXPECT_EQ(d[1], "revision: 'r0' (record) vs 'r1' (here)");
  EXPECT_TRUE(provenance_differences(json(), here).empty());
}

class FirstDifference : public ::testing::Test {
 protected:
  void SetUp() override {
    stored.status = store::TrialStatus::kCompleted;
    stored.value = 0.75;
    stored.result = {{"status", "completed"}, {"metric", "val_accuracy"},
                     {"seconds", 1.5},        {"worker", "w1"},
                     {"backend", "cpu (x)"},  {"provenance", {{"host", "a"}}},
                     {"epochs_run", 2},       {"metrics", {{"val_accuracy", 0.75}}}};
    for (int e = 1; e <= 2; ++e) {
      store::EpochRow r;
      r.epoch = e;
      r.train_loss = 1.0 / e;
      r.val_loss = std::nan("");
      r.val_metric = 0.25 * e;
      r.seconds = 0.1;
      r.extra = {{"learning_rate", 0.01}, {"train_metric", 0.5}};
      epochs.push_back(r);
    }
    rerun.status = stored.status;
    rerun.value = stored.value;
    rerun.result = stored.result;
    rerun.result["seconds"] = 9.0;  // where and how long are not compared
    rerun.result["worker"] = "";
    rerun.result["backend"] = "cpu (y)";
    rerun.result.erase("provenance");
    rerun.epochs = epochs;
    for (auto& r : rerun.epochs) r.seconds = 7;
  }
  store::TrialRecord stored;
  std::vector<store::EpochRow> epochs;
  RerunRecord rerun;
};

TEST_F(FirstDifference, NoneWhenOnlyTimesAndPlacesDiffer) {
  EXPECT_FALSE(first_difference(stored, epochs, rerun));  // NaN equals NaN
}

TEST_F(FirstDifference, OneUlpInAnEpoch) {
  rerun.epochs[1].train_loss = std::nextafter(rerun.epochs[1].train_loss, 1.0);
  const auto d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "epoch 2, train_loss: stored 0.5 vs rerun 0.5000000000000001");
}

TEST_F(FirstDifference, TheMetricIsNamed) {
  rerun.epochs[0].val_metric = 0.3;
  rerun.epochs[1].val_metric = 0.3;  // the first one is reported
  const auto d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "epoch 1, val_accuracy: stored 0.25 vs rerun 0.3");
}

TEST_F(FirstDifference, SignedZeroAndExtraFields) {
  epochs[0].extra["learning_rate"] = 0.0;
  rerun.epochs[0].extra["learning_rate"] = -0.0;
  auto d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "epoch 1, learning_rate: stored 0 vs rerun -0");
  rerun.epochs[0].extra = {{"learning_rate", 0.0}};
  d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "epoch 1, train_metric: stored 0.5 vs rerun (missing)");
}

TEST_F(FirstDifference, EpochCountStatusValueAndResult) {
  rerun.epochs.pop_back();
  auto d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "epoch 2, epochs: stored 2 epochs vs rerun 1 epochs");
  SetUp();
  rerun.status = store::TrialStatus::kPruned;
  d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "final result, status: stored completed vs rerun pruned");
  SetUp();
  rerun.value.reset();
  d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "final result, value: stored 0.75 vs rerun none");
  SetUp();
  rerun.result["metrics"]["val_accuracy"] = 0.7500000000000001;
  d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(),
            "final result, metrics.val_accuracy: stored 0.75 vs rerun 0.7500000000000001");
  SetUp();
  rerun.result["epochs_run"] = 3;
  d = first_difference(stored, epochs, rerun);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->describe(), "final result, epochs_run: stored 2 vs rerun 3");
}

}  // namespace
}  // namespace layerlab::study
