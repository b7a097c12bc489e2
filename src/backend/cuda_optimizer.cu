// The fused optimizer step: one launch updates every parameter of every member (blockIdx.y is
// the member, whose hyperparameters come from a small device array); the rules are
// optim::update in ops.h, as on the CPU.
#include "backend/cuda_check.h"
#include "backend/cuda_kernels.h"
#include "backend/cuda_launch.cuh"
#include "common/error.h"

namespace layerlab::backend::kernels {
namespace {

template <UpdateRule R>
__global__ void step_kernel(int64_t n, PackedVector params, PackedVector grads, PackedVector state1,
                            PackedVector state2, const StepHyper* hyper) {
  const int p = blockIdx.y;
  const StepHyper h = hyper[p];
  float* w = params.data + p * params.stride;
  const float* g = grads.data + p * grads.stride;
  float* s1 = state1.data ? state1.data + p * state1.stride : nullptr;
  float* s2 = state2.data ? state2.data + p * state2.stride : nullptr;
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    float unused = 0.f;
    float& m1 = s1 ? s1[i] : unused;
    float& m2 = s2 ? s2[i] : unused;
    optim::update<R>(w[i], g[i], m1, m2, h);
  }
}

}  // namespace

void optimizer_step(cudaStream_t s, UpdateRule rule, int pack, int64_t n, PackedVector params,
                    PackedVector grads, PackedVector state1, PackedVector state2,
                    const StepHyper* hyper) {
  if (pack <= 0 || n <= 0) return;
  if (pack > 65535) throw invalid_argument("cuda: packs of more than 65535 members");
  // Enough blocks per member to fill the device when the pack is small.
  const dim3 grid(std::min(blocks_for(n), std::max(1u, 1024u / static_cast<unsigned>(pack))), pack);
  with_rule(rule, [&](auto tag) {
    step_kernel<decltype(tag)::value>
        <<<grid, kThreads, 0, s>>>(n, params, grads, state1, state2, hyper);
  });
  check_launch("optimizer step_kernel");
}

}  // namespace layerlab::backend::kernels
