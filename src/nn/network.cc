#include "nn/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "nn/registries.h"

namespace layerlab::nn {

using backend::Activation;
using backend::DeviceBuffer;
using backend::GemmArgs;
using backend::PackedVector;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// a + b and a * b for non-negative values, saturating at INT64_MAX.
int64_t add_sat(int64_t a, int64_t b) {
  return a > kInt64Max - b ? kInt64Max : a + b;
}
int64_t mul_sat(int64_t a, int64_t b) {
  return a != 0 && b > kInt64Max / a ? kInt64Max : a * b;
}

std::string describe(const Architecture& a) {
  std::string widths;
  if (a.hidden.empty()) return "a network with no hidden layer";
  const bool uniform =
      std::all_of(a.hidden.begin(), a.hidden.end(), [&](int w) { return w == a.hidden[0]; });
  if (uniform)
    return fmt::format("{} hidden layer{} of {} units", a.hidden.size(),
                       a.hidden.size() == 1 ? "" : "s", a.hidden[0]);
  const auto widest = *std::max_element(a.hidden.begin(), a.hidden.end());
  return fmt::format("{} hidden layers up to {} units", a.hidden.size(), widest);
}

}  // namespace

int64_t Architecture::parameter_count() const {
  int64_t n = 0;
  int64_t in = std::max(inputs, 0);
  for (int width : hidden) {
    const int64_t w = std::max(width, 0);
    n = add_sat(n, add_sat(mul_sat(in, w), w + (batch_norm ? 2 * w : 0)));
    in = w;
  }
  const int64_t out = std::max(outputs, 0);
  return add_sat(n, add_sat(mul_sat(in, out), out));
}

NetworkSize estimate_size(const Architecture& a, int pack, int64_t max_rows) {
  NetworkSize s;
  s.parameters = a.parameter_count();
  const int64_t members = std::max(pack, 1);
  const int64_t rows = mul_sat(members, std::max<int64_t>(max_rows, 1));
  // Parameters, gradients and the optimizer's two state vectors, per member.
  int64_t floats = mul_sat(mul_sat(s.parameters, 4), members);
  // Per hidden layer: z, a, dh, then h (dropout or residual), mask (dropout), xhat (batch
  // norm), each [rows][width]; batch norm's four statistics per member. The output: z.
  const int64_t per_row =
      3 + (a.dropout || a.residual ? 1 : 0) + (a.dropout ? 1 : 0) + (a.batch_norm ? 1 : 0);
  for (int w : a.hidden) {
    floats = add_sat(floats, mul_sat(mul_sat(rows, std::max(w, 0)), per_row));
    if (a.batch_norm) floats = add_sat(floats, mul_sat(mul_sat(members, std::max(w, 0)), 4));
  }
  floats = add_sat(floats, mul_sat(rows, std::max(a.outputs, 0)));
  // The batch being trained on, and its targets.
  floats = add_sat(floats, mul_sat(rows, add_sat(std::max(a.inputs, 0), std::max(a.outputs, 0))));
  s.bytes = mul_sat(floats, static_cast<int64_t>(sizeof(float)));
  return s;
}

void check_network_size(const Architecture& a, int pack, int64_t max_rows,
                        const NetworkLimits& limits) {
  if (static_cast<int64_t>(a.hidden.size()) > limits.max_hidden_layers)
    throw invalid_argument(
        fmt::format("network: {} hidden layers; at most {} (NetworkLimits::max_hidden_layers)",
                    a.hidden.size(), limits.max_hidden_layers));
  for (int w : a.hidden)
    if (w > limits.max_units)
      throw invalid_argument(
          fmt::format("network: a hidden layer of {} units; at most {} (NetworkLimits::max_units)",
                      w, limits.max_units));
  const NetworkSize s = estimate_size(a, pack, max_rows);
  // Inputs and outputs are 0 when the data is not known yet (a study being checked).
  const std::string io =
      a.inputs > 0 ? fmt::format(" ({} inputs, {} outputs)", a.inputs, a.outputs) : "";
  const std::string more = a.inputs > 0 ? "" : " or more";
  if (s.parameters > limits.max_parameters)
    throw invalid_argument(fmt::format(
        "network: {}{} {} {}{} parameters; at most {} (NetworkLimits::max_parameters)", describe(a),
        io, a.hidden.size() == 1 ? "has" : "have", s.parameters, more, limits.max_parameters));
  if (s.bytes > limits.max_bytes)
    throw invalid_argument(fmt::format(
        "network: {}{} in a pack of {} with batches of {} rows need{} about {}{} MiB; at most {} "
        "MiB (NetworkLimits::max_bytes)",
        describe(a), io, pack, max_rows, a.hidden.size() == 1 ? "s" : "", s.bytes >> 20, more,
        limits.max_bytes >> 20));
}

