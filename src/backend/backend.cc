#include "backend/backend.h"

#include <charconv>

#include "backend/cpu_backend.h"
#include "common/error.h"
#ifdef LAYERLAB_HAVE_CUDA
#include "backend/cuda_backend.h"
#endif

namespace layerlab::backend {
namespace {

[[noreturn]] void unknown_device(const std::string& name) {
  throw invalid_argument("unknown device '" + name + "'; known: cpu, cuda[:N]");
}

#ifdef LAYERLAB_HAVE_CUDA
// "cuda" is device 0; "cuda:N" device N.
int cuda_index(const std::string& name) {
  if (name == "cuda") return 0;
  const std::string_view digits = std::string_view(name).substr(5);
  int index = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (name.rfind("cuda:", 0) != 0 || digits.empty() || ec != std::errc() ||
      end != digits.data() + digits.size() || index < 0)
    unknown_device(name);
  return index;
}
#endif

}  // namespace

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return make_cpu_backend(threads);
  if (name.rfind("cuda", 0) == 0) {
#ifdef LAYERLAB_HAVE_CUDA
    return make_cuda_backend(cuda_index(name), threads);
#else
    throw failed_precondition("device '" + name +
                              "': this layerlab was built without CUDA; use --device cpu");
#endif
  }
  unknown_device(name);
}

}  // namespace layerlab::backend
