// Element-wise kernels: one grid-stride loop each, the scalar functions from ops.h.
#include <cuda_bf16.h>

#include "backend/cuda_check.h"
#include "backend/cuda_kernels.h"
#include "backend/cuda_launch.cuh"

namespace layerlab::backend::kernels {
namespace {

__global__ void fill_kernel(float* dst, int64_t n, float value) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) dst[i] = value;
}

__global__ void gather_rows_kernel(int rows, int cols, const float* src, const int32_t* idx,
                                   int64_t idx_stride, float* dst, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    const int64_t row = i / cols;  // p * rows + r
    const int64_t p = row / rows, r = row - p * rows;
    dst[i] = src[static_cast<int64_t>(idx[p * idx_stride + r]) * cols + (i - row * cols)];
  }
}

template <Activation A>
__global__ void bias_activation_kernel(int rows, int cols, const float* bias, int64_t bias_stride,
                                       float* z, float* y, int64_t n) {
  const int64_t member_size = static_cast<int64_t>(rows) * cols;
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    float v = z[i];
    if (bias) {
      v += bias[(i / member_size) * bias_stride + i % cols];
      z[i] = v;
    }
    y[i] = act::forward(A, v);
  }
}

template <Activation A>
__global__ void activation_backward_kernel(const float* z, const float* y, const float* dy,
                                           float* dz, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride())
    dz[i] = dy[i] * act::derivative(A, z[i], y[i]);
}

__global__ void multiply_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) y[i] *= x[i];
}

__global__ void add_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) y[i] += x[i];
}

__global__ void dropout_kernel(int64_t n_per_member, const float* rate, const uint64_t* seed,
                               uint64_t stream, float* y, float* mask, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    const int64_t p = i / n_per_member, j = i - p * n_per_member;
    const float r = rate[p];
    float m = 1.f;
    if (r > 0.f)
      m = uniform01(seed[p], stream, static_cast<uint64_t>(j)) < r ? 0.f : 1.f / (1.f - r);
    mask[i] = m;
    y[i] *= m;
  }
}

__global__ void to_bf16_kernel(int64_t extent, const float* src, int64_t src_stride,
                               __nv_bfloat16* dst, int64_t dst_stride, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    const int64_t b = i / dst_stride, j = i - b * dst_stride;
    dst[i] = __float2bfloat16(j < extent ? src[b * src_stride + j] : 0.f);
  }
}

}  // namespace

void fill(cudaStream_t s, float* dst, int64_t n, float value) {
  if (n <= 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, n, value);
  check_launch("fill_kernel");
}

void gather_rows(cudaStream_t s, int pack, int rows, int cols, const float* src, const int32_t* idx,
                 int64_t idx_stride, float* dst) {
  const int64_t n = static_cast<int64_t>(pack) * rows * cols;
  if (n <= 0) return;
  gather_rows_kernel<<<blocks_for(n), kThreads, 0, s>>>(rows, cols, src, idx, idx_stride, dst, n);
  check_launch("gather_rows_kernel");
}

void bias_activation_forward(cudaStream_t s, Activation a, int pack, int rows, int cols,
                             PackedVector bias, float* z, float* y) {
  const int64_t n = static_cast<int64_t>(pack) * rows * cols;
  if (n <= 0) return;
  with_activation(a, [&](auto tag) {
    bias_activation_kernel<decltype(tag)::value>
        <<<blocks_for(n), kThreads, 0, s>>>(rows, cols, bias.data, bias.stride, z, y, n);
  });
  check_launch("bias_activation_kernel");
}

void activation_backward(cudaStream_t s, Activation a, int64_t n, const float* z, const float* y,
                         const float* dy, float* dz) {
  if (n <= 0) return;
  with_activation(a, [&](auto tag) {
    activation_backward_kernel<decltype(tag)::value>
        <<<blocks_for(n), kThreads, 0, s>>>(z, y, dy, dz, n);
  });
  check_launch("activation_backward_kernel");
}

void multiply(cudaStream_t s, int64_t n, const float* x, float* y) {
  if (n <= 0) return;
  multiply_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
  check_launch("multiply_kernel");
}

void add(cudaStream_t s, int64_t n, const float* x, float* y) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
  check_launch("add_kernel");
}

void dropout_forward(cudaStream_t s, int pack, int64_t n_per_member, const float* rate,
                     const uint64_t* seed, uint64_t stream, float* y, float* mask) {
  const int64_t n = pack * n_per_member;
  if (n <= 0) return;
  dropout_kernel<<<blocks_for(n), kThreads, 0, s>>>(n_per_member, rate, seed, stream, y, mask, n);
  check_launch("dropout_kernel");
}

void to_bf16(cudaStream_t s, int batch, int64_t extent, const float* src, int64_t src_stride,
             void* dst, int64_t dst_stride) {
  const int64_t n = batch * dst_stride;
  if (n <= 0) return;
  to_bf16_kernel<<<blocks_for(n), kThreads, 0, s>>>(
      extent, src, src_stride, static_cast<__nv_bfloat16*>(dst), dst_stride, n);
  check_launch("to_bf16_kernel");
}

}  // namespace layerlab::backend::kernels
