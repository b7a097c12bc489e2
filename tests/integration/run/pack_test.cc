// `layerlab run --pack K`: workers train same-shape trials as one batched computation. The
// results equal trial-by-trial training, a pruned member leaves its pack while the others go
// on, and after a crash the pack's trials are retried one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "integration/study_commands.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::export_json;
using testing::run_layerlab;
using testing::Study;
using testing::trials_by_number;
using testing::write_study;

// 2 datasets x 2 depths (4 shapes) x 2 learning rates x 2 dropout rates x 3 seeds = 48.
constexpr const char* kPackStudy = R"(name: packs
datasets: [iris, wine]
seeds: [0, 1, 2]
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 16}
  optimizer: {value: momentum}
  learning_rate: {values: [0.05, 0.01]}
  dropout: {values: [0.0, 0.2]}
  epochs: {value: 4}
)";

testing::CommandResult run_packed(const Study& s, int pack, const std::string& env = "") {
  return run_layerlab("run " + s.file.string() + " --store " + s.store +
                          " --workers 1 --lease-seconds 1 --pack " + std::to_string(pack),
                      env);
}

int pack_size(const json& trial) {
  return trial["result"]["pack_size"].get<int>();
}

TEST(Packs, PackedRunGivesTheResultsOfTrialByTrialTraining) {
  const Study alone = write_study("pack-alone", kPackStudy);
  const Study packed = write_study("pack-packed", kPackStudy);
  ASSERT_EQ(run_packed(alone, 1).exit_code, 0);
  const auto r = run_packed(packed, 8);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = trials_by_number(export_json(alone, "packs"));
  const auto p = trials_by_number(export_json(packed, "packs"));
  ASSERT_EQ(a.size(), 48u);
  ASSERT_EQ(p.size(), 48u);
  int in_full_packs = 0;
  for (const auto& [n, t] : p) {
    const json& u = a.at(n);
    ASSERT_EQ(t["params"], u["params"]) << "trial " << n;
    EXPECT_EQ(pack_size(u), 1);
    // 12 trials per shape, claimed 8 at a time: packs of 8, or two packs of 4.
    EXPECT_TRUE(pack_size(t) == 8 || pack_size(t) == 4) << "trial " << n << ": " << pack_size(t);
    in_full_packs += pack_size(t) == 8;
    ASSERT_EQ(t["curve"].size(), u["curve"].size());
    for (size_t e = 0; e < t["curve"].size(); ++e)
      for (const char* field : {"train_loss", "val_loss", "val_metric"}) {
        const double x = t["curve"][e][field], y = u["curve"][e][field];
        // The same kernels run per member, so packing changes nothing beyond rounding.
        EXPECT_NEAR(x, y, 1e-6 * std::max(1.0, std::fabs(y)))
            << "trial " << n << " epoch " << e + 1 << " " << field;
      }
  }
  EXPECT_GE(in_full_packs, 24);
}

TEST(Packs, PrunedMembersLeaveThePackAndTheOthersGoOn) {
  const Study s = write_study("pack-asha", testing::kAshaStudy);
  ASSERT_EQ(run_packed(s, 6).exit_code, 0);
  int completed = 0;
  const json exported = export_json(s, "asha");
  for (const auto& t : exported["trials"]) {
    EXPECT_EQ(pack_size(t), 6) << t["number"];  // one pack per width
    if (t["params"]["learning_rate"].get<double>() < 1e-6) {
      EXPECT_EQ(t["status"], "pruned") << t["number"];
      EXPECT_LT(t["curve"].size(), 9u);
    } else if (t["status"] == "completed") {
      ++completed;
      EXPECT_EQ(t["curve"].size(), 9u) << "pack mates of pruned trials train to the end";
    }
  }
  EXPECT_GE(completed, 1);
}

// The worker dies in the middle of a pack (SIGKILL after trial 3's first epoch): its trials
// come back and are retried alone, so a trial that kills workers takes no pack mates down.
TEST(Packs, TrialsOfACrashedPackAreRetriedAlone) {
  const Study s = write_study("pack-crash", R"(name: crash
datasets: [iris]
seeds: [0, 1, 2, 3]
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 16}
  epochs: {value: 3}
)");
  const std::string env =
      "LAYERLAB_TEST_CRASH=after_epoch:3 LAYERLAB_TEST_CRASH_ONCE=" + (s.dir / "crashed").string();
  const auto r = run_packed(s, 4, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(s.dir / "crashed")) << "the hook never fired";
  const auto trials = trials_by_number(export_json(s, "crash"));
  ASSERT_EQ(trials.size(), 8u);
  int retried = 0;
  for (const auto& [n, t] : trials) {
    EXPECT_EQ(t["status"], "completed") << "trial " << n;
    if (t["attempts"].get<int>() > 1) {
      ++retried;
      EXPECT_EQ(pack_size(t), 1) << "trial " << n;
    } else {
      EXPECT_EQ(pack_size(t), 4) << "trial " << n;
    }
  }
  EXPECT_EQ(retried, 4) << "the crashed pack held 4 trials";
  EXPECT_EQ(trials.at(3)["attempts"], 2);
}

}  // namespace
}  // namespace layerlab
