#include "nn/optimizer.h"

#include <cmath>
#include <vector>

namespace layerlab::nn {

Optimizer::Optimizer(backend::Backend& b, const std::string& name, const Network& net)
    : b_(b), info_(optimizers().get(name)) {
  const size_t n = static_cast<size_t>(net.param_stride()) * net.pack();
  state1_ = backend::DeviceBuffer<float>(b, n);
  state2_ = backend::DeviceBuffer<float>(b, n);
  state1_.zero();
  state2_.zero();
}

void Optimizer::step(Network& net, std::span<const Params> members, std::span<const double> lr) {
  ++steps_;
  const double t = static_cast<double>(steps_);
  std::vector<backend::StepHyper> hyper(members.size());
  for (size_t p = 0; p < members.size(); ++p) {
    backend::StepHyper& h = hyper[p];
    h.lr = static_cast<float>(lr[p]);
    h.momentum = static_cast<float>(members[p].momentum);
    h.weight_decay = static_cast<float>(members[p].weight_decay);
    h.beta2 = info_.default_beta2;
    h.eps = info_.default_eps;
    h.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(h.beta1), t));
    h.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(h.beta2), t));
  }
  const int64_t stride = net.param_stride();
  b_.optimizer_step(info_.rule, net.pack(), net.parameter_count(), net.parameters_view(),
                    net.gradients_view(), {state1_.data(), stride}, {state2_.data(), stride},
                    hyper);
}

}  // namespace layerlab::nn
