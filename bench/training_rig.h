// One pack of synthetic MLPs with everything a training step touches (network, momentum
// optimizer, a pool of random batches, labels, the loss gradient), on the CPU backend: what
// engine_bench times whole and gemm_bench times the products of.
#pragma once

#include <memory>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu_backend.h"
#include "nn/network.h"
#include "nn/optimizer.h"

namespace layerlab::bench {

struct MlpShape {
  int width, depth, batch, inputs, threads;
  static constexpr int kClasses = 10;
};

// GEMM floating-point operations of one training step: forward, weight gradient, and input
// gradient of every layer but the first.
inline double gemm_flops_per_step(const MlpShape& s) {
  double flops = 0;
  int in = s.inputs;
  for (int l = 0; l <= s.depth; ++l) {
    const int out = l < s.depth ? s.width : MlpShape::kClasses;
    flops += 2.0 * s.batch * in * out * (l == 0 ? 2 : 3);
    in = out;
  }
  return flops;
}

inline std::vector<float> random_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 2.f * backend::uniform01(seed, 0, i) - 1.f;
  return v;
}

// The network engine_bench and gemm_bench train: `depth` hidden layers of `width`.
inline nn::Architecture mlp_architecture(const MlpShape& s) {
  nn::Architecture a;
  a.inputs = s.inputs;
  a.hidden.assign(s.depth, s.width);
  a.outputs = MlpShape::kClasses;
  return a;
}

// Members differ in their initial weights; batches cycle through kPool, as the PyTorch peer's do.
class TrainingRig {
 public:
  static constexpr int kPool = 8;

  TrainingRig(const MlpShape& s, int pack)
      : s_(s),
        pack_(pack),
        rows_(static_cast<size_t>(pack) * s.batch),
        b_(backend::make_cpu_backend(s.threads)),
        net_(*b_, mlp_architecture(s), pack, s.batch),
        x_(*b_, kPool * rows_ * s.inputs),
        y_(*b_, kPool * rows_),
        d_out_(*b_, rows_ * MlpShape::kClasses),
        loss_(*b_, pack),
        no_dropout_(pack, 0.f),
        seeds_(pack, 0) {
    for (int m = 0; m < pack; ++m) net_.initialize(m, nn::Init::kGlorotUniform, m);
    nn::Params p;
    p.optimizer = "momentum";
    p.learning_rate = 0.01;
    members_.assign(pack, p);
    lr_.assign(pack, p.learning_rate);
    opt_ = std::make_unique<nn::Optimizer>(*b_, p.optimizer, net_);
    x_.upload(random_values(x_.size(), 1));
    std::vector<float> labels(y_.size());
    for (size_t i = 0; i < labels.size(); ++i)
      labels[i] = static_cast<float>(backend::mix64(i) % MlpShape::kClasses);
    y_.upload(labels);
  }

  // The products of a step and what is fused into them: the forward pass, then (after loss())
  // the backward pass.
  void forward() { out_ = net_.forward(batch(), s_.batch, true, no_dropout_, seeds_, step_); }
  void loss() {
    b_->loss(backend::Loss::kSoftmaxCrossEntropy, pack_, s_.batch, MlpShape::kClasses, out_,
             y_.data() + pool_index() * rows_, d_out_.data(), s_.batch, loss_.data(), nullptr);
  }
  void backward() { net_.backward(batch(), d_out_.data(), s_.batch); }
  // The optimizer's step; the next batch.
  void update() {
    opt_->step(net_, members_, lr_);
    ++step_;
  }
  void step() { forward(), loss(), backward(), update(); }

  int64_t steps() const { return step_; }
  size_t rows() const { return rows_; }

 private:
  size_t pool_index() const { return static_cast<size_t>(step_ % kPool); }
  const float* batch() const { return x_.data() + pool_index() * rows_ * s_.inputs; }

  MlpShape s_;
  int pack_;
  size_t rows_;
  std::unique_ptr<backend::Backend> b_;
  nn::Network net_;
  std::vector<nn::Params> members_;
  std::vector<double> lr_;
  std::unique_ptr<nn::Optimizer> opt_;
  backend::DeviceBuffer<float> x_, y_, d_out_;
  backend::DeviceBuffer<double> loss_;
  std::vector<float> no_dropout_;
  std::vector<uint64_t> seeds_;
  const float* out_ = nullptr;
  int64_t step_ = 0;
};

}  // namespace layerlab::bench
