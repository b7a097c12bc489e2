// Backend: the compute interface the engine (nn/) trains on. A backend owns its memory
// (host memory for cpu, device memory for cuda); nn/ only holds pointers it got from
// allocate() and never reads them directly: it moves data with upload()/download().
//
// Every operation works on a *pack*: `pack` independent networks of the same shape whose
// tensors sit one after another with a fixed stride. A single trial is a pack of one; a
// pack of K same-shape trials trains in one batched computation (strided-batched GEMM),
// each member with its own hyperparameters (the per-member spans below).
//
// Layout: row-major. Activations of a pack are [pack][rows][cols] contiguous.
// Thread-safety: a Backend instance is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "backend/ops.h"

namespace layerlab::backend {

// C[p] = alpha * op(A[p]) * op(B[p]) + beta * C[p] for p in [0, batch), where X[p] = X +
// p*stride_x.
struct GemmArgs {
  bool trans_a = false;
  bool trans_b = false;
  int m = 0, n = 0, k = 0;
  float alpha = 1.f;
  const float* a = nullptr;
  int lda = 0;
  int64_t stride_a = 0;
  const float* b = nullptr;
  int ldb = 0;
  int64_t stride_b = 0;
  float beta = 0.f;
  float* c = nullptr;
  int ldc = 0;
  int64_t stride_c = 0;
  int batch = 1;
};

// Per-member view of the pack's parameters: where member p's block starts is base + p*stride.
struct PackedVector {
  float* data = nullptr;
  int64_t stride = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;      // "cpu", "cuda:0"
  virtual std::string describe() const = 0;  // name, library versions, threads: for records
  virtual void set_threads(int threads) = 0;
  virtual int threads() const = 0;
  // kInvalidArgument, naming the device, for a precision the backend cannot do (the CPU
  // backend only has fp32).
  virtual void set_precision(Precision p) = 0;
  virtual Precision precision() const = 0;
  // Bytes of memory allocated through allocate() and not released (pooled blocks count).
  virtual int64_t memory_in_use() const = 0;
  // The most bytes (nn::estimate_size at a training batch's rows) a pack may hold before its
  // members train slower than each would alone, so that a larger pack trains in parts of
  // at most this (nn::train_pack); 0: no such limit (a GPU, where one batched computation
  // for all members is the point).
  virtual int64_t fast_pack_bytes() const { return 0; }

  // Memory.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void upload(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual void download(void* host_dst, const void* device_src, size_t bytes) = 0;
  virtual void fill(float* dst, int64_t n, float value) = 0;
  virtual void zero(void* dst, size_t bytes) = 0;
  virtual void synchronize() = 0;

  // Matrix work.
  virtual void gemm(const GemmArgs& g) = 0;

  // gemm(g), then bias_activation_forward(a, g.batch, g.m, g.n, bias, g.c, y): C must be
  // [batch][m][n] contiguous (ldc == n, stride_c == m * n). A backend may fuse the two (the
  // CPU backend does, in its small-matrix kernels); the results are the same.
  virtual void gemm_bias_activation(const GemmArgs& g, Activation a, PackedVector bias, float* y) {
    gemm(g);
    bias_activation_forward(a, g.batch, g.m, g.n, bias, g.c, y);
  }

  // gemm(g), then activation_backward(a, g.batch, g.m, g.n, z, y, g.c, g.c, bias_grad): the
  // gradient through the activation of the layer whose output gradient the product makes.
  // Same layout requirement; a backend may fuse the two, with the same results.
  virtual void gemm_activation_backward(const GemmArgs& g, Activation a, const float* z,
                                        const float* y, PackedVector bias_grad) {
    gemm(g);
    activation_backward(a, g.batch, g.m, g.n, z, y, g.c, g.c, bias_grad);
  }

  // dst[p][r][:] = src[idx[p * idx_stride + r]][:] (src is shared by all members; cols
  // floats per row).
  virtual void gather_rows(int pack, int rows, int cols, const float* src, const int32_t* idx,
                           int64_t idx_stride, float* dst) = 0;

