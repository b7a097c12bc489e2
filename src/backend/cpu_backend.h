// The CPU backend: matrix work through CBLAS (OpenBLAS), element-wise work in fused loops.
// Deterministic: the same inputs and thread count give bit-identical results.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace layerlab::backend {

std::unique_ptr<Backend> make_cpu_backend(int threads);

}  // namespace layerlab::backend
