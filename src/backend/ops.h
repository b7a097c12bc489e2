// The scalar definitions of the element-wise functions every backend implements: the CPU
// kernels call them directly and the tests use them as the reference for other backends.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace layerlab::backend {

enum class Activation : uint8_t {
  kLinear,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kGelu,
  kTanh,
  kSigmoid,
  kSoftplus,
};

enum class Loss : uint8_t {
  kSoftmaxCrossEntropy,  // targets are class ids; outputs are logits
  kMeanSquaredError,     // targets are values; mean over the batch and outputs
};

// Arithmetic of the matrix products. Storage, element-wise work and the optimizer state stay
// fp32 in every mode; tf32 rounds GEMM operands to 10-bit mantissas on tensor cores; bf16
// multiplies bf16 copies of the operands with fp32 accumulation (fp32 master weights).
enum class Precision : uint8_t { kFp32, kTf32, kBf16 };

enum class UpdateRule : uint8_t {
  kSgd,
  kMomentum,
  kNesterov,
  kAdam,
  kAdamW,
  kRmsprop,
  kAdagrad,
};

// e^x in single precision, to about 2 ulp (Cephes' expf polynomial after Cody-Waite range
// reduction), written without calls or branches so that loops over it vectorise; libm's
// expf is a call per element and made tanh/sigmoid/elu layers cost more than their GEMMs.
inline float fast_exp(float x) {
  x = x < -87.3f ? -87.3f : (x > 88.f ? 88.f : x);
  const float round_magic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (x * 1.44269504088896341f + round_magic) - round_magic;
  const float r = x - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

namespace act {

inline constexpr float kLeakySlope = 0.01f;
inline constexpr float kSeluAlpha = 1.6732632423543772f;
inline constexpr float kSeluScale = 1.0507009873554805f;
inline constexpr float kSoftplusThreshold = 20.0f;  // as PyTorch: linear above it

inline float forward(Activation a, float z) {
  switch (a) {
    case Activation::kLinear:
      return z;
    case Activation::kRelu:
      return z > 0.f ? z : 0.f;
    case Activation::kLeakyRelu:
      return z > 0.f ? z : kLeakySlope * z;
    case Activation::kElu:
      return z > 0.f ? z : fast_exp(z) - 1.f;
    case Activation::kSelu:
      return kSeluScale * (z > 0.f ? z : kSeluAlpha * (fast_exp(z) - 1.f));
    case Activation::kGelu:
      return 0.5f * z * (1.f + std::erf(z * 0.70710678118654752f));
    case Activation::kTanh: {
      const float e = fast_exp(-2.f * std::fabs(z));
      return std::copysign((1.f - e) / (1.f + e), z);
    }
    case Activation::kSigmoid:
      return 1.f / (1.f + fast_exp(-z));
    case Activation::kSoftplus:
      return z > kSoftplusThreshold ? z : std::log1p(std::exp(z));
  }
  return z;
}

// d f(z) / dz, given the pre-activation z and the output y = f(z) (some are cheaper from y).
inline float derivative(Activation a, float z, float y) {
  switch (a) {
    case Activation::kLinear:
      return 1.f;
    case Activation::kRelu:
      return z > 0.f ? 1.f : 0.f;
    case Activation::kLeakyRelu:
      return z > 0.f ? 1.f : kLeakySlope;
    case Activation::kElu:
      return z > 0.f ? 1.f : y + 1.f;
    case Activation::kSelu:
      return z > 0.f ? kSeluScale : y + kSeluScale * kSeluAlpha;
    case Activation::kGelu: {
      const float cdf = 0.5f * (1.f + std::erf(z * 0.70710678118654752f));
      const float pdf = 0.39894228040143268f * std::exp(-0.5f * z * z);
      return cdf + z * pdf;
    }
    case Activation::kTanh:
      return 1.f - y * y;
    case Activation::kSigmoid:
      return y * (1.f - y);
    case Activation::kSoftplus:
      return z > kSoftplusThreshold ? 1.f : 1.f / (1.f + fast_exp(-z));
  }
  return 1.f;
}

}  // namespace act

// Counter-based random numbers: the value for (seed, stream, index) never depends on the
// order of calls or on the backend, so dropout masks are reproducible and comparable.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 24 random bits.
inline float uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t h = mix64(seed ^ mix64(stream ^ mix64(index)));
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

}  // namespace layerlab::backend
