#include "backend/backend.h"

#include "backend/cpu_backend.h"
#include "common/error.h"

namespace layerlab::backend {

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return make_cpu_backend(threads);
  if (name.rfind("cuda", 0) == 0)
    throw failed_precondition("device '" + name +
                              "': this layerlab was built without CUDA; use --device cpu");
  throw invalid_argument("unknown device '" + name + "'; known: cpu, cuda[:N]");
}

}  // namespace layerlab::backend