Network::Network(backend::Backend& b, Architecture arch, int pack, int max_rows)
    : b_(b), arch_(std::move(arch)), pack_(pack), max_rows_(max_rows) {
  if (arch_.inputs < 1 || arch_.outputs < 1 || pack_ < 1 || max_rows_ < 1)
    throw invalid_argument("network: inputs, outputs, pack and rows must be positive");
  check_network_size(arch_, pack_, max_rows_);
  n_params_ = arch_.parameter_count();
  stride_ = (n_params_ + 15) / 16 * 16;  // 64-byte aligned member blocks
  params_ = DeviceBuffer<float>(b_, stride_ * pack_);
  grads_ = DeviceBuffer<float>(b_, stride_ * pack_);
  params_.zero();
  grads_.zero();

  const int64_t rows = static_cast<int64_t>(pack_) * max_rows_;
  int64_t offset = 0;
  int in = arch_.inputs;
  const size_t n_layers = arch_.hidden.size() + 1;
  layers_.resize(n_layers);
  for (size_t i = 0; i < n_layers; ++i) {
    Layer& l = layers_[i];
    l.hidden = i + 1 < n_layers;
    l.in = in;
    l.out = l.hidden ? arch_.hidden[i] : arch_.outputs;
    l.residual = l.hidden && arch_.residual && l.in == l.out;
    l.w = offset;
    offset += static_cast<int64_t>(l.in) * l.out;
    l.b = offset;
    offset += l.out;
    l.z = DeviceBuffer<float>(b_, rows * l.out);
    if (l.hidden) {
      l.a = DeviceBuffer<float>(b_, rows * l.out);
      l.dh = DeviceBuffer<float>(b_, rows * l.out);
      if (arch_.dropout || l.residual) l.h = DeviceBuffer<float>(b_, rows * l.out);
      if (arch_.dropout) l.mask = DeviceBuffer<float>(b_, rows * l.out);
      if (arch_.batch_norm) {
        l.gamma = offset;
        l.beta = offset + l.out;
        offset += 2 * l.out;
        l.xhat = DeviceBuffer<float>(b_, rows * l.out);
        for (auto* buf : {&l.running_mean, &l.running_var, &l.mean, &l.inv_std})
          *buf = DeviceBuffer<float>(b_, static_cast<size_t>(pack_) * l.out);
        l.running_mean.zero();
        b_.fill(l.running_var.data(), pack_ * l.out, 1.f);
      }
    }
    in = l.out;
  }
}

void Network::initialize(int member, Init init, uint64_t seed) {
  std::vector<float> host(static_cast<size_t>(n_params_), 0.f);
  for (size_t li = 0; li < layers_.size(); ++li) {
    const Layer& l = layers_[li];
    const double fan_in = l.in, fan_out = l.out;
    double scale = 0;
    bool uniform = false;
    switch (init) {
      case Init::kGlorotUniform:
        scale = std::sqrt(6.0 / (fan_in + fan_out));
        uniform = true;
        break;
      case Init::kGlorotNormal:
        scale = std::sqrt(2.0 / (fan_in + fan_out));
        break;
      case Init::kHeUniform:
        scale = std::sqrt(6.0 / fan_in);
        uniform = true;
        break;
      case Init::kHeNormal:
        scale = std::sqrt(2.0 / fan_in);
        break;
      case Init::kLecunNormal:
        scale = std::sqrt(1.0 / fan_in);
        break;
    }
    const int64_t n = static_cast<int64_t>(l.in) * l.out;
    for (int64_t i = 0; i < n; ++i) {
      const double u1 = backend::uniform01(seed, li, 2 * i);
      const double u2 = backend::uniform01(seed, li, 2 * i + 1);
      const double v = uniform
                           ? (2.0 * u1 - 1.0) * scale
                           : scale * std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * M_PI * u2);
      host[l.w + i] = static_cast<float>(v);
    }
    if (l.hidden && arch_.batch_norm)
      for (int c = 0; c < l.out; ++c) host[l.gamma + c] = 1.f;
  }
  set_parameters(member, host);
}

