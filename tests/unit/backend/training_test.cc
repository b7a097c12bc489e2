// Whole training runs (nn::train_pack) on CUDA against the CPU, and packed against alone on
// CUDA (each also with the CPU on 2 threads as the tested device, which checks the tests
// themselves everywhere). Tolerances:
//  - CUDA against CPU, per epoch: train and validation loss within 2e-3 * max(1, |cpu|),
//    accuracy within 0.03 (3 of 100 validation rows), RMSE like the losses. Single operations
//    agree to ~1e-6 relative (ops_test.cc); 76 steps of training let such differences grow
//    but, on these well-conditioned problems, by far less than 1000x.
//  - tf32 and bf16 training against fp32 on the CPU: final losses within 10%, and both learn
//    (validation accuracy >= 0.85 on separable blobs).
//  - packed against alone on CUDA: losses within 1e-4 relative, weights within 1e-3: the kernels
//    are per member and do not depend on the pack (tested_columns.cu), but cuBLAS may choose
//    another algorithm for a batch of 3 than for 1.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend_fixture.h"
#include "nn/trainer.h"
#include "unit/nn/test_util.h"

namespace layerlab::nn {
namespace {

// Gaussian blobs in 4 dimensions: 3 classes from a fixed linear rule, or a smooth regression
// target (2 outputs).
struct Data {
  std::vector<float> x, y;
  int64_t rows;
  int targets;
  Examples examples() const { return {x, y, rows, 4, targets}; }
};

Data make_data(int64_t rows, uint64_t seed, bool regression) {
  Data d{testing::normal_values(static_cast<size_t>(rows) * 4, seed), {}, rows, regression ? 2 : 1};
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = &d.x[static_cast<size_t>(r) * 4];
    if (regression) {
      d.y.push_back(std::tanh(v[0] - 0.5f * v[1]));
      d.y.push_back(0.3f * v[2] * v[3]);
    } else {
      d.y.push_back(v[3] > 1.f ? 2.f : (v[0] + 0.5f * v[1] - v[2] > 0 ? 1.f : 0.f));
    }
  }
  return d;
}

struct Config {
  std::string name;
  Params params;
  bool regression = false;
};

std::vector<Config> configs() {
  Params base;
  base.hidden_layers = 2;
  base.units = 16;
  base.epochs = 4;
  base.batch_size = 16;
  base.learning_rate = 0.01;
  std::vector<Config> c;
  auto add = [&](std::string name, auto change, bool regression = false) {
    Params p = base;
    change(p);
    c.push_back({std::move(name), p, regression});
  };
  add("relu, sgd", [](Params& p) { p.optimizer = "sgd", p.learning_rate = 0.1; });
  add("batch norm, momentum", [](Params& p) { p.batch_norm = true, p.optimizer = "momentum"; });
  add("residual, adam", [](Params& p) { p.residual = true, p.optimizer = "adam"; });
  add("dropout, nesterov", [](Params& p) { p.dropout = 0.3, p.optimizer = "nesterov"; });
  add("tanh, rmsprop",
      [](Params& p) { p.activation = "tanh", p.optimizer = "rmsprop", p.learning_rate = 0.003; });
  add("gelu, adagrad",
      [](Params& p) { p.activation = "gelu", p.optimizer = "adagrad", p.learning_rate = 0.05; });
  add("elu, adamw, weight decay, cosine schedule", [](Params& p) {
    p.activation = "elu", p.optimizer = "adamw", p.weight_decay = 0.01, p.lr_schedule = "cosine";
  });
  add(
      "regression: sigmoid, batch norm, dropout, momentum",
      [](Params& p) {
        p.activation = "sigmoid", p.batch_norm = true, p.dropout = 0.1, p.optimizer = "momentum";
      },
      true);
  return c;
}

Task task_of(const Config& c) {
  return c.regression ? Task{0, 2} : Task{3};
}

void expect_close(double got, double want, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), rel * std::max(1.0, std::fabs(want)))
      << what << ": tested " << got << ", cpu " << want;
}

class Training : public backend::testing::AgainstCpu {};
LAYERLAB_AGAINST_CPU(Training);

