// Network: a pack of `pack` feed-forward networks of one shape, trained as one batched
// computation on a Backend. A single network is a pack of one.
//
// Each hidden layer: z = x W^T + b -> [batch norm] -> a = f(z) -> [dropout] -> [+ x when
// residual and the widths match]. The output layer is linear. Parameters of one member are
// one flat vector in PyTorch's order (per layer: W [out][in], b, then gamma, beta with batch
// norm), so one fused optimizer step updates a whole member, and weights move to and from
// PyTorch unchanged. Members sit `param_stride()` floats apart.
//
// Thread-safety: none; one thread drives a Network and its Backend.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"

namespace layerlab::nn {

enum class Init;

struct Architecture {
  int inputs = 0;
  std::vector<int> hidden;
  int outputs = 0;
  backend::Activation activation = backend::Activation::kRelu;
  bool batch_norm = false;
  bool residual = false;
  bool dropout = false;  // whether any member uses dropout (allocates masks)

  // Saturates at INT64_MAX instead of overflowing (an architecture read from a file may
  // claim anything).
  int64_t parameter_count() const;
  bool operator==(const Architecture&) const = default;
};

// Limits on one network, checked before anything is allocated (DESIGN.md, "Hostile
// input"): Params::validate() holds every parameter set to the widths and depth here, and
// Network's constructor (so training, packs and `predict`) to the parameter count and memory.
struct NetworkLimits {
  int64_t max_units = 1'000'000;         // the width of one hidden layer
  int64_t max_hidden_layers = 10'000;    // hidden layers (hidden_layers, or entries of layers)
  int64_t max_parameters = 100'000'000;  // weights, biases and batch-norm scales of one member
  // Estimated bytes of one pack (estimate_size): 8 GiB.
  int64_t max_bytes = int64_t{8} << 30;
};

// What a pack of `pack` networks of architecture `a` holds, for batches of up to
// `max_rows` rows: parameters per member, and bytes in all (parameters, gradients and two
// optimizer state vectors per member, plus every per-row buffer of every layer). Both
// saturate at INT64_MAX.
struct NetworkSize {
  int64_t parameters = 0;
  int64_t bytes = 0;
};
NetworkSize estimate_size(const Architecture& a, int pack, int64_t max_rows);

// Throws InvalidArgument when a layer is wider, the network deeper, or estimate_size()
// larger than `limits` allow, naming the limit: "network: 2 hidden layers of 1000000 units
// have 1000066000010 parameters; at most 100000000 (NetworkLimits::max_parameters)".
void check_network_size(const Architecture& a, int pack, int64_t max_rows,
                        const NetworkLimits& limits = {});

class Network {
 public:
  Network(backend::Backend& b, Architecture arch, int pack, int max_rows);

  const Architecture& architecture() const { return arch_; }
  int pack() const { return pack_; }
  int max_rows() const { return max_rows_; }
  int64_t parameter_count() const { return n_params_; }
  int64_t param_stride() const { return stride_; }

  // Draws member's weights from `init` (biases 0, gamma 1, beta 0); deterministic in seed.
  void initialize(int member, Init init, uint64_t seed);
  void set_parameters(int member, std::span<const float> flat);
  std::vector<float> parameters(int member) const;
  // Batch-norm running statistics (inference uses them): one vector per hidden layer, of its
  // width; empty without batch norm. set_ throws InvalidArgument naming the layer on a
  // count or width that does not match.
  std::vector<std::vector<float>> running_means(int member) const;
  std::vector<std::vector<float>> running_variances(int member) const;
  void set_running_statistics(int member, const std::vector<std::vector<float>>& mean,
                              const std::vector<std::vector<float>>& var);

  // Forward pass over x [pack][rows][inputs] on the device. Training mode uses batch
  // statistics and dropout; `step` selects dropout masks (same step, same masks).
  // Returns the outputs [pack][rows][outputs] on the device.
  const float* forward(const float* x, int rows, bool training, std::span<const float> dropout,
                       std::span<const uint64_t> seeds, uint64_t step);

  // Backward pass after a training forward with the same x and rows: d_out is the loss
  // gradient w.r.t. the outputs (it is overwritten). Writes gradients().
  void backward(const float* x, float* d_out, int rows);

  backend::PackedVector parameters_view() { return {params_.data(), stride_}; }
  backend::PackedVector gradients_view() { return {grads_.data(), stride_}; }

 private:
  struct Layer {
    int in = 0, out = 0;
    bool hidden = true, residual = false;
    int64_t w = 0, b = 0, gamma = 0, beta = 0;             // offsets in a member's parameter block
    backend::DeviceBuffer<float> z, a, h, xhat, mask, dh;  // [pack][max_rows][out]
    backend::DeviceBuffer<float> running_mean, running_var, mean, inv_std;  // [pack][out]
  };

  backend::Backend::BatchNormState bn_state(Layer& l);
  backend::PackedVector at(backend::DeviceBuffer<float>& buf, int64_t offset) {
    return {buf.data() + offset, stride_};
  }
  float* output_of(Layer& l) { return l.h.size() ? l.h.data() : l.a.data(); }
  std::vector<std::vector<float>> download_statistics(int member, bool variances) const;

  backend::Backend& b_;
  Architecture arch_;
  int pack_;
  int max_rows_;
  int64_t n_params_ = 0;
  int64_t stride_ = 0;
  backend::DeviceBuffer<float> params_, grads_;
  std::vector<Layer> layers_;
};

}  // namespace layerlab::nn
