// Optimizer: the state (moments, sums) of one update rule for every member of a pack, and
// the fused step that updates a member's whole parameter vector at once.
#pragma once

#include <span>

#include "backend/buffer.h"
#include "nn/network.h"
#include "nn/params.h"
#include "nn/registries.h"

namespace layerlab::nn {

class Optimizer {
 public:
  // `name` as in Params::optimizer; state sized for `net`'s pack.
  Optimizer(backend::Backend& b, const std::string& name, const Network& net);

  // One step over net's gradients; member p uses members[p]'s momentum and weight decay and
  // learning rate lr[p] (0 freezes the member). Counts steps for adam's bias correction.
  void step(Network& net, std::span<const Params> members, std::span<const double> lr);

  int64_t steps_taken() const { return steps_; }

 private:
  backend::Backend& b_;
  OptimizerInfo info_;
  backend::DeviceBuffer<float> state1_, state2_;
  int64_t steps_ = 0;
};

}  // namespace layerlab::nn
