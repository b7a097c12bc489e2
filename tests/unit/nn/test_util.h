// Helpers shared by the engine tests: small random data and a one-call loss on a network.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"
#include "nn/network.h"

namespace layerlab::nn::testing {

// Deterministic standard-normal values.
inline std::vector<float> normal_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double u1 = backend::uniform01(seed, 1, 2 * i),
                 u2 = backend::uniform01(seed, 1, 2 * i + 1);
    v[i] = static_cast<float>(std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * M_PI * u2));
  }
  return v;
}

// Loss of the pack's outputs on (x, y): forward in training mode at `step`, mean loss of each
// member; with `backward`, also fills the network's gradients.
inline std::vector<double> pack_loss(backend::Backend& b, Network& net, backend::Loss kind,
                                     const backend::DeviceBuffer<float>& x,
                                     const backend::DeviceBuffer<float>& y, int rows,
                                     std::span<const float> dropout,
                                     std::span<const uint64_t> seeds, bool backward) {
  const int outputs = net.architecture().outputs;
  backend::DeviceBuffer<float> d_out(b, static_cast<size_t>(net.pack()) * rows * outputs);
  backend::DeviceBuffer<double> sum(b, net.pack());
  sum.zero();
  const float* out = net.forward(x.data(), rows, true, dropout, seeds, 7);
  b.loss(kind, net.pack(), rows, outputs, out, y.data(), d_out.data(), rows, sum.data(), nullptr);
  if (backward) net.backward(x.data(), d_out.data(), rows);
  std::vector<double> losses = sum.download();
  for (double& l : losses) l /= rows;
  return losses;
}

}  // namespace layerlab::nn::testing
