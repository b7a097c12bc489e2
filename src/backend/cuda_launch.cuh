// Launch shapes and compile-time dispatch shared by the CUDA kernel files.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/ops.h"

namespace layerlab::backend::kernels {

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the device, never more than
// the work needs.
inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 16));
}

// The first index and the stride of a grid-stride loop.
__device__ inline int64_t grid_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace layerlab::backend::kernels