TEST_P(Training, LossCurvesMatchTheCpu) {
  for (const Config& c : configs()) {
    SCOPED_TRACE(c.name);
    const Data train = make_data(300, 1, c.regression), val = make_data(100, 2, c.regression);
    const TrainResult want =
        nn::train(*cpu_, c.params, task_of(c), train.examples(), val.examples());
    const TrainResult got =
        nn::train(*tested_, c.params, task_of(c), train.examples(), val.examples());
    ASSERT_EQ(got.status, want.status) << got.message;
    ASSERT_EQ(got.epochs.size(), want.epochs.size());
    for (size_t e = 0; e < want.epochs.size(); ++e) {
      const std::string epoch = "epoch " + std::to_string(e + 1);
      expect_close(got.epochs[e].train_loss, want.epochs[e].train_loss, 2e-3,
                   epoch + " train loss");
      expect_close(got.epochs[e].val_loss, want.epochs[e].val_loss, 2e-3, epoch + " val loss");
      if (c.regression)
        expect_close(got.epochs[e].val_metric, want.epochs[e].val_metric, 2e-3, epoch + " rmse");
      else
        EXPECT_NEAR(got.epochs[e].val_metric, want.epochs[e].val_metric, 0.03) << epoch;
    }
  }
}

TEST_P(Training, Tf32AndBf16LearnLikeFp32) {
  if (tested_is_cpu()) GTEST_SKIP() << "the cpu computes in fp32 only";
  const Data train = make_data(300, 1, false), val = make_data(100, 2, false);
  Params p = configs()[2].params;  // residual, adam
  p.epochs = 8;
  const TrainResult fp32 = nn::train(*cpu_, p, Task{3}, train.examples(), val.examples());
  for (const char* precision : {"tf32", "bf16"}) {
    SCOPED_TRACE(precision);
    p.precision = precision;
    const TrainResult r = nn::train(*tested_, p, Task{3}, train.examples(), val.examples());
    ASSERT_EQ(r.status, TrialStatus::kCompleted) << r.message;
    EXPECT_EQ(tested_->precision(), p.precision == std::string("tf32") ? backend::Precision::kTf32
                                                                       : backend::Precision::kBf16);
    expect_close(r.epochs.back().train_loss, fp32.epochs.back().train_loss, 0.1,
                 "final train loss");
    expect_close(r.epochs.back().val_loss, fp32.epochs.back().val_loss, 0.1, "final val loss");
    EXPECT_GE(r.epochs.back().val_metric, 0.85);
  }
}

TEST_P(Training, PackGivesTheSameResultsAsTrainingAlone) {
  const Data train = make_data(300, 1, false), val = make_data(100, 2, false);
  std::vector<Params> members(3, configs()[1].params);  // batch norm, momentum
  members[0].learning_rate = 0.05;
  members[1].seed = 7, members[1].weight_decay = 1e-3, members[1].dropout = 0.3;
  members[2].seed = 9, members[2].momentum = 0.5;
  TrainOptions o;
  o.keep_parameters = true;
  const auto packed = train_pack(*tested_, members, Task{3}, train.examples(), val.examples(), o);
  ASSERT_EQ(packed.size(), members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    SCOPED_TRACE("member " + std::to_string(i));
    const TrainResult alone =
        nn::train(*tested_, members[i], Task{3}, train.examples(), val.examples(), o);
    ASSERT_EQ(packed[i].epochs.size(), alone.epochs.size());
    for (size_t e = 0; e < alone.epochs.size(); ++e) {
      expect_close(packed[i].epochs[e].train_loss, alone.epochs[e].train_loss, 1e-4, "train loss");
      expect_close(packed[i].epochs[e].val_loss, alone.epochs[e].val_loss, 1e-4, "val loss");
    }
    ASSERT_EQ(packed[i].parameters.size(), alone.parameters.size());
    for (size_t j = 0; j < alone.parameters.size(); ++j)
      ASSERT_NEAR(packed[i].parameters[j], alone.parameters[j], 1e-3) << "weight " << j;
  }
}

}  // namespace
}  // namespace layerlab::nn
