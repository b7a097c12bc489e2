// `layerlab run --pack K`: workers train same-shape trials as one batched computation. The
// results equal trial-by-trial training, a pruned member leaves its pack while the others go
// on, and after a crash the pack's trials are retried one by one. `--pack auto`, the
// default, trains trial by trial on the CPU, where packs are slower.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// 8 trials of one shape: they train in packs when asked to.
constexpr const char* kOneShapeStudy = R"(name: one-shape
datasets: [iris]
seeds: [0, 1, 2, 3]
parameters:
  hidden_layers: {value: 1}
  units: {value: 8}
  learning_rate: {values: [0.05, 0.01]}
  epochs: {value: 2}
)";

std::vector<int> pack_sizes(const Study& s) {
  std::vector<int> out;
  const json exported = export_json(s, "one-shape");
  for (const auto& t : exported["trials"]) out.push_back(pack_size(t));
  return out;
}

TEST(Packs, AutoIsTheDefaultAndTrainsTrialByTrialOnTheCpu) {
  const Study packed = write_study("pack-auto-control", kOneShapeStudy);
  ASSERT_EQ(run_packed(packed, 8).exit_code, 0);
  const std::vector<int> sizes = pack_sizes(packed);
  ASSERT_EQ(sizes.size(), 8u);
  for (int size : sizes) EXPECT_GT(size, 1) << "the study packs when asked to";
  for (const std::string flag : {"", " --pack auto"}) {
    SCOPED_TRACE("run" + flag);
    const Study s = write_study("pack-auto", kOneShapeStudy);
    const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store +
                                " --workers 1 --lease-seconds 1" + flag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(": 8 trials, 1 workers, pack 1 (auto: cpu)\n"), std::string::npos)
        << r.err;
    EXPECT_EQ(pack_sizes(s), std::vector<int>(8, 1));
  }
}

TEST(Packs, AWorkerSaysWhichPackItTrainsWith) {
  const Study s = write_study("pack-worker-line", kOneShapeStudy);
  ASSERT_EQ(run_packed(s, 1).exit_code, 0);
  const std::string worker = "worker --store " + s.store + " --study one-shape --exit-when-done";
  const auto a = run_layerlab(worker);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.err.rfind("worker: device cpu, 1 slot, pack 1 (auto: cpu)\n", 0), 0u) << a.err;
  const auto given = run_layerlab(worker + " --pack 3 --slots 2");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(given.err.rfind("worker: device cpu, 2 slots, pack 3\n", 0), 0u) << given.err;
}

TEST(Packs, ABadPackIsRefusedNamingTheOptionBeforeAnythingRuns) {
  const Study s = write_study("pack-bad", kOneShapeStudy);
  for (const std::string& command :
       {"run " + s.file.string() + " --workers 1", std::string("worker")})
    for (const std::string bad : {"0", "-3", "abc", "autox", "99999999999"}) {
      const auto r = run_layerlab(command + " --store " + s.store + " --pack " + bad);
      EXPECT_EQ(r.exit_code, 2) << command << " --pack " << bad;
      EXPECT_EQ(r.err, "layerlab " + command.substr(0, command.find(' ')) +
                           ": error: --pack: expected a whole number from 1 to 65536 or 'auto', "
                           "got '" +
                           bad + "'\n");
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  EXPECT_FALSE(std::filesystem::exists(s.dir / "layerlab.db")) << "a refused command made a store";
}

}  // namespace
}  // namespace layerlab
