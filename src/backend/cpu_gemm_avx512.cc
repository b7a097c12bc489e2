// The small-matrix kernels for AVX-512: 16 lanes, masks in mask registers (cpu_gemm_tiles.h).
// This file alone is compiled with -mavx512f (src/backend/CMakeLists.txt); nothing here runs
// unless the CPU and the OS support it (cpu_gemm.cc). Its results are the AVX2 kernels' bits:
// the same FMA chain per element, the same epilogue operations.
// GCC 12 warns, wherever it inlines an AVX-512 intrinsic whose pass-through operand is
// _mm512_undefined_*(), that this self-initialised register "may be used uninitialized": a
// false positive in its own header, silenced for that header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include "backend/cpu_gemm_tiles.h"

namespace layerlab::backend::cpu {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
  // 12 x 2 accumulators of the 32 registers: 1.1-1.3x the 6-row tiles on a training step's
  // input and weight gradients (gemm_bench, 2026-12-07).
  static constexpr int kTileRows = 12;
  using Reg = __m512;
  using Mask = __mmask16;
  // The first `lanes` lanes (1..16).
  static Mask first(int lanes) { return static_cast<Mask>((1u << lanes) - 1); }
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float x) { return _mm512_set1_ps(x); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  // Masked-off lanes are neither read (no fault past the end) nor written.
  static Reg load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Reg r) { _mm512_storeu_ps(p, r); }
  static void store(float* p, Reg r, Mask m) { _mm512_mask_storeu_ps(p, m, r); }
  static Reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  // vminps, vmaxps: a < b ? a : b, a > b ? a : b (the second operand for NaN).
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  // Sign-bit arithmetic on the integer view (AVX-512F has no floating-point and/or).
  static Reg abs(Reg z) { return bits(_mm512_and_si512(int_of(z), _mm512_set1_epi32(0x7FFFFFFF))); }
  static Reg neg(Reg z) {
    return bits(_mm512_xor_si512(int_of(z), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  }
  // |magnitude| with the sign of `sign`.
  static Reg copysign(Reg magnitude, Reg sign) {
    const __m512i bit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    return bits(_mm512_or_si512(_mm512_andnot_si512(bit, int_of(magnitude)),
                                _mm512_and_si512(bit, int_of(sign))));
  }
  // 2^n for integral n in [-126, 127], built in the exponent bits; NaN lanes give 2^0.
  static Reg pow2(Reg n) {
    const Reg ordered = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(n, n, _CMP_EQ_OQ), n);
    const __m512i e = _mm512_add_epi32(_mm512_cvttps_epi32(ordered), _mm512_set1_epi32(127));
    return bits(_mm512_slli_epi32(e, 23));
  }
  static __m512i int_of(Reg r) { return _mm512_castps_si512(r); }
  static Reg bits(__m512i i) { return _mm512_castsi512_ps(i); }
  // z > 0 ? a : b
  static Reg select_positive(Reg z, Reg a, Reg b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ), b, a);
  }
};

}  // namespace

void sgemm_avx512(const SmallGemmCall& call) {
  run<Avx512>(call);
}

}  // namespace layerlab::backend::cpu
