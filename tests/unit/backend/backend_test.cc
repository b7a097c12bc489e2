// What every build checks without a GPU: device names, the CUDA module's load path (a build
// with CUDA loads the real one: module_env.cc), the CPU backend's refusal of reduced
// precision, and its memory pool.
#include "backend/backend.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/module_loader.h"
#include "common/error.h"
#include "support/temp_and_errors.h"

namespace layerlab::backend {
namespace {

using layerlab::testing::expect_contains;

// The error make_backend(name) throws; fails the test when it throws none.
Error error_of(const std::string& name) {
  try {
    make_backend(name, 1);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "make_backend(\"" << name << "\") did not throw";
  return internal_error("none");
}

TEST(MakeBackend, CpuIsAlwaysThere) {
  auto b = make_backend("cpu", 2);
  EXPECT_EQ(b->name(), "cpu");
  EXPECT_EQ(b->threads(), 2);
}

TEST(MakeBackend, UnknownDevicesAreInvalidArguments) {
  for (const char* name : {"gpu", "", "CPU"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << name;
    expect_contains(e.what(), "unknown device");
  }
}

TEST(MakeBackend, MalformedCudaNamesAreInvalidArguments) {
  for (const char* name : {"cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda:1x", "cudax"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << name;
    expect_contains(e.what(), std::string("unknown device '") + name + "'");
  }
}

#ifdef LAYERLAB_HAVE_CUDA
// The number of CUDA devices, through the module (which these tests must be able to load).
int cuda_device_count() {
  return load_module(cuda_module_search()).device_count(nullptr);
}

TEST(MakeBackend, TheCudaModuleOfThisBuildLoads) {
  const BackendModule& m = load_module(cuda_module_search());
  EXPECT_EQ(m.abi, kModuleAbi);
  EXPECT_STREQ(m.device, "cuda");
  std::string why;
  if (m.device_count(&why) == 0) {  // CUDA's own words for the missing device or driver
    EXPECT_NE(why.find("cudaGetDeviceCount"), std::string::npos) << why;
    std::cout << "no CUDA device here: " << why << "\n";
    // Without the driver library at all, the runtime's "insufficient driver" is made plain.
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
      dlclose(driver);
    else
      EXPECT_NE(why.find("no NVIDIA driver found (libcuda.so.1)"), std::string::npos) << why;
  }
}

TEST(MakeBackend, CudaWithoutADeviceSaysWhy) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is visible here";
  for (const char* name : {"cuda", "cuda:0", "cuda:99"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << name;
    expect_contains(e.what(), "no CUDA device visible");
    expect_contains(e.what(), "use --device cpu");
  }
  expect_contains(error_of("cuda:99").what(), "device 'cuda:99'");
}

TEST(MakeBackend, CudaModuleMissingNamesThePath) {
  const char* var = "LAYERLAB_CUDA_MODULE";
  const std::string old = std::getenv(var) ? std::getenv(var) : "";
  ::setenv(var, "/nonexistent/liblayerlab_cuda.so", 1);
  const Error e = error_of("cuda:1");
  old.empty() ? ::unsetenv(var) : ::setenv(var, old.c_str(), 1);
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(),
                  "device 'cuda:1': LAYERLAB_CUDA_MODULE=/nonexistent/liblayerlab_cuda.so: no "
                  "such file");
  expect_contains(e.what(), "use --device cpu");
}

TEST(MakeBackend, CudaDeviceOutOfRangeNamesTheVisibleDevices) {
  const int count = cuda_device_count();
  if (count == 0) GTEST_SKIP() << "no CUDA device visible";
  const Error e = error_of("cuda:" + std::to_string(count));
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), "CUDA device");
  expect_contains(e.what(), "cuda:0 to cuda:" + std::to_string(count - 1));
}
#else
TEST(MakeBackend, CudaInABuildWithoutItSaysHowToGetIt) {
  for (const char* name : {"cuda", "cuda:0", "cuda:99"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << name;
    expect_contains(e.what(), std::string("device '") + name + "'");
    expect_contains(e.what(), "built without CUDA");
    expect_contains(e.what(), "-DLAYERLAB_CUDA=ON");
  }
}
#endif

TEST(CpuBackend, RefusesReducedPrecisionNamingCuda) {
  auto b = make_cpu_backend(1);
  for (Precision p : {Precision::kTf32, Precision::kBf16}) {
    try {
      b->set_precision(p);
      ADD_FAILURE() << "set_precision(" << static_cast<int>(p) << ") did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      expect_contains(e.what(), "cuda");
    }
    EXPECT_EQ(b->precision(), Precision::kFp32);
  }
  b->set_precision(Precision::kFp32);
}

// Softmax cross-entropy against its definition (in double), and with the gradient written
// over the outputs themselves: the same loss and the same gradient bits as into a buffer of
// its own.
TEST(CpuBackend, CrossEntropyMatchesItsDefinitionAlsoWithTheGradientOverTheOutputs) {
  auto b = make_cpu_backend(1);
  constexpr int kRows = 3, kCols = 4, kBatch = 4;
  const std::vector<float> out = {0.5f, -1.f, 2.f, 0.f, 3.f, 3.f, -2.f, 1.f, -4.f, 0.f, 8.f, 7.5f};
  const std::vector<float> labels = {2, 0, 3};
  double expected_loss = 0;
  std::vector<double> expected_grad(out.size());
  for (int r = 0; r < kRows; ++r) {
    double sum = 0;
    for (int c = 0; c < kCols; ++c) sum += std::exp(static_cast<double>(out[r * kCols + c]));
    const int label = static_cast<int>(labels[r]);
    expected_loss += std::log(sum) - out[r * kCols + label];
    for (int c = 0; c < kCols; ++c)
      expected_grad[r * kCols + c] =
          (std::exp(static_cast<double>(out[r * kCols + c])) / sum - (c == label)) / kBatch;
  }
  std::vector<float> grad(out.size());
  double loss = 0, correct = 0;
  b->loss(Loss::kSoftmaxCrossEntropy, 1, kRows, kCols, out.data(), labels.data(), grad.data(),
          kBatch, &loss, &correct);
  EXPECT_NEAR(loss, expected_loss, 1e-5);
  EXPECT_EQ(correct, 2);  // rows 0 and 1 (a tie goes to the first column); row 2 is wrong
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(grad[i], expected_grad[i], 1e-6) << i;

  std::vector<float> in_place = out;
  double loss_in_place = 0;
  b->loss(Loss::kSoftmaxCrossEntropy, 1, kRows, kCols, in_place.data(), labels.data(),
          in_place.data(), kBatch, &loss_in_place, nullptr);
  EXPECT_EQ(loss_in_place, loss);
  EXPECT_EQ(in_place, grad);
}

// Released buffers stay with the backend (and count) for the next trial to reuse: freed to
// the C library, the pages of a large block went back to the kernel and were faulted in again.
TEST(CpuBackend, ReleasedBlocksArePooledCountedAndReused) {
  auto b = make_cpu_backend(1);
  const int64_t before = b->memory_in_use();
  void* p = b->allocate(1000);
  void* q = b->allocate(1 << 20);
  const int64_t held = b->memory_in_use();
  EXPECT_GE(held - before, 1000 + (1 << 20));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u) << "cache-line aligned";
  b->release(p);
  b->release(q);
  EXPECT_EQ(b->memory_in_use(), held) << "pooled blocks count";
  EXPECT_EQ(b->allocate((1 << 20) - 100), q) << "the same size class: the pooled block";
  EXPECT_EQ(b->memory_in_use(), held);
  // A block beyond what the pool keeps goes back at once.
  void* huge = b->allocate(size_t{300} << 20);
  EXPECT_GE(b->memory_in_use() - held, int64_t{300} << 20);
  b->release(huge);
  EXPECT_EQ(b->memory_in_use(), held);
}

// A large block comes with its pages in place (one madvise instead of a trap per page, which
// cost 9% of a sweep's worker time on a VM): every page of a fresh 4 MiB block is resident
// before anything is written to it. Skipped where the kernel cannot prefault.
TEST(CpuBackend, ALargeBlockComesWithItsPagesInPlace) {
#ifdef MADV_POPULATE_WRITE
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool prefaults = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
  munmap(probe, page);
  if (!prefaults) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux < 5.14)";
  auto b = make_cpu_backend(1);
  const size_t bytes = size_t{4} << 20;
  auto* p = static_cast<unsigned char*>(b->allocate(bytes));
  const auto first = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const size_t pages = (reinterpret_cast<uintptr_t>(p) + bytes - first) / page;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(mincore(reinterpret_cast<void*>(first), pages * page, resident.data()), 0);
  size_t in = 0;
  for (unsigned char r : resident) in += r & 1;
  EXPECT_EQ(in, pages) << "pages resident before the first write";
  b->release(p);
#else
  GTEST_SKIP() << "built without MADV_POPULATE_WRITE";
#endif
}

}  // namespace
}  // namespace layerlab::backend
