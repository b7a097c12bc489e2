// Losses: one warp per row (lanes over the outputs), blocks of kRowsPerBlock rows of one
// member; per-row losses are summed in double in a fixed order (a second kernel adds the
// blocks of a member when there are several), so the result is deterministic and does not
// depend on the pack. Softmax cross-entropy and mean squared error, with their gradients, as
// the CPU backend.
#include <cfloat>

#include "backend/cuda_check.h"
#include "backend/cuda_kernels.h"
#include "backend/cuda_launch.cuh"
#include "common/error.h"

namespace layerlab::backend::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kRowsPerBlock = 64;
constexpr unsigned kAllLanes = 0xffffffffu;

__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kAllLanes, v, o);
  return v;
}

// The largest value and its first index (as std::max_element) across the warp.
__device__ inline void warp_argmax(float& v, int& index) {
  for (int o = 16; o > 0; o /= 2) {
    const float ov = __shfl_xor_sync(kAllLanes, v, o);
    const int oi = __shfl_xor_sync(kAllLanes, index, o);
    if (ov > v || (ov == v && oi < index)) v = ov, index = oi;
  }
}

struct RowLoss {
  float loss = 0.f;
  bool correct = false;
};

// One row of logits `o` against class `t[0]`; every lane returns the same.
__device__ RowLoss softmax_cross_entropy(const float* o, const float* t, float* d, int cols,
                                         float inv_batch) {
  const int lane = threadIdx.x % 32;
  float mx = -FLT_MAX;
  int argmax = cols;
  for (int c = lane; c < cols; c += 32)
    if (o[c] > mx) mx = o[c], argmax = c;
  warp_argmax(mx, argmax);
  float sum = 0.f;
  for (int c = lane; c < cols; c += 32) sum += expf(o[c] - mx);
  const float lse = mx + logf(warp_sum(sum));
  const int label = static_cast<int>(t[0]);
  if (label < 0 || label >= cols) return {NAN, false};  // not a class: poisons the loss
  if (d)
    for (int c = lane; c < cols; c += 32)
      d[c] = expf(o[c] - lse) * inv_batch - (c == label ? inv_batch : 0.f);
  return {lse - o[label], argmax == label};
}

__device__ RowLoss mean_squared_error(const float* o, const float* t, float* d, int cols,
                                      float inv_batch) {
  const int lane = threadIdx.x % 32;
  float se = 0.f;
  for (int c = lane; c < cols; c += 32) {
    const float diff = o[c] - t[c];
    se += diff * diff;
    if (d) d[c] = 2.f * diff * inv_batch / static_cast<float>(cols);
  }
  return {warp_sum(se) / static_cast<float>(cols), false};
}

template <Loss K>
__global__ void loss_kernel(int rows, int cols, const float* out, const float* targets,
                            float* d_out, float inv_batch, double* loss_sum, double* correct,
                            double* partial) {
  __shared__ double warp_loss[kWarps];
  __shared__ int warp_correct[kWarps];
  const int p = blockIdx.y, warp = threadIdx.x / 32;
  constexpr bool kClasses = K == Loss::kSoftmaxCrossEntropy;
  const int target_cols = kClasses ? 1 : cols;
  const int r_end = min(rows, static_cast<int>(blockIdx.x + 1) * kRowsPerBlock);
  double block_loss = 0.0;
  int block_correct = 0;
  for (int r = blockIdx.x * kRowsPerBlock + warp; r < r_end; r += kWarps) {
    const int64_t row = static_cast<int64_t>(p) * rows + r;
    const float* o = out + row * cols;
    const float* t = targets + row * target_cols;
    float* d = d_out ? d_out + row * cols : nullptr;
    const RowLoss l = kClasses ? softmax_cross_entropy(o, t, d, cols, inv_batch)
                               : mean_squared_error(o, t, d, cols, inv_batch);
    block_loss += l.loss;
    block_correct += l.correct;
  }
  if (threadIdx.x % 32 == 0) warp_loss[warp] = block_loss, warp_correct[warp] = block_correct;
  __syncthreads();
  if (threadIdx.x != 0) return;
  double total = 0.0, total_correct = 0.0;
  for (int w = 0; w < kWarps; ++w) total += warp_loss[w], total_correct += warp_correct[w];
  if (gridDim.x == 1) {
    loss_sum[p] += total;
    if (correct) correct[p] += total_correct;
  } else {  // partial[p][block] = (loss, correct)
    double* mine = partial + 2 * (static_cast<int64_t>(p) * gridDim.x + blockIdx.x);
    mine[0] = total;
    mine[1] = total_correct;
  }
}

__global__ void finish_loss_kernel(int pack, int blocks, const double* partial, double* loss_sum,
                                   double* correct) {
  for (int64_t p = grid_index(); p < pack; p += grid_stride()) {
    double total = 0.0, total_correct = 0.0;
    for (int b = 0; b < blocks; ++b) {
      total += partial[2 * (p * blocks + b)];
      total_correct += partial[2 * (p * blocks + b) + 1];
    }
    loss_sum[p] += total;
    if (correct) correct[p] += total_correct;
  }
}

int blocks_per_member(int rows) {
  return std::max(1, (rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace

size_t loss_scratch_bytes(int pack, int rows) {
  const int blocks = blocks_per_member(rows);
  return blocks == 1 ? 0 : 2 * sizeof(double) * static_cast<size_t>(pack) * blocks;
}

void loss(cudaStream_t s, Loss kind, int pack, int rows, int cols, const float* out,
          const float* targets, float* d_out, int batch_rows, double* loss_sum, double* correct,
          void* scratch) {
  if (pack <= 0) return;
  if (pack > 65535) throw invalid_argument("cuda: packs of more than 65535 members");
  const float inv_batch = 1.f / static_cast<float>(batch_rows);
  const int blocks = blocks_per_member(rows);
  auto* partial = static_cast<double*>(scratch);
  const dim3 grid(blocks, pack);
  if (kind == Loss::kSoftmaxCrossEntropy)
    loss_kernel<Loss::kSoftmaxCrossEntropy><<<grid, kWarps * 32, 0, s>>>(
        rows, cols, out, targets, d_out, inv_batch, loss_sum, correct, partial);
  else
    loss_kernel<Loss::kMeanSquaredError><<<grid, kWarps * 32, 0, s>>>(
        rows, cols, out, targets, d_out, inv_batch, loss_sum, correct, partial);
  check_launch("loss_kernel");
  if (blocks == 1) return;
  finish_loss_kernel<<<blocks_for(pack), kThreads, 0, s>>>(pack, blocks, partial, loss_sum,
                                                           correct);
  check_launch("finish_loss_kernel");
}

}  // namespace layerlab::backend::kernels
