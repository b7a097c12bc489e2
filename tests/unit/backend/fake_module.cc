// Stand-ins for the CUDA backend module, for the loader's tests (module_loader_test.cc) on
// every build: one source, built as several modules by CMake with FAKE_* definitions.
//   FAKE_ABI, FAKE_INTERFACE, FAKE_DEVICE: what the module claims (default: this build's)
//   FAKE_NO_ENTRY: exports no entry point (any other shared object)
// The good one sees no device and throws from make(), as the real one does on a machine
// without a GPU, so the tests see a layerlab::Error cross the boundary.
#include <string>

#include "backend/module.h"
#include "common/error.h"

#ifndef FAKE_NO_ENTRY
#ifndef FAKE_ABI
#define FAKE_ABI layerlab::backend::kModuleAbi
#endif
#ifndef FAKE_INTERFACE
#define FAKE_INTERFACE LAYERLAB_BACKEND_INTERFACE
#endif
#ifndef FAKE_DEVICE
#define FAKE_DEVICE "cuda"
#endif

namespace {

int device_count(std::string* why) {
  if (why) *why = "fake module: no device here";
  return 0;
}

std::unique_ptr<layerlab::backend::Backend> make(int index, int) {
  throw layerlab::failed_precondition("device 'cuda:" + std::to_string(index) +
                                      "': fake module: no device here");
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const layerlab::backend::BackendModule*
layerlab_backend_module_entry() {
  static const layerlab::backend::BackendModule module{
      FAKE_ABI, FAKE_INTERFACE, LAYERLAB_VERSION, FAKE_DEVICE, &device_count, &make};
  return &module;
}
#else
extern "C" __attribute__((visibility("default"))) int layerlab_fake_not_a_module() {
  return 1;
}
#endif
