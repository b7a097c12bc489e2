// Reductions over rows, per member and column: sum_rows, the bias gradient fused into the
// activation backward, and batch normalisation. One block reduces a 32-column tile of up to
// kChunkRows rows (8 row lanes, then shared memory); longer blocks are split into chunks whose
// partial sums a second kernel adds in chunk order. The chunking depends on rows alone, so a
// member's result does not depend on the pack it trains in, and every run is deterministic.
#include "backend/cuda_check.h"
#include "backend/cuda_kernels.h"
#include "backend/cuda_launch.cuh"
#include "common/error.h"

namespace layerlab::backend::kernels {
namespace {

constexpr int kTileCols = 32;
constexpr int kRowLanes = 8;
constexpr int kChunkRows = 256;

struct Pair {
  float a, b;
};
__device__ inline void accumulate(float& acc, float v) {
  acc += v;
}
__device__ inline void accumulate(Pair& acc, Pair v) {
  acc.a += v.a;
  acc.b += v.b;
}

int chunks_for(int rows) {
  return std::max(1, (rows + kChunkRows - 1) / kChunkRows);
}

__device__ inline int64_t element(int p, int rows, int cols, int r, int c) {
  return (static_cast<int64_t>(p) * rows + r) * cols + c;
}

// value(p, r, c) -> Acc for each element; finish(p, c, sum) once per column.
template <typename Acc, typename Value, typename Finish>
__global__ void reduce_columns_kernel(int rows, int cols, Value value, Finish finish,
                                      Acc* partial) {
  __shared__ Acc lanes[kRowLanes][kTileCols];
  const int c = blockIdx.x * kTileCols + threadIdx.x;
  const int p = blockIdx.y;
  const int r_end = min(rows, static_cast<int>(blockIdx.z + 1) * kChunkRows);
  Acc acc{};
  if (c < cols)
    for (int r = blockIdx.z * kChunkRows + threadIdx.y; r < r_end; r += kRowLanes)
      accumulate(acc, value(p, r, c));
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  for (int k = 1; k < kRowLanes; ++k) accumulate(acc, lanes[k][threadIdx.x]);
  if (gridDim.z == 1)
    finish(p, c, acc);
  else
    partial[(static_cast<int64_t>(blockIdx.z) * gridDim.y + p) * cols + c] = acc;
}

template <typename Acc, typename Finish>
__global__ void finish_columns_kernel(int cols, int chunks, const Acc* partial, Finish finish,
                                      int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    Acc acc{};
    for (int k = 0; k < chunks; ++k) accumulate(acc, partial[k * n + i]);
    finish(static_cast<int>(i / cols), static_cast<int>(i % cols), acc);
  }
}

template <typename Acc, typename Value, typename Finish>
void reduce_columns(cudaStream_t s, int pack, int rows, int cols, Value value, Finish finish,
                    void* scratch) {
  if (pack <= 0 || cols <= 0) return;
  if (pack > 65535) throw invalid_argument("cuda: packs of more than 65535 members");
  const int chunks = chunks_for(rows);
  const dim3 grid((cols + kTileCols - 1) / kTileCols, pack, chunks);
  const dim3 block(kTileCols, kRowLanes);
  reduce_columns_kernel<Acc>
      <<<grid, block, 0, s>>>(rows, cols, value, finish, static_cast<Acc*>(scratch));
  check_launch("reduce_columns_kernel");
  if (chunks == 1) return;
  const int64_t n = static_cast<int64_t>(pack) * cols;
  finish_columns_kernel<Acc><<<blocks_for(n), kThreads, 0, s>>>(
      cols, chunks, static_cast<const Acc*>(scratch), finish, n);
  check_launch("finish_columns_kernel");
}

struct Load {
  const float* src;
  int rows, cols;
  __device__ float operator()(int p, int r, int c) const {
    return src[element(p, rows, cols, r, c)];
  }
};

struct Store {
  PackedVector dst;
  __device__ void operator()(int p, int c, float v) const { dst.data[p * dst.stride + c] = v; }
};

// dz = dy * f'(z), stored, and summed for the bias gradient.
template <Activation A>
struct ActivationGradient {
  const float *z, *y, *dy;
  float* dz;
  int rows, cols;
  __device__ float operator()(int p, int r, int c) const {
    const int64_t i = element(p, rows, cols, r, c);
    const float d = dy[i] * act::derivative(A, z[i], y[i]);
    dz[i] = d;
    return d;
  }
};

// Sums of (x - K, (x - K)^2) with K the column's first value: one pass, without the
// cancellation of plain sums of squares when the mean is large against the spread.
struct ShiftedMoments {
  const float* x;
  int rows, cols;
  __device__ Pair operator()(int p, int r, int c) const {
    const float d = x[element(p, rows, cols, r, c)] - x[element(p, rows, cols, 0, c)];
    return {d, d * d};
  }
};

struct BatchStatistics {
  const float* x;
  int rows, cols;
  Backend::BatchNormState st;
  __device__ void operator()(int p, int c, Pair sums) const {
    const float n = static_cast<float>(rows);
    const float shift = sums.a / n;
    const float mean = x[element(p, rows, cols, 0, c)] + shift;
    const float var = fmaxf(sums.b / n - shift * shift, 0.f);
    const int64_t k = static_cast<int64_t>(p) * cols + c;
    st.mean[k] = mean;
    st.inv_std[k] = 1.f / sqrtf(var + st.eps);
    const float unbias = rows > 1 ? n / static_cast<float>(rows - 1) : 1.f;
    st.running_mean[k] = (1.f - st.momentum) * st.running_mean[k] + st.momentum * mean;
    st.running_var[k] = (1.f - st.momentum) * st.running_var[k] + st.momentum * var * unbias;
  }
};

__global__ void running_statistics_kernel(Backend::BatchNormState st, int64_t n) {
  for (int64_t k = grid_index(); k < n; k += grid_stride()) {
    st.mean[k] = st.running_mean[k];
    st.inv_std[k] = 1.f / sqrtf(st.running_var[k] + st.eps);
  }
}

__global__ void normalize_kernel(int rows, int cols, const float* x, float* xhat, float* y,
                                 Backend::BatchNormState st, int64_t n) {
  const int64_t member_size = static_cast<int64_t>(rows) * cols;
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    const int64_t p = i / member_size, c = i % cols, k = p * cols + c;
    const float h = (x[i] - st.mean[k]) * st.inv_std[k];
    if (xhat) xhat[i] = h;
    y[i] = st.gamma.data[p * st.gamma.stride + c] * h + st.beta.data[p * st.beta.stride + c];
  }
}

