// Host-side launchers of the CUDA backend's kernels. Each queues its work on `s` and checks
// the launch; the semantics are the Backend methods' of the same name (backend.h), which the
// CPU backend defines. Pointers are device pointers unless a comment says otherwise.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backend/backend.h"

namespace layerlab::backend::kernels {

// cuda_elementwise.cu
void fill(cudaStream_t s, float* dst, int64_t n, float value);
void gather_rows(cudaStream_t s, int pack, int rows, int cols, const float* src, const int32_t* idx,
                 int64_t idx_stride, float* dst);
void bias_activation_forward(cudaStream_t s, Activation a, int pack, int rows, int cols,
                             PackedVector bias, float* z, float* y);
// dz = dy * f'(z) over n elements (no bias gradient: see activation_backward_bias).
void activation_backward(cudaStream_t s, Activation a, int64_t n, const float* z, const float* y,
                         const float* dy, float* dz);
void multiply(cudaStream_t s, int64_t n, const float* x, float* y);
void add(cudaStream_t s, int64_t n, const float* x, float* y);
// rate and seed: device arrays of `pack` entries.
void dropout_forward(cudaStream_t s, int pack, int64_t n_per_member, const float* rate,
                     const uint64_t* seed, uint64_t stream, float* y, float* mask);
// dst[b * dst_stride + j] = bf16(src[b * src_stride + j]) for j < extent, 0 for extent <= j <
// dst_stride, b < batch: the bf16 copy of a strided-batched GEMM operand.
void to_bf16(cudaStream_t s, int batch, int64_t extent, const float* src, int64_t src_stride,
             void* dst, int64_t dst_stride);

// cuda_columns.cu: reductions over the rows of each member's [rows][cols] block. `scratch`
// must hold column_scratch_bytes(pack, rows, cols) bytes (partial sums of long blocks).
size_t column_scratch_bytes(int pack, int rows, int cols);
void sum_rows(cudaStream_t s, int pack, int rows, int cols, const float* src, PackedVector dst,
              void* scratch);
// activation_backward fused with the bias gradient (bias_grad.data set).
void activation_backward_bias(cudaStream_t s, Activation a, int pack, int rows, int cols,
                              const float* z, const float* y, const float* dy, float* dz,
                              PackedVector bias_grad, void* scratch);
void batchnorm_forward(cudaStream_t s, int pack, int rows, int cols, const float* x, float* xhat,
                       float* y, const Backend::BatchNormState& st, bool training, void* scratch);
void batchnorm_backward(cudaStream_t s, int pack, int rows, int cols, const float* xhat,
                        const float* dy, float* dx, const Backend::BatchNormState& st,
                        PackedVector gamma_grad, PackedVector beta_grad, void* scratch);

// cuda_loss.cu; `scratch` must hold loss_scratch_bytes(pack, rows) bytes.
size_t loss_scratch_bytes(int pack, int rows);
void loss(cudaStream_t s, Loss kind, int pack, int rows, int cols, const float* out,
          const float* targets, float* d_out, int batch_rows, double* loss_sum, double* correct,
          void* scratch);

// cuda_optimizer.cu; hyper: a device array of `pack` entries.
void optimizer_step(cudaStream_t s, UpdateRule rule, int pack, int64_t n, PackedVector params,
                    PackedVector grads, PackedVector state1, PackedVector state2,
                    const StepHyper* hyper);

}  // namespace layerlab::backend::kernels
