// The training loop: shuffled minibatches, per-epoch train and validation metrics, early
// stopping, divergence detection, and a callback per epoch through which a pruner may stop
// a trial. It trains a pack of same-shape members at once (a single trial is a pack of
// one); each member keeps its own seed, learning rate, momentum, weight decay, dropout,
// records and stopping, and gives the same result as when trained alone.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/network.h"
#include "nn/params.h"

namespace layerlab::nn {

// Examples on the host: x is rows x features, y is rows x targets (class ids as floats for
// classification, where targets == 1).
struct Examples {
  std::span<const float> x;
  std::span<const float> y;
  int64_t rows = 0;
  int features = 0;
  int targets = 1;
};

struct Task {
  int classes = 0;  // > 0: classification with softmax cross-entropy; 0: regression (MSE)
  int targets = 1;  // regression outputs
  int outputs() const { return classes > 0 ? classes : targets; }
  bool classification() const { return classes > 0; }
  const char* metric_name() const { return classification() ? "val_accuracy" : "val_rmse"; }
};

struct EpochRecord {
  int epoch = 0;  // 1-based
  double train_loss = 0;
  double train_metric = 0;  // accuracy, or RMSE for regression, on the training batches
  double val_loss = 0;
  double val_metric = 0;     // accuracy, or RMSE for regression
  double learning_rate = 0;  // at the epoch's last step
  double seconds = 0;        // wall time of the epoch, training and validation
};

enum class TrialStatus { kCompleted, kEarlyStopped, kDiverged, kPruned };
const char* status_name(TrialStatus s);

struct TrainResult {
  TrialStatus status = TrialStatus::kCompleted;
  std::vector<EpochRecord> epochs;
  int best_epoch = 0;  // epoch with the lowest validation loss
  double seconds = 0;
  std::string message;            // why it stopped, for diverged / pruned / early stopped
  std::vector<float> parameters;  // the final weights, when asked for
  // With batch norm, when the weights are asked for: the running statistics inference uses,
  // one vector per hidden layer (Network::running_means / running_variances).
  std::vector<std::vector<float>> running_mean, running_var;
};

// Called after every epoch of every active member, the epoch in which a member diverges or
// stops early included (so a caller that stores the curve from it gets every epoch; the
// return value is then ignored); returning false prunes the member.
using EpochCallback = std::function<bool(int member, const EpochRecord&)>;
// Called once an epoch has ended for the whole pack: after on_epoch of every member that
// trained in it (a caller stores what those callbacks gathered, all members together).
using RoundCallback = std::function<void()>;

struct TrainOptions {
  EpochCallback on_epoch;
  RoundCallback after_epochs;
  bool keep_parameters = false;
  // A pack whose estimated size (estimate_size) is above this trains in parts that fit,
  // one after the other; each member's results are the same either way.
  int64_t max_pack_bytes = NetworkLimits{}.max_bytes;
};

// The weights, biases and batch-norm scales of the network `p` describes for `task` on
// `inputs` features (what train_pack trains; saturates at INT64_MAX).
int64_t parameter_count(const Params& p, const Task& task, int inputs);

// How many members of a pack of `members` train together (train_pack): the pack halved
// until its estimate_size at `rows` rows fits max_bytes and, where the backend has a
// fast_pack_bytes(), at `batch` rows fits that too.
int pack_part_size(const backend::Backend& b, const Architecture& a, int members, int64_t rows,
                   int batch, int64_t max_bytes);

// Trains members (same architecture, optimizer, batch size, epochs, schedule; see
// pack_compatible) on the same data. Throws InvalidArgument on incompatible members. A pack
// over options.max_pack_bytes, or over the backend's fast_pack_bytes() (the CPU's cache),
// trains in parts that fit, one after the other; each member's results are the same.
std::vector<TrainResult> train_pack(backend::Backend& b, std::span<const Params> members,
                                    const Task& task, const Examples& train,
                                    const Examples& validation, const TrainOptions& options = {});

inline TrainResult train(backend::Backend& b, const Params& p, const Task& task,
                         const Examples& train_set, const Examples& validation,
                         const TrainOptions& options = {}) {
  return train_pack(b, std::span<const Params>(&p, 1), task, train_set, validation, options)[0];
}

// Whether two parameter sets can train in one pack; if not, `why` names the first difference.
bool pack_compatible(const Params& a, const Params& b, std::string* why = nullptr);

// The learning rate at global step `step` (0-based) of a run with steps_per_epoch steps.
double learning_rate_at(const Params& p, int64_t step, int64_t steps_per_epoch);

}  // namespace layerlab::nn
