// CublasGemm: the backend's matrix products, GemmArgs (row-major, strided-batched) through
// cuBLAS (column-major) by the usual operand swap: C^T = op(B)^T op(A)^T. fp32 uses
// cublasSgemmStridedBatched; tf32 the same product with CUBLAS_COMPUTE_32F_FAST_TF32; bf16
// multiplies bf16 copies of A and B (made per call in pooled scratch) with fp32 accumulation
// into the fp32 C.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "backend/backend.h"
#include "backend/caching_pool.h"

namespace layerlab::backend {

class CublasGemm {
 public:
  CublasGemm(cudaStream_t stream, CachingPool& pool);
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;
  ~CublasGemm();

  void run(const GemmArgs& g, Precision precision);
  // "cuBLAS 13.0.2"
  std::string version() const;

 private:
  void* scratch(size_t bytes);
  void run_bf16(const GemmArgs& g);

  cudaStream_t stream_;
  CachingPool& pool_;
  cublasHandle_t handle_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
};

}  // namespace layerlab::backend
