#include "nn/trainer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu_backend.h"
#include "backend/float_env.h"
#include "common/error.h"
#include "test_util.h"

namespace layerlab::nn {
namespace {

// Two Gaussian blobs per class in 4 dimensions; labels from a fixed linear rule.
struct Blobs {
  std::vector<float> x, y;
  int64_t rows;
  Examples examples() const { return {x, y, rows, 4, 1}; }
};

Blobs make_blobs(int64_t rows, uint64_t seed, bool random_labels = false) {
  Blobs d;
  d.rows = rows;
  d.x = testing::normal_values(static_cast<size_t>(rows) * 4, seed);
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = &d.x[static_cast<size_t>(r) * 4];
    int label = (v[0] + 0.5f * v[1] - v[2] > 0) ? 1 : 0;
    if (v[3] > 1.0f) label = 2;
    if (random_labels) label = static_cast<int>(backend::mix64(seed + r) % 3);
    d.y.push_back(static_cast<float>(label));
  }
  return d;
}

Params small_params() {
  Params p;
  p.hidden_layers = 2;
  p.units = 16;
  p.epochs = 8;
  p.batch_size = 16;
  p.learning_rate = 0.01;
  return p;
}

const Task kThreeClasses{3};

TrainResult train_one(backend::Backend& b, const Params& p, const Task& t, const Blobs& tr,
                      const Blobs& va, TrainOptions o = {}) {
  o.keep_parameters = true;
  return train(b, p, t, tr.examples(), va.examples(), o);
}

TEST(Trainer, LearnsASeparableProblem) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(400, 1), val = make_blobs(200, 2);
  const TrainResult r = train_one(*b, small_params(), kThreeClasses, train, val);
  ASSERT_EQ(r.status, TrialStatus::kCompleted);
  ASSERT_EQ(r.epochs.size(), 8u);
  EXPECT_GT(r.epochs.back().val_metric, 0.9);
  EXPECT_LT(r.epochs.back().train_loss, r.epochs.front().train_loss);
  for (const auto& e : r.epochs) EXPECT_GE(e.seconds, 0.0);
}

void expect_identical(const TrainResult& a, const TrainResult& b) {
  ASSERT_EQ(a.epochs.size(), b.epochs.size());
  for (size_t e = 0; e < a.epochs.size(); ++e) {
    EXPECT_EQ(a.epochs[e].train_loss, b.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(a.epochs[e].val_loss, b.epochs[e].val_loss) << "epoch " << e + 1;
    EXPECT_EQ(a.epochs[e].val_metric, b.epochs[e].val_metric) << "epoch " << e + 1;
  }
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.parameters, b.parameters);
}

TEST(Trainer, SameSeedSameThreadsGivesBitIdenticalResults) {
  for (int threads : {1, 2}) {
    auto b = backend::make_cpu_backend(threads);
    const Blobs train = make_blobs(300, 1), val = make_blobs(100, 2);
    Params p = small_params();
    p.dropout = 0.2;
    p.batch_norm = true;
    const TrainResult first = train_one(*b, p, kThreeClasses, train, val);
    const TrainResult second = train_one(*b, p, kThreeClasses, train, val);
    expect_identical(first, second);
    p.seed = 1;
    const TrainResult other = train_one(*b, p, kThreeClasses, train, val);
    EXPECT_NE(first.parameters, other.parameters) << "the seed must matter";
  }
}

TEST(Trainer, PackGivesTheSameResultsAsTrainingAlone) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(300, 1), val = make_blobs(100, 2);
  std::vector<Params> members(3, small_params());
  for (auto& m : members) m.optimizer = "momentum", m.batch_norm = true;
  members[0].learning_rate = 0.05;
  members[1].seed = 7, members[1].weight_decay = 1e-3, members[1].dropout = 0.3;
  members[2].seed = 9, members[2].momentum = 0.5;
  TrainOptions o;
  o.keep_parameters = true;
  const auto packed = train_pack(*b, members, kThreeClasses, train.examples(), val.examples(), o);
  ASSERT_EQ(packed.size(), 3u);
  for (size_t i = 0; i < members.size(); ++i) {
    SCOPED_TRACE("member " + std::to_string(i));
    expect_identical(packed[i], train_one(*b, members[i], kThreeClasses, train, val));
  }
}

TEST(Trainer, PrunedMemberLeavesThePackAndOthersGoOn) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(200, 1), val = make_blobs(100, 2);
  std::vector<Params> members(2, small_params());
  members[1].seed = 3;
  TrainOptions o;
  o.keep_parameters = true;
  o.on_epoch = [](int member, const EpochRecord& r) { return !(member == 1 && r.epoch == 2); };
  const auto packed = train_pack(*b, members, kThreeClasses, train.examples(), val.examples(), o);
  EXPECT_EQ(packed[1].status, TrialStatus::kPruned);
  EXPECT_EQ(packed[1].epochs.size(), 2u);
  EXPECT_EQ(packed[1].message, "pruned after epoch 2");
  expect_identical(packed[0], train_one(*b, members[0], kThreeClasses, train, val));
}

