#include "backend/backend.h"

#include <charconv>

#include "backend/cpu_backend.h"
#include "backend/module_loader.h"
#include "common/error.h"

namespace layerlab::backend {
namespace {

[[noreturn]] void unknown_device(const std::string& name) {
  throw invalid_argument("unknown device '" + name + "'; known: cpu, cuda[:N]");
}

// "cuda" is device 0; "cuda:N" device N.
int cuda_index(const std::string& name) {
  if (name == "cuda") return 0;
  const std::string_view digits = std::string_view(name).substr(4);
  int index = -1;
  if (name.rfind("cuda:", 0) != 0 || digits.size() < 2) unknown_device(name);
  const auto [end, ec] = std::from_chars(digits.data() + 1, digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) unknown_device(name);
  return index;
}

// The CUDA backend lives in its own module (liblayerlab_cuda.so), loaded only here, so that
// no other process loads the CUDA runtime and cuBLAS (hundreds of MB, most of a second).
std::unique_ptr<Backend> make_cuda(const std::string& name, int index, int threads) {
#ifdef LAYERLAB_HAVE_CUDA
  const BackendModule* module = nullptr;
  try {
    module = &load_module(cuda_module_search());
  } catch (const Error& e) {
    throw Error(e.code(), "device '" + name + "': " + e.what() + "; or use --device cpu");
  }
  return module->make(index, threads);
#else
  (void)index;
  (void)threads;
  throw failed_precondition("device '" + name +
                            "': this layerlab was built without CUDA (rebuild it with "
                            "-DLAYERLAB_CUDA=ON); use --device cpu");
#endif
}

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return make_cpu_backend(threads);
  if (name.rfind("cuda", 0) == 0) return make_cuda(name, cuda_index(name), threads);
  unknown_device(name);
}

}  // namespace layerlab::backend
