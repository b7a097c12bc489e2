// The fixture of the suites that compare a backend with the CPU reference, parameterised by
// the device under test: "cuda" (each test skipped, with the reason, where there is no CUDA
// backend: built without CUDA, or no device visible) and "cpu" with 2 threads, which checks
// the suites themselves on every machine (under the sanitizers too).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cpu_backend.h"
#include "common/error.h"

namespace layerlab::backend::testing {

class AgainstCpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      tested_ = make_backend(GetParam(), 2);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kFailedPrecondition) throw;
      GTEST_SKIP() << "no " << GetParam() << " backend here: " << e.what();
    }
    cpu_ = make_cpu_backend(1);
  }
  bool tested_is_cpu() const { return tested_->name() == "cpu"; }

  std::unique_ptr<Backend> cpu_, tested_;
};

// Test names: Cuda/SUITE.TEST/0 and Cpu/SUITE.TEST/0 (`ctest -R '^Cuda/'` runs the CUDA ones).
#define LAYERLAB_AGAINST_CPU(suite)                                              \
  INSTANTIATE_TEST_SUITE_P(Cuda, suite, ::testing::Values(std::string("cuda"))); \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::Values(std::string("cpu")))

}  // namespace layerlab::backend::testing
