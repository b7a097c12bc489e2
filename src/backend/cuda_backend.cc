#include "backend/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backend/caching_pool.h"
#include "backend/cuda_check.h"
#include "backend/cuda_gemm.h"
#include "backend/cuda_kernels.h"
#include "backend/cuda_staging.h"

namespace layerlab::backend {
namespace {

class DeviceMemory final : public RawMemory {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it; the pool trims and retries
      return nullptr;
    }
    cuda_check(status, "cudaMalloc");
    return p;
  }
  void free(void* p) noexcept override { (void)cudaFree(p); }
};

struct StreamDeleter {
  void operator()(cudaStream_t s) const noexcept { (void)cudaStreamDestroy(s); }
};
using Stream = std::unique_ptr<CUstream_st, StreamDeleter>;

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, int threads)
      : device_(device), threads_(std::max(1, threads)), owned_stream_(make_stream(device)) {
    cudaDeviceProp prop{};
    LAYERLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    device_name_ = prop.name;
    major_ = prop.major;
    minor_ = prop.minor;
    sms_ = prop.multiProcessorCount;
    memory_ = static_cast<int64_t>(prop.totalGlobalMem);
    pool_ =
        std::make_unique<CachingPool>(std::make_unique<DeviceMemory>(), "cuda", "device memory");
    gemm_ = std::make_unique<CublasGemm>(stream_, *pool_);
    arrays_ = std::make_unique<HostArrays>(stream_, *pool_);
  }

  ~CudaBackend() override {
    (void)cudaSetDevice(device_);
    (void)cudaStreamSynchronize(stream_);
    arrays_.reset();
    gemm_.reset();
    if (scratch_) pool_->release(scratch_);
    pool_.reset();
  }

  std::string name() const override { return "cuda:" + std::to_string(device_); }

  std::string describe() const override {
    int runtime = 0, driver = 0;
    LAYERLAB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    LAYERLAB_CUDA_CHECK(cudaDriverGetVersion(&driver));
    return name() + " (" + device_name_ + ", sm_" + std::to_string(major_) +
           std::to_string(minor_) + ", " + std::to_string(sms_) + " SMs, " +
           std::to_string(memory_ >> 20) + " MiB; CUDA runtime " + version_string(runtime) +
           ", driver " + version_string(driver) + ", " + gemm_->version() + ")";
  }

  void set_threads(int threads) override { threads_ = std::max(1, threads); }
  int threads() const override { return threads_; }

  void set_precision(Precision p) override {
    if (p != Precision::kFp32 && major_ < 8)
      throw invalid_argument("precision: " + name() + " (" + device_name_ + ", sm_" +
                             std::to_string(major_) + std::to_string(minor_) +
                             ") has no tf32 or bf16 tensor cores; they need sm_80 or newer");
    precision_ = p;
  }
  Precision precision() const override { return precision_; }

  // Everything this backend holds on the device: blocks handed out, blocks pooled for reuse,
  // and its own scratch.
  int64_t memory_in_use() const override { return pool_->bytes_held(); }

  void* allocate(size_t bytes) override {
    activate();
    return pool_->allocate(bytes);
  }
  void release(void* p) override { pool_->release(p); }

  // The host buffer may be reused as soon as upload returns, as with the CPU backend.
  void upload(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    activate();
    LAYERLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    LAYERLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    activate();
    LAYERLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    LAYERLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void fill(float* dst, int64_t n, float value) override {
    activate();
    kernels::fill(stream_, dst, n, value);
  }
  void zero(void* dst, size_t bytes) override {
    if (!bytes) return;
    activate();
    LAYERLAB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream_));
  }
  void synchronize() override {
    activate();
    LAYERLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void gemm(const GemmArgs& g) override {
    activate();
    gemm_->run(g, precision_);
  }

  void gather_rows(int pack, int rows, int cols, const float* src, const int32_t* idx,
                   int64_t idx_stride, float* dst) override {
    activate();
    kernels::gather_rows(stream_, pack, rows, cols, src, idx, idx_stride, dst);
  }

  void bias_activation_forward(Activation a, int pack, int rows, int cols, PackedVector bias,
                               float* z, float* y) override {
    activate();
    kernels::bias_activation_forward(stream_, a, pack, rows, cols, bias, z, y);
  }

  void activation_backward(Activation a, int pack, int rows, int cols, const float* z,
                           const float* y, const float* dy, float* dz,
                           PackedVector bias_grad) override {
    activate();
    if (bias_grad.data)
      kernels::activation_backward_bias(stream_, a, pack, rows, cols, z, y, dy, dz, bias_grad,
                                        scratch(kernels::column_scratch_bytes(pack, rows, cols)));
    else
      kernels::activation_backward(stream_, a, static_cast<int64_t>(pack) * rows * cols, z, y, dy,
                                   dz);
  }

  void sum_rows(int pack, int rows, int cols, const float* src, PackedVector dst) override {
    activate();
    kernels::sum_rows(stream_, pack, rows, cols, src, dst,
                      scratch(kernels::column_scratch_bytes(pack, rows, cols)));
  }

  void batchnorm_forward(int pack, int rows, int cols, const float* x, float* xhat, float* y,
                         const BatchNormState& s, bool training) override {
    activate();
    kernels::batchnorm_forward(stream_, pack, rows, cols, x, xhat, y, s, training,
                               scratch(kernels::column_scratch_bytes(pack, rows, cols)));
  }

  void batchnorm_backward(int pack, int rows, int cols, const float* xhat, const float* dy,
                          float* dx, const BatchNormState& s, PackedVector gamma_grad,
                          PackedVector beta_grad) override {
    activate();
    kernels::batchnorm_backward(stream_, pack, rows, cols, xhat, dy, dx, s, gamma_grad, beta_grad,
                                scratch(kernels::column_scratch_bytes(pack, rows, cols)));
  }

  void dropout_forward(int pack, int64_t n_per_member, std::span<const float> rate,
                       std::span<const uint64_t> seed, uint64_t stream, float* y,
                       float* mask) override {
    if (rate.size() < static_cast<size_t>(pack) || seed.size() < static_cast<size_t>(pack))
      throw invalid_argument("dropout: " + std::to_string(pack) + " members but " +
                             std::to_string(rate.size()) + " rates and " +
                             std::to_string(seed.size()) + " seeds");
    activate();
    const auto* r = static_cast<const float*>(
        arrays_->send(HostArrays::kDropoutRate, rate.data(), sizeof(float) * pack));
    const auto* s = static_cast<const uint64_t*>(
        arrays_->send(HostArrays::kDropoutSeed, seed.data(), sizeof(uint64_t) * pack));
    kernels::dropout_forward(stream_, pack, n_per_member, r, s, stream, y, mask);
  }

  void copy(int64_t n, const float* x, float* y) override {
    if (n <= 0) return;
    activate();
    LAYERLAB_CUDA_CHECK(
        cudaMemcpyAsync(y, x, sizeof(float) * n, cudaMemcpyDeviceToDevice, stream_));
  }
  void multiply(int64_t n, const float* x, float* y) override {
    activate();
    kernels::multiply(stream_, n, x, y);
  }
  void add(int64_t n, const float* x, float* y) override {
    activate();
    kernels::add(stream_, n, x, y);
  }

  void loss(Loss kind, int pack, int rows, int cols, const float* out, const float* targets,
            float* d_out, int batch_rows, double* loss_sum, double* correct) override {
    activate();
    kernels::loss(stream_, kind, pack, rows, cols, out, targets, d_out, batch_rows, loss_sum,
                  correct, scratch(kernels::loss_scratch_bytes(pack, rows)));
  }

  void optimizer_step(UpdateRule rule, int pack, int64_t n, PackedVector params, PackedVector grads,
                      PackedVector state1, PackedVector state2,
                      std::span<const StepHyper> hyper) override {
    if (hyper.size() < static_cast<size_t>(pack))
      throw invalid_argument("optimizer step: " + std::to_string(pack) + " members but " +
                             std::to_string(hyper.size()) + " hyperparameter sets");
    activate();
    const auto* h = static_cast<const StepHyper*>(
        arrays_->send(HostArrays::kStepHyper, hyper.data(), sizeof(StepHyper) * pack));
    kernels::optimizer_step(stream_, rule, pack, n, params, grads, state1, state2, h);
  }

 private:
  static Stream make_stream(int device) {
    LAYERLAB_CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t s = nullptr;
    LAYERLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
  }

  // The calling thread's current device must be this backend's (a thread may drive backends
  // of several devices, one after the other).
  void activate() {
    int current = -1;
    LAYERLAB_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device_) LAYERLAB_CUDA_CHECK(cudaSetDevice(device_));
  }

  // Scratch for the partial sums of long reductions (one operation at a time), grown as needed.
  void* scratch(size_t bytes) {
    if (bytes > scratch_bytes_) {
      pool_->release(scratch_);  // stream order: the kernels that used it run first
      scratch_ = nullptr;
      scratch_ = pool_->allocate(bytes);
      scratch_bytes_ = CachingPool::size_class(bytes);
    }
    return scratch_;
  }

  int device_;
  int threads_;
  Stream owned_stream_;
  cudaStream_t stream_ = owned_stream_.get();
  std::string device_name_;
  int major_ = 0, minor_ = 0, sms_ = 0;
  int64_t memory_ = 0;
  Precision precision_ = Precision::kFp32;
  std::unique_ptr<CachingPool> pool_;
  std::unique_ptr<CublasGemm> gemm_;
  std::unique_ptr<HostArrays> arrays_;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
};

}  // namespace

int cuda_device_count(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) {
      *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
             cudaGetErrorString(status) + ")";
      // The runtime says "insufficient driver" also when there is none at all: say which.
      int driver = -1;
      if (status == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess &&
          driver == 0)
        *why += "; no NVIDIA driver found (libcuda.so.1)";
    }
    return 0;
  }
  if (count == 0 && why) *why = "cudaGetDeviceCount found no device";
  return count;
}

std::unique_ptr<Backend> make_cuda_backend(int device_index, int threads) {
  const std::string name = "cuda:" + std::to_string(device_index);
  std::string why;
  const int count = cuda_device_count(&why);
  if (count == 0)
    throw failed_precondition("device '" + name + "': no CUDA device visible (" + why +
                              "); use --device cpu");
  if (device_index < 0 || device_index >= count)
    throw failed_precondition("device '" + name + "': only " + std::to_string(count) +
                              " CUDA device" + (count == 1 ? "" : "s") +
                              " visible (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
  return std::make_unique<CudaBackend>(device_index, threads);
}

}  // namespace layerlab::backend
