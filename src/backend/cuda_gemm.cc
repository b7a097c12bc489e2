#include "backend/cuda_gemm.h"

#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_kernels.h"
#include "common/error.h"

namespace layerlab::backend {
namespace {

void cublas_check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string what = std::string(call) + ": " + cublasGetStatusName(status) + " (" +
                           cublasGetStatusString(status) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw failed_precondition("cublas: out of device memory in " + what);
  if (status == CUBLAS_STATUS_NOT_INITIALIZED || status == CUBLAS_STATUS_ARCH_MISMATCH)
    throw failed_precondition("cublas: " + what);
  throw internal_error("cublas: " + what);
}

#define LAYERLAB_CUBLAS_CHECK(call) cublas_check((call), #call)

cublasOperation_t op(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// Where the bf16 copy of one operand goes: `batches` blocks of `padded` elements (a multiple
// of 8, so every member starts 16-byte aligned); stride 0 (a shared operand) stays shared.
struct Bf16Operand {
  int64_t extent = 0, padded = 0, batches = 0, stride = 0;
  Bf16Operand(bool trans, int rows, int cols, int ld, int64_t src_stride, int batch) {
    const int stored_rows = trans ? cols : rows, stored_cols = trans ? rows : cols;
    extent = static_cast<int64_t>(stored_rows - 1) * ld + stored_cols;
    padded = (extent + 7) / 8 * 8;
    batches = src_stride == 0 ? 1 : batch;
    stride = src_stride == 0 ? 0 : padded;
  }
  size_t bytes() const { return sizeof(uint16_t) * static_cast<size_t>(batches * padded); }
};

}  // namespace

CublasGemm::CublasGemm(cudaStream_t stream, CachingPool& pool) : stream_(stream), pool_(pool) {
  LAYERLAB_CUBLAS_CHECK(cublasCreate(&handle_));
  LAYERLAB_CUBLAS_CHECK(cublasSetStream(handle_, stream_));
  LAYERLAB_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}

CublasGemm::~CublasGemm() {
  if (scratch_) pool_.release(scratch_);
  if (handle_) (void)cublasDestroy(handle_);
}

std::string CublasGemm::version() const {
  int major = 0, minor = 0, patch = 0;
  LAYERLAB_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  LAYERLAB_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  LAYERLAB_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

void* CublasGemm::scratch(size_t bytes) {
  if (bytes > scratch_bytes_) {
    pool_.release(scratch_);  // stream order: the products that used it run first
    scratch_ = nullptr;
    scratch_ = pool_.allocate(bytes);
    scratch_bytes_ = CachingPool::size_class(bytes);
  }
  return scratch_;
}

void CublasGemm::run(const GemmArgs& g, Precision precision) {
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0) return;
  switch (precision) {
    case Precision::kFp32:
      LAYERLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(
          handle_, op(g.trans_b), op(g.trans_a), g.n, g.m, g.k, &g.alpha, g.b, g.ldb, g.stride_b,
          g.a, g.lda, g.stride_a, &g.beta, g.c, g.ldc, g.stride_c, g.batch));
      return;
    case Precision::kTf32:
      LAYERLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          handle_, op(g.trans_b), op(g.trans_a), g.n, g.m, g.k, &g.alpha, g.b, CUDA_R_32F, g.ldb,
          g.stride_b, g.a, CUDA_R_32F, g.lda, g.stride_a, &g.beta, g.c, CUDA_R_32F, g.ldc,
          g.stride_c, g.batch, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
      return;
    case Precision::kBf16:
      run_bf16(g);
      return;
  }
}

void CublasGemm::run_bf16(const GemmArgs& g) {
  if (g.k <= 0) {  // nothing to multiply: C = beta * C, which fp32 does exactly
    run(g, Precision::kFp32);
    return;
  }
  const Bf16Operand a(g.trans_a, g.m, g.k, g.lda, g.stride_a, g.batch);
  const Bf16Operand b(g.trans_b, g.k, g.n, g.ldb, g.stride_b, g.batch);
  auto* a16 = static_cast<char*>(scratch(a.bytes() + b.bytes()));
  char* b16 = a16 + a.bytes();
  kernels::to_bf16(stream_, static_cast<int>(a.batches), a.extent, g.a, g.stride_a, a16, a.padded);
  kernels::to_bf16(stream_, static_cast<int>(b.batches), b.extent, g.b, g.stride_b, b16, b.padded);
  LAYERLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle_, op(g.trans_b), op(g.trans_a), g.n, g.m, g.k, &g.alpha, b16, CUDA_R_16BF, g.ldb,
      b.stride, a16, CUDA_R_16BF, g.lda, a.stride, &g.beta, g.c, CUDA_R_32F, g.ldc, g.stride_c,
      g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace layerlab::backend
