#include "nn/network.h"

#include <cmath>

#include "common/error.h"
#include "nn/registries.h"

namespace layerlab::nn {

using backend::Activation;
using backend::DeviceBuffer;
using backend::GemmArgs;
using backend::PackedVector;

int64_t Architecture::parameter_count() const {
  int64_t n = 0;
  int in = inputs;
  for (int w : hidden) {
    n += static_cast<int64_t>(in) * w + w + (batch_norm ? 2 * w : 0);
    in = w;
  }
  return n + static_cast<int64_t>(in) * outputs + outputs;
}

Network::Network(backend::Backend& b, Architecture arch, int pack, int max_rows)
    : b_(b), arch_(std::move(arch)), pack_(pack), max_rows_(max_rows) {
  if (arch_.inputs < 1 || arch_.outputs < 1 || pack_ < 1 || max_rows_ < 1)
    throw invalid_argument("network: inputs, outputs, pack and rows must be positive");
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
    b_.gemm(g);
    if (!l.hidden) {
      b_.bias_activation_forward(Activation::kLinear, pack_, rows, l.out, at(params_, l.b),
                                 l.z.data(), l.z.data());
      return l.z.data();
    }
    if (arch_.batch_norm) {
      b_.bias_activation_forward(Activation::kLinear, pack_, rows, l.out, at(params_, l.b),
                                 l.z.data(), l.z.data());
      b_.batchnorm_forward(pack_, rows, l.out, l.z.data(), l.xhat.data(), l.z.data(), bn_state(l),
                           training);
      b_.bias_activation_forward(arch_.activation, pack_, rows, l.out, {}, l.z.data(), l.a.data());
    } else {
      b_.bias_activation_forward(arch_.activation, pack_, rows, l.out, at(params_, l.b), l.z.data(),
                                 l.a.data());
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
      } else {
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
    b_.gemm(dx);
  }
}

}  // namespace layerlab::nn