void Network::set_parameters(int member, std::span<const float> flat) {
  if (static_cast<int64_t>(flat.size()) != n_params_)
    throw invalid_argument("network: expected " + std::to_string(n_params_) + " parameters, got " +
                           std::to_string(flat.size()));
  params_.upload(flat.data(), flat.size(), static_cast<size_t>(member * stride_));
}

std::vector<float> Network::parameters(int member) const {
  std::vector<float> out(static_cast<size_t>(n_params_));
  b_.download(out.data(), params_.data() + member * stride_, out.size() * sizeof(float));
  return out;
}

std::vector<std::vector<float>> Network::download_statistics(int member, bool variances) const {
  std::vector<std::vector<float>> out;
  if (!arch_.batch_norm) return out;
  for (const Layer& l : layers_) {
    if (!l.hidden) continue;
    const auto& buf = variances ? l.running_var : l.running_mean;
    std::vector<float> v(static_cast<size_t>(l.out));
    b_.download(v.data(), buf.data() + static_cast<int64_t>(member) * l.out,
                v.size() * sizeof(float));
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<std::vector<float>> Network::running_means(int member) const {
  return download_statistics(member, false);
}

std::vector<std::vector<float>> Network::running_variances(int member) const {
  return download_statistics(member, true);
}

void Network::set_running_statistics(int member, const std::vector<std::vector<float>>& mean,
                                     const std::vector<std::vector<float>>& var) {
  const size_t hidden = arch_.batch_norm ? arch_.hidden.size() : 0;
  if (mean.size() != hidden || var.size() != hidden)
    throw invalid_argument("network: expected running statistics for " + std::to_string(hidden) +
                           " batch-norm layers, got " + std::to_string(mean.size()) +
                           " means and " + std::to_string(var.size()) + " variances");
  for (size_t i = 0; i < hidden; ++i) {
    Layer& l = layers_[i];
    if (mean[i].size() != static_cast<size_t>(l.out) || var[i].size() != static_cast<size_t>(l.out))
      throw invalid_argument("network: hidden layer " + std::to_string(i) + " has width " +
                             std::to_string(l.out) + ", its running statistics " +
                             std::to_string(mean[i].size()) + " means and " +
                             std::to_string(var[i].size()) + " variances");
    l.running_mean.upload(mean[i].data(), mean[i].size(), static_cast<size_t>(member) * l.out);
    l.running_var.upload(var[i].data(), var[i].size(), static_cast<size_t>(member) * l.out);
  }
}

backend::Backend::BatchNormState Network::bn_state(Layer& l) {
  backend::Backend::BatchNormState s;
  s.gamma = at(params_, l.gamma);
  s.beta = at(params_, l.beta);
  s.running_mean = l.running_mean.data();
  s.running_var = l.running_var.data();
  s.mean = l.mean.data();
  s.inv_std = l.inv_std.data();
  return s;
}

const float* Network::forward(const float* x, int rows, bool training,
                              std::span<const float> dropout, std::span<const uint64_t> seeds,
                              uint64_t step) {
  if (rows > max_rows_) throw internal_error("network: batch larger than max_rows");
  const float* input = x;
  for (size_t li = 0; li < layers_.size(); ++li) {
    Layer& l = layers_[li];
    GemmArgs g;
    g.trans_b = true;
    g.m = rows, g.n = l.out, g.k = l.in;
    g.a = input, g.lda = l.in, g.stride_a = static_cast<int64_t>(rows) * l.in;
    g.b = params_.data() + l.w, g.ldb = l.in, g.stride_b = stride_;
    g.c = l.z.data(), g.ldc = l.out, g.stride_c = static_cast<int64_t>(rows) * l.out;
    g.batch = pack_;
    if (!l.hidden) {
      b_.gemm_bias_activation(g, Activation::kLinear, at(params_, l.b), l.z.data());
      return l.z.data();
    }
    if (arch_.batch_norm) {
      b_.gemm(g);
      b_.bias_activation_forward(Activation::kLinear, pack_, rows, l.out, at(params_, l.b),
                                 l.z.data(), l.z.data());
      b_.batchnorm_forward(pack_, rows, l.out, l.z.data(), l.xhat.data(), l.z.data(), bn_state(l),
                           training);
      b_.bias_activation_forward(arch_.activation, pack_, rows, l.out, {}, l.z.data(), l.a.data());
    } else {
      b_.gemm_bias_activation(g, arch_.activation, at(params_, l.b), l.a.data());
    }
    if (l.h.size()) {
      const int64_t n = static_cast<int64_t>(pack_) * rows * l.out;
      b_.copy(n, l.a.data(), l.h.data());
      if (training && arch_.dropout)
        b_.dropout_forward(pack_, static_cast<int64_t>(rows) * l.out, dropout, seeds,
                           step * layers_.size() + li, l.h.data(), l.mask.data());
      if (l.residual) b_.add(n, input, l.h.data());
    }
    input = output_of(l);
  }
  return nullptr;  // unreachable: the last layer returns
}

void Network::backward(const float* x, float* d_out, int rows) {
  // Whether the product that made a layer's output gradient also took it through the
  // layer's activation (and made its bias gradient): a hidden layer without batch norm,
  // dropout or a residual connection (which need the gradient before the activation's).
  auto fusable = [&](const Layer& l) {
    return l.hidden && !arch_.batch_norm && !arch_.dropout && !l.residual;
  };
  bool through_activation = false;  // for the layer the loop is on
  for (size_t li = layers_.size(); li-- > 0;) {
    Layer& l = layers_[li];
    const float* input = li == 0 ? x : output_of(layers_[li - 1]);
    float* d = l.hidden ? l.dh.data() : d_out;
    float* d_prev = li == 0 ? nullptr : layers_[li - 1].dh.data();
    const int64_t n = static_cast<int64_t>(pack_) * rows * l.out;
    if (l.hidden) {
      if (l.residual && d_prev) b_.copy(n, d, d_prev);
      if (arch_.dropout) b_.multiply(n, l.mask.data(), d);
      if (arch_.batch_norm) {
        b_.activation_backward(arch_.activation, pack_, rows, l.out, l.z.data(), l.a.data(), d, d,
                               {});
        b_.batchnorm_backward(pack_, rows, l.out, l.xhat.data(), d, d, bn_state(l),
                              at(grads_, l.gamma), at(grads_, l.beta));
        b_.sum_rows(pack_, rows, l.out, d, at(grads_, l.b));
      } else if (!through_activation) {
        b_.activation_backward(arch_.activation, pack_, rows, l.out, l.z.data(), l.a.data(), d, d,
                               at(grads_, l.b));
      }
    } else {
      b_.sum_rows(pack_, rows, l.out, d, at(grads_, l.b));
    }
    GemmArgs dw;  // dW = d^T x
    dw.trans_a = true;
    dw.m = l.out, dw.n = l.in, dw.k = rows;
    dw.a = d, dw.lda = l.out, dw.stride_a = static_cast<int64_t>(rows) * l.out;
    dw.b = input, dw.ldb = l.in, dw.stride_b = static_cast<int64_t>(rows) * l.in;
    dw.c = grads_.data() + l.w, dw.ldc = l.in, dw.stride_c = stride_;
    dw.batch = pack_;
    b_.gemm(dw);
    if (!d_prev) continue;
    GemmArgs dx;  // dx = d W (+ the residual gradient already in d_prev)
    dx.m = rows, dx.n = l.in, dx.k = l.out;
    dx.a = d, dx.lda = l.out, dx.stride_a = static_cast<int64_t>(rows) * l.out;
    dx.b = params_.data() + l.w, dx.ldb = l.in, dx.stride_b = stride_;
    dx.beta = l.residual ? 1.f : 0.f;
    dx.c = d_prev, dx.ldc = l.in, dx.stride_c = static_cast<int64_t>(rows) * l.in;
    dx.batch = pack_;
    Layer& below = layers_[li - 1];
    through_activation = fusable(below);
    if (through_activation)
      b_.gemm_activation_backward(dx, arch_.activation, below.z.data(), below.a.data(),
                                  at(grads_, below.b));
    else
      b_.gemm(dx);
  }
}

}  // namespace layerlab::nn
