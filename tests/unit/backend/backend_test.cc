// What every build checks without a GPU: device names, the CPU backend's refusal of reduced
// precision, and its memory accounting.
#include "backend/backend.h"

#include <gtest/gtest.h>

#include <string>

#include "backend/cpu_backend.h"
#include "common/error.h"
#ifdef LAYERLAB_HAVE_CUDA
#include "backend/cuda_backend.h"
#endif

namespace layerlab::backend {
namespace {

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

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
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

TEST(MakeBackend, CudaWithoutADeviceSaysWhy) {
#ifdef LAYERLAB_HAVE_CUDA
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is visible here";
  for (const char* name : {"cuda", "cuda:0", "cuda:99"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << name;
    expect_contains(e.what(), "no CUDA device visible");
    expect_contains(e.what(), "use --device cpu");
  }
  expect_contains(error_of("cuda:99").what(), "device 'cuda:99'");
#else
  for (const char* name : {"cuda", "cuda:0", "cuda:99"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << name;
    expect_contains(e.what(), std::string("device '") + name + "'");
    expect_contains(e.what(), "built without CUDA");
  }
#endif
}

#ifdef LAYERLAB_HAVE_CUDA
TEST(MakeBackend, CudaDeviceOutOfRangeNamesTheVisibleDevices) {
  const int count = cuda_device_count();
  if (count == 0) GTEST_SKIP() << "no CUDA device visible";
  const Error e = error_of("cuda:" + std::to_string(count));
  EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
  expect_contains(e.what(), "CUDA device");
  expect_contains(e.what(), "cuda:0 to cuda:" + std::to_string(count - 1));
}

TEST(MakeBackend, MalformedCudaNamesAreInvalidArguments) {
  for (const char* name : {"cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cudax"}) {
    const Error e = error_of(name);
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << name;
    expect_contains(e.what(), std::string("unknown device '") + name + "'");
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

TEST(CpuBackend, MemoryInUseCountsAllocationsUntilReleased) {
  auto b = make_cpu_backend(1);
  const int64_t before = b->memory_in_use();
  void* p = b->allocate(1000);
  void* q = b->allocate(1 << 20);
  EXPECT_GE(b->memory_in_use() - before, 1000 + (1 << 20));
  b->release(p);
  EXPECT_GE(b->memory_in_use() - before, 1 << 20);
  b->release(q);
  EXPECT_EQ(b->memory_in_use(), before);
}

}  // namespace
}  // namespace layerlab::backend
