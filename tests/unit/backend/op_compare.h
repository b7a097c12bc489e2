// Backend-against-backend comparison in the spirit of ggml's test-backend-ops: one operation
// runs on a reference backend (cpu) and a backend under test from the same host arrays, and
// every array is compared afterwards (inputs too, so an op that writes where it should not
// fails).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"

namespace layerlab::backend::testing {

// The arrays of one case, on the host.
struct Arrays {
  std::vector<std::vector<float>> f;
  std::vector<std::vector<int32_t>> i;
  std::vector<std::vector<double>> d;
};

// The same arrays in one backend's memory.
class DeviceArrays {
 public:
  DeviceArrays(Backend& b, const Arrays& host);
  float* f(size_t k) { return f_.at(k).data(); }
  int32_t* i(size_t k) { return i_.at(k).data(); }
  double* d(size_t k) { return d_.at(k).data(); }
  Arrays download() const;

 private:
  std::vector<DeviceBuffer<float>> f_;
  std::vector<DeviceBuffer<int32_t>> i_;
  std::vector<DeviceBuffer<double>> d_;
  std::vector<size_t> f_sizes_, i_sizes_, d_sizes_;
};

// Per element: |x - ref| <= abs + rel * |ref| (NaN only against NaN). With nmse >= 0, per
// array instead: sum (x - ref)^2 / sum ref^2 <= nmse (for reduced-precision products, whose
// error is relative to the whole result). int32 arrays must be equal.
struct Tolerance {
  double rel = 0, abs = 0;
  double nmse = -1;
};

using Op = std::function<void(Backend&, DeviceArrays&)>;

::testing::AssertionResult same_results(Backend& reference, Backend& tested, const Arrays& inputs,
                                        const Op& op, const Tolerance& tol);

// n values uniform in [lo, hi), deterministic in seed.
std::vector<float> uniform(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);

}  // namespace layerlab::backend::testing