  // z[p][r][c] += bias[p][c] (bias may be null), then y = f(z). y may alias z for kLinear.
  virtual void bias_activation_forward(Activation a, int pack, int rows, int cols,
                                       PackedVector bias, float* z, float* y) = 0;

  // dz = dy * f'(z) (dz may alias dy); if bias_grad.data, bias_grad[p][c] = sum_r dz[p][r][c].
  virtual void activation_backward(Activation a, int pack, int rows, int cols, const float* z,
                                   const float* y, const float* dy, float* dz,
                                   PackedVector bias_grad) = 0;

  // dst[p][c] = sum_r src[p][r][c].
  virtual void sum_rows(int pack, int rows, int cols, const float* src, PackedVector dst) = 0;

  // Batch normalisation over rows. Training: batch statistics (biased variance), running
  // statistics updated with `momentum` and the unbiased variance (as PyTorch); xhat and
  // inv_std ([pack][cols]) kept for backward. Inference: running statistics.
  struct BatchNormState {
    PackedVector gamma, beta;
    float* running_mean;  // [pack][cols]
    float* running_var;   // [pack][cols]
    float* mean;          // [pack][cols] scratch
    float* inv_std;       // [pack][cols]
    float momentum = 0.1f;
    float eps = 1e-5f;
  };
  virtual void batchnorm_forward(int pack, int rows, int cols, const float* x, float* xhat,
                                 float* y, const BatchNormState& s, bool training) = 0;
  // dx from dy; gamma_grad and beta_grad are written (not accumulated).
  virtual void batchnorm_backward(int pack, int rows, int cols, const float* xhat, const float* dy,
                                  float* dx, const BatchNormState& s, PackedVector gamma_grad,
                                  PackedVector beta_grad) = 0;

  // Inverted dropout: mask[i] = 0 with probability rate[p], else 1 / (1 - rate[p]); y *= mask.
  // Randomness is counter-based: uniform01(seed[p], stream, index within the member).
  virtual void dropout_forward(int pack, int64_t n_per_member, std::span<const float> rate,
                               std::span<const uint64_t> seed, uint64_t stream, float* y,
                               float* mask) = 0;

  // y[i] = x[i].
  virtual void copy(int64_t n, const float* x, float* y) = 0;
  // y[i] *= x[i].
  virtual void multiply(int64_t n, const float* x, float* y) = 0;
  // y[i] += x[i].
  virtual void add(int64_t n, const float* x, float* y) = 0;

  // Loss of outputs [pack][rows][cols] against targets [pack][rows][target_cols]:
  // loss_sum[p] += sum over rows of the per-sample loss; correct[p] += rows whose argmax is
  // the target class (classification; may be null). If d_out is set it receives the
  // gradient of the mean loss over `batch_rows` rows (pass rows for a full batch).
  virtual void loss(Loss kind, int pack, int rows, int cols, const float* out, const float* targets,
                    float* d_out, int batch_rows, double* loss_sum, double* correct) = 0;

  // One optimizer step over n parameters per member (params, grads, state in PackedVectors
  // sharing one stride). state2 is used by adam, adamw, rmsprop's second moment; adagrad's
  // sum lives in state1.
  virtual void optimizer_step(UpdateRule rule, int pack, int64_t n, PackedVector params,
                              PackedVector grads, PackedVector state1, PackedVector state2,
                              std::span<const StepHyper> hyper) = 0;
};

// The backend called `name`: "cpu", or "cuda" / "cuda:N" (device N) from the CUDA backend
// module, loaded at the first request (module_loader.h; a build with -DLAYERLAB_CUDA=ON
// makes it). Throws invalid_argument for an unknown name, failed_precondition naming what
// is missing when the device cannot be had (no CUDA in this build, the module or a library
// it needs, no such device).
std::unique_ptr<Backend> make_backend(const std::string& name, int threads);

}  // namespace layerlab::backend
