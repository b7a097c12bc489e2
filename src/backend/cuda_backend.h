// The CUDA backend (built when LAYERLAB_HAVE_CUDA is defined): matrix products through
// cuBLAS (strided-batched, so a pack is one call), element-wise work, reductions, losses and
// the optimizer step in its own kernels, all on one stream per backend; device memory from a
// caching pool. fp32 by default; tf32 (cuBLAS TF32 compute) and bf16 (bf16 operand copies,
// fp32 accumulation and output, fp32 master weights) for the matrix products only.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"

namespace layerlab::backend {

// The number of CUDA devices this process sees; 0 with `why` set (CUDA's own words) when
// there is none or no usable driver.
int cuda_device_count(std::string* why = nullptr);

// Throws failed_precondition naming the reason when no device is visible or device_index is
// out of range. `threads` is kept for describe() only: host threads do not matter here.
std::unique_ptr<Backend> make_cuda_backend(int device_index, int threads);

}  // namespace layerlab::backend
