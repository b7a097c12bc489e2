// The small-matrix kernels for AVX2 + FMA: 8 lanes (cpu_gemm_tiles.h). This file alone is
// compiled with -mavx2 -mfma (src/backend/CMakeLists.txt); nothing here runs unless the CPU
// has both (cpu_gemm.cc).
#include <immintrin.h>

#include "backend/cpu_gemm_tiles.h"

namespace layerlab::backend::cpu {
namespace {

alignas(32) constexpr int32_t kMaskSource[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};

struct Avx2 {
  static constexpr int kLanes = 8;
  // 6 x 2 accumulators, 2 vectors of B and a broadcast: 15 of the 16 registers.
  static constexpr int kTileRows = 6;
  using Reg = __m256;
  using Mask = __m256i;
  // The first `lanes` lanes (1..8).
  static Mask first(int lanes) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskSource + 8 - lanes));
  }
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg set1(float x) { return _mm256_set1_ps(x); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Reg r) { _mm256_storeu_ps(p, r); }
  static void store(float* p, Reg r, Mask m) { _mm256_maskstore_ps(p, m, r); }
  static Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  // minps, maxps: a < b ? a : b, a > b ? a : b (the second operand for NaN).
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg abs(Reg z) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), z); }
  static Reg neg(Reg z) { return _mm256_xor_ps(_mm256_set1_ps(-0.f), z); }
  // |magnitude| with the sign of `sign`.
  static Reg copysign(Reg magnitude, Reg sign) {
    const Reg bit = _mm256_set1_ps(-0.f);
    return _mm256_or_ps(_mm256_andnot_ps(bit, magnitude), _mm256_and_ps(bit, sign));
  }
  // 2^n for integral n in [-126, 127], built in the exponent bits; NaN lanes give 2^0.
  static Reg pow2(Reg n) {
    const Reg ordered = _mm256_and_ps(n, _mm256_cmp_ps(n, n, _CMP_EQ_OQ));
    const __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(ordered), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // z > 0 ? a : b
  static Reg select_positive(Reg z, Reg a, Reg b) {
    return _mm256_blendv_ps(b, a, _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_GT_OQ));
  }
};

}  // namespace

void sgemm_avx2(const SmallGemmCall& call) {
  run<Avx2>(call);
}

}  // namespace layerlab::backend::cpu