// A pack over the size limit (TrainOptions::max_pack_bytes; 8 GiB by default, which a GPU
// pack of wide networks reaches) trains in parts that fit: every member's results are the
// ones it gets in one pack, each epoch is reported for the right member, and no more than
// a part is allocated at once.
TEST(Trainer, APackOverTheSizeLimitTrainsInPartsThatFit) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(200, 1), val = make_blobs(100, 2);
  std::vector<Params> members(5, small_params());
  for (size_t i = 0; i < members.size(); ++i) members[i].seed = 11 + static_cast<int>(i);
  members[3].learning_rate = 0.2;
  TrainOptions whole;
  whole.keep_parameters = true;
  std::vector<int> epochs_of(members.size(), 0);
  whole.on_epoch = [&](int member, const EpochRecord&) { return ++epochs_of.at(member) < 3; };
  const auto together =
      train_pack(*b, members, kThreeClasses, train.examples(), val.examples(), whole);

  Architecture a;
  a.inputs = 4;
  a.hidden =
      std::vector<int>(static_cast<size_t>(small_params().hidden_layers), small_params().units);
  a.outputs = 3;
  TrainOptions parts = whole;
  parts.max_pack_bytes = estimate_size(a, 2, std::max(small_params().batch_size, 100)).bytes;
  std::vector<int> part_epochs(members.size(), 0);
  int64_t most_in_use = 0;
  // A backend of its own: the first one holds the whole pack's blocks, pooled.
  auto fresh = backend::make_cpu_backend(1);
  parts.on_epoch = [&](int member, const EpochRecord&) {
    most_in_use = std::max(most_in_use, fresh->memory_in_use());
    return ++part_epochs.at(member) < 3;
  };
  const auto split =
      train_pack(*fresh, members, kThreeClasses, train.examples(), val.examples(), parts);
  ASSERT_EQ(split.size(), members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    SCOPED_TRACE("member " + std::to_string(i));
    expect_identical(split[i], together[i]);
    EXPECT_EQ(split[i].status, TrialStatus::kPruned);  // by the callback, at its own index
  }
  EXPECT_EQ(part_epochs, std::vector<int>(members.size(), 3));
  EXPECT_GT(most_in_use, 0);
  EXPECT_LT(most_in_use, estimate_size(a, 5, 100).bytes) << "all five were allocated at once";
}

// The order in which a pack's members report their epochs: (member, epoch) pairs.
std::vector<std::pair<int, int>> epoch_order(backend::Backend& b,
                                             const std::vector<Params>& members, const Blobs& train,
                                             const Blobs& val) {
  std::vector<std::pair<int, int>> order;
  TrainOptions o;
  o.on_epoch = [&](int member, const EpochRecord& r) {
    order.emplace_back(member, r.epoch);
    return true;
  };
  train_pack(b, members, kThreeClasses, train.examples(), val.examples(), o);
  return order;
}

// On the CPU a pack trains a layer of every member before the next layer, so a pack that
// outgrows the L2 cache trains each member slower than alone (docs/benchmarks.md): it
// trains in parts within CpuBackend::fast_pack_bytes(), one after the other. Members of
// 3 x 400 units hold about 5 MB each, more than half of any core's L2; members of
// small_params() about 10 KB.
TEST(Trainer, OnTheCpuAPackThatOutgrowsTheCacheTrainsInParts) {
  auto b = backend::make_cpu_backend(1);
  ASSERT_GT(b->fast_pack_bytes(), 0);
  EXPECT_EQ(backend::make_cpu_backend(2)->fast_pack_bytes(), 2 * b->fast_pack_bytes())
      << "each thread brings its core's cache";
  const Blobs train = make_blobs(64, 1), val = make_blobs(32, 2);
  std::vector<Params> wide(2, small_params());
  for (Params& p : wide) p.hidden_layers = 3, p.units = 400, p.epochs = 2;
  wide[1].seed = 5;
  EXPECT_EQ(epoch_order(*b, wide, train, val),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 1}, {1, 2}}))
      << "one member after the other";
  std::vector<Params> small(2, small_params());
  for (Params& p : small) p.epochs = 2;
  small[1].seed = 5;
  EXPECT_EQ(epoch_order(*b, small, train, val),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {0, 2}, {1, 2}}))
      << "one batched computation";
}

TEST(Trainer, APackIsHalvedUntilItFitsTheMemoryLimitAndTheCache) {
  auto b = backend::make_cpu_backend(1);
  const int64_t unlimited = NetworkLimits{}.max_bytes;
  Architecture small;
  small.inputs = 4, small.hidden = {8}, small.outputs = 3;
  EXPECT_EQ(pack_part_size(*b, small, 16, 32, 32, unlimited), 16) << "fits the cache whole";
  EXPECT_EQ(pack_part_size(*b, small, 16, 32, 32, estimate_size(small, 4, 32).bytes), 4)
      << "16 -> 8 -> 4 to fit the memory limit";
  EXPECT_EQ(pack_part_size(*b, small, 16, 1000, 32, estimate_size(small, 4, 32).bytes), 1)
      << "the memory limit is met at the rows held (validation), not the batch's";
  Architecture wide;
  wide.inputs = 64, wide.hidden.assign(4, 64), wide.outputs = 10;
  const int part = pack_part_size(*b, wide, 16, 32, 32, unlimited);
  ASSERT_LT(part, 16);
  EXPECT_TRUE(part == 1 || estimate_size(wide, part, 32).bytes <= b->fast_pack_bytes())
      << "a part fits unless it is one member";
  EXPECT_GT(estimate_size(wide, 2 * part, 32).bytes, b->fast_pack_bytes())
      << "the largest that fits";
}

