// The epoch callback sees every epoch of a curve, the one in which a trial stops early or
// diverges included: workers store curves from it, and `rerun` compares those curves with a
// fresh run epoch by epoch. The round callback follows each epoch of a pack, once every
// member's epoch callback has run: workers store a pack's epochs together from it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "nn/trainer.h"

namespace layerlab::nn {
namespace {

struct Data {
  std::vector<float> x, y;
  Examples examples() const { return {x, y, static_cast<int64_t>(y.size()), 2, 1}; }
};

// Labels unrelated to the features: validation loss stops improving quickly.
Data noise(int rows, uint64_t seed) {
  Data d;
  for (int r = 0; r < rows; ++r) {
    d.x.push_back(backend::uniform01(seed, 0, r) - 0.5f);
    d.x.push_back(backend::uniform01(seed, 1, r) - 0.5f);
    d.y.push_back(static_cast<float>(backend::mix64(seed + r) % 2));
  }
  return d;
}

std::vector<int> seen_epochs(const Params& p, TrainResult& r) {
  auto b = backend::make_cpu_backend(1);
  const Data train = noise(64, 1), val = noise(64, 2);
  std::vector<int> seen;
  TrainOptions o;
  o.on_epoch = [&](int, const EpochRecord& e) {
    seen.push_back(e.epoch);
    return true;
  };
  r = nn::train(*b, p, Task{2}, train.examples(), val.examples(), o);
  return seen;
}

TEST(EpochCallback, SeesTheEpochInWhichATrialStopsEarly) {
  Params p;
  p.units = 32;
  p.epochs = 200;
  p.patience = 2;
  p.learning_rate = 0.05;
  TrainResult r;
  const std::vector<int> seen = seen_epochs(p, r);
  ASSERT_EQ(r.status, TrialStatus::kEarlyStopped);
  ASSERT_LT(r.epochs.size(), 200u);
  ASSERT_EQ(seen.size(), r.epochs.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int>(i) + 1);
}

TEST(EpochCallback, SeesTheEpochInWhichATrialDiverges) {
  Params p;
  p.optimizer = "sgd";
  p.learning_rate = 1e8;
  p.epochs = 20;
  TrainResult r;
  const std::vector<int> seen = seen_epochs(p, r);
  ASSERT_EQ(r.status, TrialStatus::kDiverged);
  ASSERT_EQ(seen.size(), r.epochs.size());
  EXPECT_EQ(seen.back(), static_cast<int>(r.epochs.size()));
}

TEST(EpochCallback, ARoundEndsAfterEveryMemberOfThePackReportedItsEpoch) {
  auto b = backend::make_cpu_backend(1);
  const Data train = noise(64, 1), val = noise(64, 2);
  std::vector<Params> members(3);
  for (int i = 0; i < 3; ++i) {
    members[i].units = 8;
    members[i].epochs = 3;
    members[i].seed = static_cast<uint64_t>(i);
  }
  std::vector<std::string> calls;
  TrainOptions o;
  o.on_epoch = [&](int member, const EpochRecord& e) {
    calls.push_back(std::to_string(member) + "@" + std::to_string(e.epoch));
    return !(member == 1 && e.epoch == 2);  // member 1 is pruned after its second epoch
  };
  o.after_epochs = [&] { calls.push_back("end"); };
  train_pack(*b, members, Task{2}, train.examples(), val.examples(), o);
  EXPECT_EQ(calls, (std::vector<std::string>{"0@1", "1@1", "2@1", "end", "0@2", "1@2", "2@2", "end",
                                             "0@3", "2@3", "end"}));
}

}  // namespace
}  // namespace layerlab::nn