struct NormGradients {
  const float *xhat, *dy;
  int rows, cols;
  __device__ Pair operator()(int p, int r, int c) const {
    const int64_t i = element(p, rows, cols, r, c);
    return {dy[i] * xhat[i], dy[i]};
  }
};

struct StoreNormGradients {
  PackedVector gamma_grad, beta_grad;
  __device__ void operator()(int p, int c, Pair sums) const {
    gamma_grad.data[p * gamma_grad.stride + c] = sums.a;
    beta_grad.data[p * beta_grad.stride + c] = sums.b;
  }
};

__global__ void normalize_backward_kernel(int rows, int cols, const float* xhat, const float* dy,
                                          float* dx, Backend::BatchNormState st,
                                          PackedVector gamma_grad, PackedVector beta_grad,
                                          int64_t n) {
  const int64_t member_size = static_cast<int64_t>(rows) * cols;
  const float inv_rows = 1.f / static_cast<float>(rows);
  for (int64_t i = grid_index(); i < n; i += grid_stride()) {
    const int64_t p = i / member_size, c = i % cols;
    const float gamma = st.gamma.data[p * st.gamma.stride + c];
    const float dgamma = gamma_grad.data[p * gamma_grad.stride + c];
    const float dbeta = beta_grad.data[p * beta_grad.stride + c];
    dx[i] = gamma * st.inv_std[p * cols + c] * inv_rows *
            (static_cast<float>(rows) * dy[i] - dbeta - xhat[i] * dgamma);
  }
}

}  // namespace

size_t column_scratch_bytes(int pack, int rows, int cols) {
  const int chunks = chunks_for(rows);
  return chunks == 1 ? 0 : sizeof(Pair) * chunks * static_cast<size_t>(pack) * cols;
}

void sum_rows(cudaStream_t s, int pack, int rows, int cols, const float* src, PackedVector dst,
              void* scratch) {
  reduce_columns<float>(s, pack, rows, cols, Load{src, rows, cols}, Store{dst}, scratch);
}

void activation_backward_bias(cudaStream_t s, Activation a, int pack, int rows, int cols,
                              const float* z, const float* y, const float* dy, float* dz,
                              PackedVector bias_grad, void* scratch) {
  with_activation(a, [&](auto tag) {
    reduce_columns<float>(s, pack, rows, cols,
                          ActivationGradient<decltype(tag)::value>{z, y, dy, dz, rows, cols},
                          Store{bias_grad}, scratch);
  });
}

void batchnorm_forward(cudaStream_t s, int pack, int rows, int cols, const float* x, float* xhat,
                       float* y, const Backend::BatchNormState& st, bool training, void* scratch) {
  const int64_t n = static_cast<int64_t>(pack) * rows * cols;
  if (n <= 0) return;
  if (training) {
    reduce_columns<Pair>(s, pack, rows, cols, ShiftedMoments{x, rows, cols},
                         BatchStatistics{x, rows, cols, st}, scratch);
  } else {
    const int64_t stats = static_cast<int64_t>(pack) * cols;
    running_statistics_kernel<<<blocks_for(stats), kThreads, 0, s>>>(st, stats);
    check_launch("running_statistics_kernel");
  }
  normalize_kernel<<<blocks_for(n), kThreads, 0, s>>>(rows, cols, x, xhat, y, st, n);
  check_launch("normalize_kernel");
}

void batchnorm_backward(cudaStream_t s, int pack, int rows, int cols, const float* xhat,
                        const float* dy, float* dx, const Backend::BatchNormState& st,
                        PackedVector gamma_grad, PackedVector beta_grad, void* scratch) {
  const int64_t n = static_cast<int64_t>(pack) * rows * cols;
  if (n <= 0) return;
  reduce_columns<Pair>(s, pack, rows, cols, NormGradients{xhat, dy, rows, cols},
                       StoreNormGradients{gamma_grad, beta_grad}, scratch);
  normalize_backward_kernel<<<blocks_for(n), kThreads, 0, s>>>(rows, cols, xhat, dy, dx, st,
                                                               gamma_grad, beta_grad, n);
  check_launch("normalize_backward_kernel");
}

}  // namespace layerlab::backend::kernels
