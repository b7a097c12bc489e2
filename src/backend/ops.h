// The scalar definitions of the element-wise functions and optimizer rules every backend
// implements, and the dispatch that specialises kernels per activation and rule: the CPU
// kernels call them directly, the CUDA kernels call the same definitions on the device
// (LAYERLAB_HOST_DEVICE), and the tests use them as the reference for other backends.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// Marks the scalar functions below as callable from CUDA kernels when nvcc compiles them.
#ifdef __CUDACC__
#define LAYERLAB_HOST_DEVICE __host__ __device__
#else
#define LAYERLAB_HOST_DEVICE
#endif

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
// Every activation, in enum order (for tests and loops over them).
inline constexpr Activation kAllActivations[] = {
    Activation::kLinear, Activation::kRelu,    Activation::kLeakyRelu,
    Activation::kElu,    Activation::kSelu,    Activation::kGelu,
    Activation::kTanh,   Activation::kSigmoid, Activation::kSoftplus};

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

// Hyperparameters of one optimizer step for one pack member. bias_correction1/2 are
// 1 - beta^t for adam-style rules (the caller counts steps).
struct StepHyper {
  float lr = 0.f;
  float momentum = 0.f;      // momentum / nesterov
  float weight_decay = 0.f;  // L2 added to the gradient; decoupled for adamw
  float beta1 = 0.9f;
  float beta2 = 0.999f;  // adam, adamw; rmsprop's smoothing constant (alpha)
  float eps = 1e-8f;
  float bias_correction1 = 1.f;
  float bias_correction2 = 1.f;
};

template <Activation A>
using ActivationTag = std::integral_constant<Activation, A>;

// Calls f(ActivationTag<a>{}) so that kernels are specialised per activation.
template <typename F>
void with_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::kLinear:
      return f(ActivationTag<Activation::kLinear>{});
    case Activation::kRelu:
      return f(ActivationTag<Activation::kRelu>{});
    case Activation::kLeakyRelu:
      return f(ActivationTag<Activation::kLeakyRelu>{});
    case Activation::kElu:
      return f(ActivationTag<Activation::kElu>{});
    case Activation::kSelu:
      return f(ActivationTag<Activation::kSelu>{});
    case Activation::kGelu:
      return f(ActivationTag<Activation::kGelu>{});
    case Activation::kTanh:
      return f(ActivationTag<Activation::kTanh>{});
    case Activation::kSigmoid:
      return f(ActivationTag<Activation::kSigmoid>{});
    case Activation::kSoftplus:
      return f(ActivationTag<Activation::kSoftplus>{});
  }
}

template <UpdateRule R>
using RuleTag = std::integral_constant<UpdateRule, R>;

// Calls f(RuleTag<rule>{}) so that optimizer loops are specialised per rule. Always inlined,
// so that a caller built for several instruction sets (target_clones) compiles f's loops
// for each.
template <typename F>
[[gnu::always_inline]] inline void with_rule(UpdateRule rule, F&& f) {
  switch (rule) {
    case UpdateRule::kSgd:
      return f(RuleTag<UpdateRule::kSgd>{});
    case UpdateRule::kMomentum:
      return f(RuleTag<UpdateRule::kMomentum>{});
    case UpdateRule::kNesterov:
      return f(RuleTag<UpdateRule::kNesterov>{});
    case UpdateRule::kAdam:
      return f(RuleTag<UpdateRule::kAdam>{});
    case UpdateRule::kAdamW:
      return f(RuleTag<UpdateRule::kAdamW>{});
    case UpdateRule::kRmsprop:
      return f(RuleTag<UpdateRule::kRmsprop>{});
    case UpdateRule::kAdagrad:
      return f(RuleTag<UpdateRule::kAdagrad>{});
  }
}

namespace optim {

// The update rules, after PyTorch's torch.optim definitions (weight decay as L2 on the
// gradient, except adamw's decoupled decay), so reference trajectories match. s1, s2: the
// parameter's optimizer state (unused by plain sgd).
template <UpdateRule R>
LAYERLAB_HOST_DEVICE inline void update(float& w, float g, float& s1, float& s2,
                                        const StepHyper& h) {
  const float lr = h.lr, wd = h.weight_decay;
  if constexpr (R == UpdateRule::kSgd) {
    w -= lr * (g + wd * w);
  } else if constexpr (R == UpdateRule::kMomentum || R == UpdateRule::kNesterov) {
    const float gi = g + wd * w;
    s1 = h.momentum * s1 + gi;
    w -= lr * (R == UpdateRule::kNesterov ? gi + h.momentum * s1 : s1);
  } else if constexpr (R == UpdateRule::kAdam || R == UpdateRule::kAdamW) {
    float gi = g;
    if constexpr (R == UpdateRule::kAdamW)
      w *= 1.f - lr * wd;
    else
      gi += wd * w;
    s1 = h.beta1 * s1 + (1.f - h.beta1) * gi;
    s2 = h.beta2 * s2 + (1.f - h.beta2) * gi * gi;
    const float step = lr / h.bias_correction1;
    const float inv_sqrt_bc2 = 1.f / std::sqrt(h.bias_correction2);
    w -= step * s1 / (std::sqrt(s2) * inv_sqrt_bc2 + h.eps);
  } else if constexpr (R == UpdateRule::kRmsprop) {
    const float gi = g + wd * w;
    s2 = h.beta2 * s2 + (1.f - h.beta2) * gi * gi;
    w -= lr * gi / (std::sqrt(s2) + h.eps);
  } else {  // kAdagrad
    const float gi = g + wd * w;
    s1 += gi * gi;
    w -= lr * gi / (std::sqrt(s1) + h.eps);
  }
}

}  // namespace optim

// e^x in single precision, to about 2 ulp (Cephes' expf polynomial after Cody-Waite range
// reduction), written without calls or branches so that loops over it vectorise; libm's
// expf is a call per element and made tanh/sigmoid/elu layers cost more than their GEMMs.
LAYERLAB_HOST_DEVICE inline float fast_exp(float x) {
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
  // NaN in gives NaN out (p is NaN); converting NaN to int would be undefined, so the scale
  // is taken from 0 instead.
  const int32_t bits = (static_cast<int32_t>(n == n ? n : 0.f) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

namespace act {

inline constexpr float kLeakySlope = 0.01f;
inline constexpr float kSeluAlpha = 1.6732632423543772f;
inline constexpr float kSeluScale = 1.0507009873554805f;
inline constexpr float kSoftplusThreshold = 20.0f;  // as PyTorch: linear above it

LAYERLAB_HOST_DEVICE inline float forward(Activation a, float z) {
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
LAYERLAB_HOST_DEVICE inline float derivative(Activation a, float z, float y) {
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
LAYERLAB_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from 24 random bits.
LAYERLAB_HOST_DEVICE inline float uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t h = mix64(seed ^ mix64(stream ^ mix64(index)));
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

}  // namespace layerlab::backend
