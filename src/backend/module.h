// The boundary between layerlab and a backend built as a module of its own and loaded at run
// time (the CUDA backend: liblayerlab_cuda.so, which alone links the CUDA runtime and cuBLAS,
// so that a process that never asks for a CUDA device never loads them).
//
// A module exports one C symbol, kModuleEntry, returning a BackendModule. Both sides are
// built together from the same sources (C++ and exceptions cross the boundary: the module's
// make() throws layerlab::Error), so the loader refuses a module that was not: `abi` is
// checked first and numbers the layout of BackendModule (bump it with any change to this
// struct; the field stays first forever), then `interface` must equal the loader's: a hash
// of the headers whose types cross (backend.h, ops.h, this file, common/error.h), computed
// by CMake (LAYERLAB_BACKEND_INTERFACE), so a module left over from older sources gives a
// clear error instead of undefined behaviour.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"

namespace layerlab::backend {

inline constexpr uint32_t kModuleAbi = 1;
inline constexpr const char* kModuleEntry = "layerlab_backend_module_entry";

struct BackendModule {
  uint32_t abi;           // kModuleAbi of the module's build: checked before any other field
  const char* interface;  // LAYERLAB_BACKEND_INTERFACE of the module's build
  const char* version;    // layerlab's version at the module's build, for messages
  const char* device;     // the device family it serves: "cuda"
  // The number of devices this process sees; 0 with `why` set (the library's own words) when
  // there is none or no usable driver. Never throws.
  int (*device_count)(std::string* why);
  // Backend on device `index`; throws failed_precondition naming the reason when there is no
  // such device.
  std::unique_ptr<Backend> (*make)(int index, int threads);
};

}  // namespace layerlab::backend

// The signature of the entry point (extern "C", default visibility, in the module).
using layerlab_backend_module_entry_fn = const layerlab::backend::BackendModule* (*)();
