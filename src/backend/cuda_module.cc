// The entry point of liblayerlab_cuda.so (module.h): the one symbol the module exports.
#include "backend/cuda_backend.h"
#include "backend/module.h"

#ifndef LAYERLAB_BACKEND_INTERFACE
#error "LAYERLAB_BACKEND_INTERFACE must be defined (src/backend/CMakeLists.txt)"
#endif

extern "C" __attribute__((visibility("default"))) const layerlab::backend::BackendModule*
layerlab_backend_module_entry() {
  static const layerlab::backend::BackendModule module{
      layerlab::backend::kModuleAbi,
      LAYERLAB_BACKEND_INTERFACE,
      LAYERLAB_VERSION,
      "cuda",
      &layerlab::backend::cuda_device_count,
      &layerlab::backend::make_cuda_backend,
  };
  return &module;
}
