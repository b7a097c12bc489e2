#include "op_compare.h"

#include <cmath>
#include <sstream>

namespace layerlab::backend::testing {
namespace {

template <typename T>
std::vector<DeviceBuffer<T>> upload_all(Backend& b, const std::vector<std::vector<T>>& host) {
  std::vector<DeviceBuffer<T>> out;
  for (const auto& v : host) {
    out.emplace_back(b, std::max<size_t>(v.size(), 1));
    if (!v.empty()) out.back().upload(v);
  }
  return out;
}

template <typename T>
std::vector<std::vector<T>> download_all(const std::vector<DeviceBuffer<T>>& bufs,
                                         const std::vector<size_t>& sizes) {
  std::vector<std::vector<T>> out;
  for (size_t k = 0; k < bufs.size(); ++k) {
    std::vector<T> v = bufs[k].download();
    v.resize(sizes[k]);
    out.push_back(std::move(v));
  }
  return out;
}

template <typename T>
std::vector<size_t> sizes_of(const std::vector<std::vector<T>>& host) {
  std::vector<size_t> sizes;
  for (const auto& v : host) sizes.push_back(v.size());
  return sizes;
}

// Empty when within tolerance, else what is wrong.
template <typename T>
std::string compare(const std::vector<T>& ref, const std::vector<T>& got, const Tolerance& tol) {
  std::ostringstream why;
  if (tol.nmse >= 0) {
    double err = 0, norm = 0;
    for (size_t j = 0; j < ref.size(); ++j) {
      const double diff = static_cast<double>(got[j]) - static_cast<double>(ref[j]);
      err += diff * diff;
      norm += static_cast<double>(ref[j]) * static_cast<double>(ref[j]);
    }
    const double nmse = norm > 0 ? err / norm : err;
    if (!(nmse <= tol.nmse)) why << "normalised mean squared error " << nmse << " > " << tol.nmse;
    return why.str();
  }
  size_t bad = 0, worst = 0;
  double worst_excess = 0;
  for (size_t j = 0; j < ref.size(); ++j) {
    const double r = static_cast<double>(ref[j]), g = static_cast<double>(got[j]);
    if (std::isnan(r) && std::isnan(g)) continue;
    const double excess = std::fabs(g - r) - (tol.abs + tol.rel * std::fabs(r));
    if (!(excess <= 0)) {
      if (bad == 0 || !(excess <= worst_excess)) worst = j, worst_excess = excess;
      ++bad;
    }
  }
  if (bad)
    why << bad << " of " << ref.size() << " elements differ; worst at " << worst << ": expected "
        << +ref[worst] << ", got " << +got[worst] << " (rel " << tol.rel << ", abs " << tol.abs
        << ")";
  return why.str();
}

template <typename T>
void compare_all(const char* kind, const std::vector<std::vector<T>>& ref,
                 const std::vector<std::vector<T>>& got, const Tolerance& tol,
                 std::ostringstream& failures) {
  for (size_t k = 0; k < ref.size(); ++k) {
    const std::string why = compare(ref[k], got[k], tol);
    if (!why.empty()) failures << "\n  " << kind << " array " << k << ": " << why;
  }
}

}  // namespace

DeviceArrays::DeviceArrays(Backend& b, const Arrays& host)
    : f_(upload_all(b, host.f)),
      i_(upload_all(b, host.i)),
      d_(upload_all(b, host.d)),
      f_sizes_(sizes_of(host.f)),
      i_sizes_(sizes_of(host.i)),
      d_sizes_(sizes_of(host.d)) {}

Arrays DeviceArrays::download() const {
  return {download_all(f_, f_sizes_), download_all(i_, i_sizes_), download_all(d_, d_sizes_)};
}

::testing::AssertionResult same_results(Backend& reference, Backend& tested, const Arrays& inputs,
                                        const Op& op, const Tolerance& tol) {
  DeviceArrays ref_arrays(reference, inputs), test_arrays(tested, inputs);
  op(reference, ref_arrays);
  op(tested, test_arrays);
  reference.synchronize();
  tested.synchronize();
  const Arrays ref = ref_arrays.download(), got = test_arrays.download();
  std::ostringstream failures;
  compare_all("float", ref.f, got.f, tol, failures);
  compare_all("int32", ref.i, got.i, Tolerance{}, failures);
  compare_all("double", ref.d, got.d, tol, failures);
  if (failures.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << tested.name() << " against " << reference.name() << ":" << failures.str();
}

std::vector<float> uniform(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (size_t j = 0; j < n; ++j) v[j] = lo + (hi - lo) * uniform01(seed, 0x7e57, j);
  return v;
}

}  // namespace layerlab::backend::testing
