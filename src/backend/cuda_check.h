// CUDA runtime statuses as layerlab errors that name the failed call and CUDA's own words.
// Header-only so that host code and the kernel files (nvcc) share it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/error.h"

namespace layerlab::backend {

// Out of memory and a missing device or driver are states of the machine
// (failed_precondition); anything else is a bug or a broken device (internal_error).
inline Error cuda_error(cudaError_t status, const std::string& call) {
  const std::string what =
      call + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  switch (status) {
    case cudaErrorMemoryAllocation:
      return failed_precondition("cuda: out of device memory in " + what);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
      return failed_precondition("cuda: " + what);
    default:
      return internal_error("cuda: " + what);
  }
}

inline void cuda_check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw cuda_error(status, call);
}

// After a kernel launch: reports a bad launch configuration at once (faults inside the kernel
// surface at the next synchronising call).
inline void check_launch(const char* kernel) {
  cuda_check(cudaGetLastError(), kernel);
}

}  // namespace layerlab::backend

// Checks a CUDA runtime call, naming it in the error.
#define LAYERLAB_CUDA_CHECK(call) ::layerlab::backend::cuda_check((call), #call)