TEST(Trainer, IncompatibleMembersAreRejected) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(50, 1), val = make_blobs(20, 2);
  std::vector<Params> members(2, small_params());
  members[1].units = 8;
  try {
    train_pack(*b, members, kThreeClasses, train.examples(), val.examples());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pack: members differ in layer widths");
  }
}

TEST(Trainer, ExplodingLossEndsAsDivergedNotACrash) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(200, 1), val = make_blobs(50, 2);
  Params p = small_params();
  p.optimizer = "sgd";
  p.learning_rate = 1e8;
  const TrainResult r = train_one(*b, p, kThreeClasses, train, val);
  EXPECT_EQ(r.status, TrialStatus::kDiverged);
  EXPECT_LT(r.epochs.size(), 8u);
  EXPECT_NE(r.message.find("NaN or infinite"), std::string::npos) << r.message;
}

#if defined(__x86_64__) || defined(__i386__)
// Training runs with denormals flushed (backend/float_env.h), and leaves the caller's thread
// as it found it.
TEST(Trainer, TrainsWithDenormalsFlushedAndRestoresTheThreadAfter) {
  auto b = backend::make_cpu_backend(1);
  const Blobs train = make_blobs(64, 1), val = make_blobs(32, 2);
  Params p = small_params();
  p.epochs = 2;
  int epochs_flushed = 0;
  TrainOptions o;
  o.on_epoch = [&](int, const EpochRecord&) {
    epochs_flushed += backend::denormals_flushed();
    return true;
  };
  ASSERT_FALSE(backend::denormals_flushed());
  const TrainResult r = train_one(*b, p, kThreeClasses, train, val, o);
  ASSERT_EQ(r.epochs.size(), 2u);
  EXPECT_EQ(epochs_flushed, 2);
  EXPECT_FALSE(backend::denormals_flushed());
}
#endif

TEST(Trainer, EarlyStoppingEndsAfterPatienceEpochsWithoutImprovement) {
  auto b = backend::make_cpu_backend(1);
  // Random labels: the network memorises the training rows and validation loss rises.
  const Blobs train = make_blobs(64, 1, true), val = make_blobs(64, 2, true);
  Params p = small_params();
  p.units = 64;
  p.epochs = 200;
  p.patience = 3;
  const TrainResult r = train_one(*b, p, kThreeClasses, train, val);
  ASSERT_EQ(r.status, TrialStatus::kEarlyStopped);
  EXPECT_EQ(static_cast<int>(r.epochs.size()), r.best_epoch + 3);
  for (size_t e = r.best_epoch; e < r.epochs.size(); ++e)
    EXPECT_GE(r.epochs[e].val_loss, r.epochs[r.best_epoch - 1].val_loss);
}

TEST(Trainer, RegressionReportsRmseAndLearns) {
  auto b = backend::make_cpu_backend(1);
  Blobs train = make_blobs(400, 1), val = make_blobs(100, 2);
  for (Blobs* d : {&train, &val})
    for (int64_t r = 0; r < d->rows; ++r) d->y[r] = 2.f * d->x[r * 4] - d->x[r * 4 + 1] + 0.5f;
  Params p = small_params();
  p.epochs = 20;
  const TrainResult r = train_one(*b, p, Task{0, 1}, train, val);
  ASSERT_EQ(r.status, TrialStatus::kCompleted);
  EXPECT_NEAR(r.epochs.back().val_metric, std::sqrt(r.epochs.back().val_loss), 1e-9);
  EXPECT_LT(r.epochs.back().val_metric, 0.3);
}

TEST(LearningRate, Schedules) {
  Params p;
  p.learning_rate = 0.1;
  p.epochs = 10;
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 37, 10), 0.1);
  p.lr_schedule = "step";
  p.lr_step_epochs = 3;
  p.lr_gamma = 0.5;
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 29, 10), 0.1);   // epoch 3 (0-based 2)
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 30, 10), 0.05);  // epoch 4
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 65, 10), 0.025);
  p.lr_schedule = "cosine";
  p.lr_min = 0.01;
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 0, 10), 0.1);
  EXPECT_NEAR(learning_rate_at(p, 50, 10), 0.055, 1e-12);
  EXPECT_NEAR(learning_rate_at(p, 100, 10), 0.01, 1e-12);
  p.warmup_epochs = 2;
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 0, 10), 0.1 / 20);
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 19, 10), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate_at(p, 20, 10), 0.1);
}

}  // namespace
}  // namespace layerlab::nn
