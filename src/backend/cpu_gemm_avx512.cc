// The small-matrix kernels for AVX-512: 16 lanes, masks in mask registers (cpu_gemm_tiles.h).
// This file alone is compiled with -mavx512f (src/backend/CMakeLists.txt); nothing here runs
// unless the CPU and the OS support it (cpu_gemm.cc). Its results are the AVX2 kernels' bits:
// the same FMA chain per element, the same epilogue operations.
#include <immintrin.h>

#include "backend/cpu_gemm_tiles.h"

namespace layerlab::backend::cpu {
namespace {

struct Avx512 {
  static constexpr int kLanes = 16;
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
  // max(z, 0), all lanes (the zero-masking form: GCC 12 warns that _mm512_max_ps's
  // undefined pass-through register may be used uninitialized).
  static Reg relu(Reg z) { return _mm512_maskz_max_ps(0xFFFF, z, _mm512_setzero_ps()); }
  // dy * (z > 0 ? 1 : 0)
  static Reg relu_gradient(Reg dy, Reg z) {
    const Mask positive = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_mul_ps(dy, _mm512_maskz_mov_ps(positive, _mm512_set1_ps(1.f)));
  }
};

}  // namespace

void sgemm_avx512(const SmallGemmCall& call) {
  run<Avx512>(call);
}

}  // namespace layerlab::backend::cpu
