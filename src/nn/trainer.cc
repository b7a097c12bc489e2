#include "nn/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/buffer.h"
#include "backend/float_env.h"
#include "common/error.h"
#include "nn/network.h"
#include "nn/optimizer.h"
#include "nn/registries.h"

namespace layerlab::nn {

using backend::DeviceBuffer;

namespace {

constexpr int kMaxEvalRows = 256;

// Rows of one validation batch, and the most rows a pack's network holds at once (a
// training batch or a validation batch).
int eval_rows_of(const Examples& val) {
  return static_cast<int>(std::clamp<int64_t>(val.rows, 1, kMaxEvalRows));
}
int max_rows_of(const Params& p, const Examples& val) {
  return std::max(p.batch_size, eval_rows_of(val));
}
constexpr uint64_t kDropoutSalt = 0xD5A61266F0C9392Cull;
constexpr uint64_t kShuffleSalt = 0x4F1BBCDCBFA53E0Bull;

// Fisher-Yates with a counter-based generator: the order depends only on (seed, epoch).
void shuffle(std::span<int32_t> order, uint64_t seed, int epoch) {
  std::iota(order.begin(), order.end(), 0);
  const uint64_t s = backend::mix64(seed ^ kShuffleSalt);
  for (size_t i = order.size(); i > 1; --i) {
    const uint64_t r = backend::mix64(s ^ backend::mix64((static_cast<uint64_t>(epoch) << 32) + i));
    std::swap(order[i - 1], order[r % i]);
  }
}

struct MemberState {
  bool active = true;
  double best_val_loss = std::numeric_limits<double>::infinity();
  int epochs_without_improvement = 0;
  TrainResult result;
};

Architecture architecture_of(std::span<const Params> members, const Task& task, int inputs) {
  Architecture a;
  a.inputs = inputs;
  a.hidden = members[0].hidden_widths();
  a.outputs = task.outputs();
  a.activation = activations().get(members[0].activation);
  a.batch_norm = members[0].batch_norm;
  a.residual = members[0].residual;
  a.dropout =
      std::any_of(members.begin(), members.end(), [](const Params& p) { return p.dropout > 0; });
  return a;
}

class PackTrainer {
 public:
  PackTrainer(backend::Backend& b, std::span<const Params> members, const Task& task,
              const Examples& train, const Examples& val)
      : b_(b),
        members_(members),
        task_(task),
        train_(train),
        val_(val),
        pack_(static_cast<int>(members.size())),
        batch_(members[0].batch_size),
        eval_rows_(eval_rows_of(val)),
        net_(b, architecture_of(members, task, train.features), pack_,
             max_rows_of(members[0], val)),
        optimizer_(b, members[0].optimizer, net_) {
    const int rows = net_.max_rows();
    const int outputs = task.outputs();
    train_x_ = upload(train.x);
    train_y_ = upload(train.y);
    val_x_ = upload(val.x);
    val_y_ = upload(val.y);
    batch_x_ = DeviceBuffer<float>(b, static_cast<size_t>(pack_) * rows * train.features);
    batch_y_ = DeviceBuffer<float>(b, static_cast<size_t>(pack_) * rows * train.targets);
    d_out_ = DeviceBuffer<float>(b, static_cast<size_t>(pack_) * rows * outputs);
    order_ = DeviceBuffer<int32_t>(b, static_cast<size_t>(pack_) * train.rows);
    val_order_ = DeviceBuffer<int32_t>(b, static_cast<size_t>(val.rows));
    std::vector<int32_t> identity(static_cast<size_t>(val.rows));
    std::iota(identity.begin(), identity.end(), 0);
    val_order_.upload(identity);
    loss_sum_ = DeviceBuffer<double>(b, pack_);
    correct_ = DeviceBuffer<double>(b, pack_);
    for (int p = 0; p < pack_; ++p) {
      net_.initialize(p, initializers().get(members[p].init), members[p].seed);
      dropout_.push_back(static_cast<float>(members[p].dropout));
      dropout_seeds_.push_back(backend::mix64(members[p].seed ^ kDropoutSalt));
    }
    states_.resize(pack_);
  }

  std::vector<TrainResult> run(const TrainOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const int epochs = members_[0].epochs;
    std::vector<int32_t> order(static_cast<size_t>(pack_) * train_.rows);
    for (int epoch = 1; epoch <= epochs && any_active(); ++epoch) {
      const auto epoch_start = std::chrono::steady_clock::now();
      for (int p = 0; p < pack_; ++p)
        shuffle(std::span(order).subspan(p * train_.rows, train_.rows), members_[p].seed, epoch);
      order_.upload(order);
      train_epoch(epoch);
      std::vector<double> train_loss = loss_sum_.download(), train_correct = correct_.download();
      evaluate();
      std::vector<double> val_loss = loss_sum_.download(), val_correct = correct_.download();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
      for (int p = 0; p < pack_; ++p) {
        if (!states_[p].active) continue;
        EpochRecord r;
        r.epoch = epoch;
        r.train_loss = train_loss[p] / static_cast<double>(train_.rows);
        r.train_metric = metric(train_loss[p], train_correct[p], train_.rows);
        r.val_loss = val_.rows ? val_loss[p] / static_cast<double>(val_.rows) : std::nan("");
        r.val_metric = metric(val_loss[p], val_correct[p], val_.rows);
        r.learning_rate =
            learning_rate_at(members_[p], epoch * steps_per_epoch() - 1, steps_per_epoch());
        r.seconds = seconds;
        finish_epoch(p, r, options);
      }
      if (options.after_epochs) options.after_epochs();
    }
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<TrainResult> out;
    for (int p = 0; p < pack_; ++p) {
      TrainResult r = std::move(states_[p].result);
      r.seconds = total;
      if (options.keep_parameters) {
        r.parameters = net_.parameters(p);
        r.running_mean = net_.running_means(p);
        r.running_var = net_.running_variances(p);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  DeviceBuffer<float> upload(std::span<const float> host) {
    DeviceBuffer<float> buf(b_, host.size());
    buf.upload(host.data(), host.size());
    return buf;
  }

  bool any_active() const {
    return std::any_of(states_.begin(), states_.end(),
                       [](const MemberState& s) { return s.active; });
  }

  // Accuracy for classification; RMSE for regression (the loss is the MSE).
  double metric(double loss_sum, double correct, int64_t rows) const {
    if (rows == 0) return std::nan("");
    return task_.classification() ? correct / static_cast<double>(rows)
                                  : std::sqrt(loss_sum / static_cast<double>(rows));
  }

  backend::Loss loss_kind() const {
    return task_.classification() ? backend::Loss::kSoftmaxCrossEntropy
                                  : backend::Loss::kMeanSquaredError;
  }

  int64_t steps_per_epoch() const { return (train_.rows + batch_ - 1) / batch_; }

  void train_epoch(int epoch) {
    loss_sum_.zero();
    correct_.zero();
    const int64_t spe = steps_per_epoch();
    std::vector<double> lr(pack_);
    for (int64_t s = 0; s < spe; ++s) {
      const int64_t start = s * batch_;
      const int rows = static_cast<int>(std::min<int64_t>(batch_, train_.rows - start));
      b_.gather_rows(pack_, rows, train_.features, train_x_.data(), order_.data() + start,
                     train_.rows, batch_x_.data());
      b_.gather_rows(pack_, rows, train_.targets, train_y_.data(), order_.data() + start,
                     train_.rows, batch_y_.data());
      const float* out = net_.forward(batch_x_.data(), rows, true, dropout_, dropout_seeds_,
                                      static_cast<uint64_t>(optimizer_.steps_taken()));
      b_.loss(loss_kind(), pack_, rows, task_.outputs(), out, batch_y_.data(), d_out_.data(), rows,
              loss_sum_.data(), correct_.data());
      net_.backward(batch_x_.data(), d_out_.data(), rows);
      const int64_t global = static_cast<int64_t>(epoch - 1) * spe + s;
      for (int p = 0; p < pack_; ++p)  // a stopped member stays as it ended
        lr[p] = states_[p].active ? learning_rate_at(members_[p], global, spe) : 0.0;
      optimizer_.step(net_, members_, lr);
    }
  }

  void evaluate() {
    loss_sum_.zero();
    correct_.zero();
    for (int64_t start = 0; start < val_.rows; start += eval_rows_) {
      const int rows = static_cast<int>(std::min<int64_t>(eval_rows_, val_.rows - start));
      b_.gather_rows(pack_, rows, val_.features, val_x_.data(), val_order_.data() + start, 0,
                     batch_x_.data());
      b_.gather_rows(pack_, rows, val_.targets, val_y_.data(), val_order_.data() + start, 0,
                     batch_y_.data());
      const float* out = net_.forward(batch_x_.data(), rows, false, dropout_, dropout_seeds_, 0);
      b_.loss(loss_kind(), pack_, rows, task_.outputs(), out, batch_y_.data(), nullptr, rows,
              loss_sum_.data(), correct_.data());
    }
  }

  void finish_epoch(int p, const EpochRecord& r, const TrainOptions& options) {
    MemberState& s = states_[p];
    s.result.epochs.push_back(r);
    const bool finite =
        std::isfinite(r.train_loss) && (val_.rows == 0 || std::isfinite(r.val_loss));
    if (!finite) {
      stop(s, TrialStatus::kDiverged,
           "loss became NaN or infinite in epoch " + std::to_string(r.epoch));
      if (options.on_epoch) options.on_epoch(p, r);  // the curve's last epoch; it has ended
      return;
    }
    if (val_.rows && r.val_loss < s.best_val_loss) {
      s.best_val_loss = r.val_loss;
      s.result.best_epoch = r.epoch;
      s.epochs_without_improvement = 0;
    } else if (val_.rows) {
      ++s.epochs_without_improvement;
    } else {
      s.result.best_epoch = r.epoch;
    }
    const int patience = members_[p].patience;
    if (patience > 0 && s.epochs_without_improvement >= patience) {
      stop(s, TrialStatus::kEarlyStopped,
           "validation loss did not improve for " + std::to_string(patience) + " epochs");
      if (options.on_epoch) options.on_epoch(p, r);  // the curve's last epoch; it has ended
      return;
    }
    if (options.on_epoch && !options.on_epoch(p, r))
      stop(s, TrialStatus::kPruned, "pruned after epoch " + std::to_string(r.epoch));
  }

  static void stop(MemberState& s, TrialStatus status, std::string why) {
    s.active = false;
    s.result.status = status;
    s.result.message = std::move(why);
  }

  backend::Backend& b_;
  std::span<const Params> members_;
  Task task_;
  const Examples& train_;
  const Examples& val_;
  int pack_;
  int batch_;
  int eval_rows_;
  Network net_;
  Optimizer optimizer_;
  DeviceBuffer<float> train_x_, train_y_, val_x_, val_y_, batch_x_, batch_y_, d_out_;
  DeviceBuffer<int32_t> order_, val_order_;
  DeviceBuffer<double> loss_sum_, correct_;
  std::vector<float> dropout_;
  std::vector<uint64_t> dropout_seeds_;
  std::vector<MemberState> states_;
};

}  // namespace

const char* status_name(TrialStatus s) {
  switch (s) {
    case TrialStatus::kCompleted:
      return "completed";
    case TrialStatus::kEarlyStopped:
      return "early_stopped";
    case TrialStatus::kDiverged:
      return "diverged";
    case TrialStatus::kPruned:
      return "pruned";
  }
  return "unknown";
}

bool pack_compatible(const Params& a, const Params& b, std::string* why) {
  auto differ = [&](const char* what) {
    if (why) *why = std::string("members differ in ") + what;
    return false;
  };
  if (a.hidden_widths() != b.hidden_widths()) return differ("layer widths");
  if (a.activation != b.activation) return differ("activation");
  if (a.batch_norm != b.batch_norm) return differ("batch_norm");
  if (a.residual != b.residual) return differ("residual");
  if (a.optimizer != b.optimizer) return differ("optimizer");
  if (a.precision != b.precision) return differ("precision");
  if (a.batch_size != b.batch_size) return differ("batch_size");
  if (a.epochs != b.epochs) return differ("epochs");
  if (a.lr_schedule != b.lr_schedule || a.lr_step_epochs != b.lr_step_epochs ||
      a.lr_gamma != b.lr_gamma || a.lr_min != b.lr_min || a.warmup_epochs != b.warmup_epochs)
    return differ("learning-rate schedule");
  return true;
}

double learning_rate_at(const Params& p, int64_t step, int64_t steps_per_epoch) {
  const double lr = p.learning_rate;
  const int64_t warm = static_cast<int64_t>(p.warmup_epochs) * steps_per_epoch;
  if (step < warm) return lr * static_cast<double>(step + 1) / static_cast<double>(warm);
  switch (schedules().get(p.lr_schedule)) {
    case Schedule::kConstant:
      return lr;
    case Schedule::kStep: {
      const int64_t epoch = step / steps_per_epoch;
      return lr * std::pow(p.lr_gamma, static_cast<double>(epoch / p.lr_step_epochs));
    }
    case Schedule::kCosine: {
      const int64_t total = static_cast<int64_t>(p.epochs) * steps_per_epoch - warm;
      const double t =
          static_cast<double>(step - warm) / static_cast<double>(std::max<int64_t>(total, 1));
      return p.lr_min + (lr - p.lr_min) * 0.5 * (1.0 + std::cos(M_PI * t));
    }
  }
  return lr;
}

int64_t parameter_count(const Params& p, const Task& task, int inputs) {
  return architecture_of(std::span<const Params>(&p, 1), task, inputs).parameter_count();
}

int pack_part_size(const backend::Backend& b, const Architecture& a, int members, int64_t rows,
                   int batch, int64_t max_bytes) {
  // Parts that fit the memory limit, and, where the backend trains a member slower in a
  // pack that outgrows its caches, parts that fit those (at a training batch's rows).
  int part = members;
  auto halve_while = [&](int64_t rows_held, int64_t limit) {
    while (part > 1 && estimate_size(a, part, rows_held).bytes > limit) part = (part + 1) / 2;
  };
  halve_while(rows, max_bytes);
  if (const int64_t fast = b.fast_pack_bytes(); fast > 0) halve_while(batch, fast);
  return part;
}

std::vector<TrainResult> train_pack(backend::Backend& b, std::span<const Params> members,
                                    const Task& task, const Examples& train,
                                    const Examples& validation, const TrainOptions& options) {
  if (members.empty()) throw invalid_argument("train: no members");
  for (const Params& p : members) {
    p.validate();
    std::string why;
    if (!pack_compatible(members[0], p, &why)) throw invalid_argument("pack: " + why);
  }
  if (train.rows < 1) throw invalid_argument("train: the training split is empty");
  if (validation.rows && validation.features != train.features)
    throw invalid_argument("train: validation and training features differ");
  b.set_precision(precisions().get(members[0].precision));
  const backend::FlushDenormals flush;  // on this thread, for the whole training (float_env.h)
  // A member too large alone is refused by the network.
  const int rows = max_rows_of(members[0], validation);
  const Architecture a = architecture_of(members, task, train.features);
  const size_t part = static_cast<size_t>(pack_part_size(
      b, a, static_cast<int>(members.size()), rows, members[0].batch_size, options.max_pack_bytes));
  std::vector<TrainResult> results;
  for (size_t first = 0; first < members.size(); first += part) {
    TrainOptions o = options;
    if (options.on_epoch)
      o.on_epoch = [&options, first](int i, const EpochRecord& r) {
        return options.on_epoch(static_cast<int>(first) + i, r);
      };
    PackTrainer trainer(b, members.subspan(first, std::min(part, members.size() - first)), task,
                        train, validation);
    for (TrainResult& r : trainer.run(o)) results.push_back(std::move(r));
  }
  return results;
}

}  // namespace layerlab::nn
