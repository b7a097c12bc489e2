// GEMM benchmark: the products one training step of a small MLP multiplies, on each
// candidate in the same run: OpenBLAS (cblas_sgemm), layerlab's kernels (backend/cpu_gemm.h:
// own_avx2, own_avx512, where the CPU runs them), and, where the build found them, libxsmm's JIT
// kernels and oneDNN's matmul primitive; plus a large SGEMM (OpenBLAS, 1024^3) as the machine's
// peak reference, and the core's FMA limit (peak/fma_*, registers only). One thread. The figure is
// the counter gflops; compare ratios within one run.
//
// Names: <candidate>/<op>/<m>x<n>x<k>, op one of fwd (X W^T: NT), dw (dY^T X: TN),
// dx (dY W: NN); fused variants add bias + relu after the product (fwd_bias_relu).
// step/<candidate>/digits_8x128_b32: a training step's products, each with operands of its
// own; train/digits_8x128_b32: the same products inside real training steps (BM_Training).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <immintrin.h>

#include <chrono>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu_gemm.h"
#include "backend/float_env.h"
#include "training_rig.h"

#ifdef LAYERLAB_BENCH_LIBXSMM
#include <libxsmm.h>
#endif
#ifdef LAYERLAB_BENCH_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using namespace layerlab;

struct Shape {
  const char* op;  // fwd, dw, dx
  int m, n, k;
  bool trans_a() const { return std::string(op) == "dw"; }
  bool trans_b() const { return std::string(op).starts_with("fwd"); }
};

// Operands of one product, row-major, leading dimensions as the network passes them.
struct Operands {
  explicit Operands(const Shape& s)
      : a(static_cast<size_t>(s.m) * s.k),
        b(static_cast<size_t>(s.k) * s.n),
        c(static_cast<size_t>(s.m) * s.n),
        y(c.size()),
        bias(s.n) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = 2.f * backend::uniform01(1, 0, i) - 1.f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 2.f * backend::uniform01(2, 0, i) - 1.f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = backend::uniform01(3, 0, i) - .5f;
    lda = s.trans_a() ? s.m : s.k;
    ldb = s.trans_b() ? s.k : s.n;
  }
  std::vector<float> a, b, c, y, bias;
  int lda, ldb;
};

double flops(const Shape& s) {
  return 2.0 * s.m * s.n * s.k;
}

void finish(benchmark::State& state, const Shape& s) {
  state.counters["gflops"] =
      benchmark::Counter(flops(s) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void bias_relu(const Shape& s, Operands& o) {
  for (int i = 0; i < s.m; ++i) {
    float* z = o.c.data() + static_cast<size_t>(i) * s.n;
    float* y = o.y.data() + static_cast<size_t>(i) * s.n;
    for (int j = 0; j < s.n; ++j) {
      z[j] += o.bias[j];
      y[j] = z[j] > 0.f ? z[j] : 0.f;
    }
  }
}

void BM_Openblas(benchmark::State& state, Shape s, bool fused) {
  openblas_set_num_threads(1);
  Operands o(s);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, s.trans_a() ? CblasTrans : CblasNoTrans,
                s.trans_b() ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.f, o.a.data(), o.lda,
                o.b.data(), o.ldb, 0.f, o.c.data(), s.n);
    if (fused) bias_relu(s, o);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::DoNotOptimize(o.y.data());
  }
  finish(state, s);
}

template <backend::cpu::SmallGemm kKernels>
void BM_Own(benchmark::State& state, Shape s, bool fused) {
  if (!backend::cpu::cpu_runs(kKernels)) {
    state.SkipWithError("this CPU cannot run these kernels");
    return;
  }
  Operands o(s);
  backend::cpu::GemmEpilogue e;
  if (fused)
    e.bias = o.bias.data(), e.activation = backend::Activation::kRelu, e.y = o.y.data(),
    e.ldy = s.n;
  for (auto _ : state) {
    backend::cpu::sgemm_small(kKernels, s.trans_a(), s.trans_b(), s.m, s.n, s.k, 1.f, o.a.data(),
                              o.lda, o.b.data(), o.ldb, 0.f, o.c.data(), s.n, e);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::DoNotOptimize(o.y.data());
  }
  finish(state, s);
}

#ifdef LAYERLAB_BENCH_LIBXSMM
// libxsmm is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T,
// i.e. the same call with A and B swapped and m and n swapped.
void BM_Libxsmm(benchmark::State& state, Shape s, bool fused) {
  Operands o(s);
  const libxsmm_blasint m = s.n, n = s.m, k = s.k, lda = o.ldb, ldb = o.lda, ldc = s.n;
  const float alpha = 1.f, beta = 0.f;
  const int flags =
      (s.trans_b() ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (s.trans_a() ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  const int prefetch = LIBXSMM_PREFETCH_NONE;
  libxsmm_smmfunction f =
      libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  if (!f) {
    state.SkipWithError("libxsmm: no kernel for this shape and transposition");
    return;
  }
  for (auto _ : state) {
    f(o.b.data(), o.a.data(), o.c.data());
    if (fused) bias_relu(s, o);
    benchmark::DoNotOptimize(o.c.data());
    benchmark::DoNotOptimize(o.y.data());
  }
  finish(state, s);
}
#endif

#ifdef LAYERLAB_BENCH_DNNL
void BM_Dnnl(benchmark::State& state, Shape s, bool fused) {
  using dnnl::memory;
  Operands o(s);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims a_strides = s.trans_a() ? memory::dims{1, o.lda} : memory::dims{o.lda, 1};
  const memory::dims b_strides = s.trans_b() ? memory::dims{1, o.ldb} : memory::dims{o.ldb, 1};
  memory::desc a_md({s.m, s.k}, memory::data_type::f32, a_strides);
  memory::desc b_md({s.k, s.n}, memory::data_type::f32, b_strides);
  memory::desc c_md({s.m, s.n}, memory::data_type::f32, memory::dims{s.n, 1});
  memory::desc bias_md({1, s.n}, memory::data_type::f32, memory::dims{s.n, 1});
  dnnl::primitive_attr attr;
  if (fused) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  auto pd =
      fused ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, bias_md, c_md), attr, eng)
            : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), eng);
  dnnl::matmul mm(pd);
  memory a_m(a_md, eng, o.a.data()), b_m(b_md, eng, o.b.data()), c_m(c_md, eng, o.y.data()),
      bias_m(bias_md, eng, o.bias.data());
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, a_m}, {DNNL_ARG_WEIGHTS, b_m}, {DNNL_ARG_DST, c_m}};
  if (fused) args[DNNL_ARG_BIAS] = bias_m;
  for (auto _ : state) {
    mm.execute(strm, args);
    strm.wait();
    benchmark::DoNotOptimize(o.y.data());
  }
  state.SetLabel(pd.impl_info_str());
  finish(state, s);
}
#endif

void BM_Peak(benchmark::State& state, int size) {
  openblas_set_num_threads(1);
  const Shape s{"dx", size, size, size};
  Operands o(s);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.f, o.a.data(), size,
                o.b.data(), size, 0.f, o.c.data(), size);
    benchmark::DoNotOptimize(o.c.data());
  }
  finish(state, s);
}

// The core's arithmetic limit: independent fused multiply-adds on registers only (12 chains,
// more than an FMA's latency times the units), 2 flops per lane. OpenBLAS's large SGEMM is
// no limit where its kernels are narrower than the core (Debian's 0.3.21 runs its AVX2
// kernels on AVX-512 Zen 4 and 5): these rows are the ceiling any kernel can approach.
// One body for both widths (a template cannot take the target attribute per instantiation).
#define LAYERLAB_FMA_CHAINS(VEC, LANES, SET, FMA)                                      \
  constexpr int kChains = 12;                                                          \
  constexpr int kRounds = 1000;                                                        \
  VEC acc[kChains];                                                                    \
  for (int i = 0; i < kChains; ++i) acc[i] = SET(static_cast<float>(i));               \
  const VEC x = SET(1.0000001f), y = SET(1e-7f);                                       \
  for (auto _ : state) {                                                               \
    for (int r = 0; r < kRounds; ++r)                                                  \
      for (VEC & a : acc) a = FMA(a, x, y);                                            \
    benchmark::DoNotOptimize(acc);                                                     \
  }                                                                                    \
  state.counters["gflops"] = benchmark::Counter(                                       \
      2.0 * (LANES)*kChains * kRounds * static_cast<double>(state.iterations()) / 1e9, \
      benchmark::Counter::kIsRate)

__attribute__((target("avx2,fma"))) void BM_FmaAvx2(benchmark::State& state) {
  LAYERLAB_FMA_CHAINS(__m256, 8, _mm256_set1_ps, _mm256_fmadd_ps);
}
__attribute__((target("avx512f"))) void BM_FmaAvx512(benchmark::State& state) {
  LAYERLAB_FMA_CHAINS(__m512, 16, _mm512_set1_ps, _mm512_fmadd_ps);
}
#undef LAYERLAB_FMA_CHAINS

void register_fma_peaks() {
  using backend::cpu::SmallGemm;
  if (backend::cpu::cpu_runs(SmallGemm::kAvx2))
    benchmark::RegisterBenchmark("peak/fma_avx2", BM_FmaAvx2)->MinTime(0.3);
  if (backend::cpu::cpu_runs(SmallGemm::kAvx512))
    benchmark::RegisterBenchmark("peak/fma_avx512", BM_FmaAvx512)->MinTime(0.3);
}

// Every product of one training step of the digits network (64 inputs, 8 hidden layers of
// 128, 10 classes, batch 32), in the step's order, on OpenBLAS (kNone) or on layerlab's
// kernels: the GEMM throughput training gets, to set against the large-SGEMM peak of the run.
void BM_Step(benchmark::State& state, backend::cpu::SmallGemm kernels) {
  const bool own = kernels != backend::cpu::SmallGemm::kNone;
  if (!backend::cpu::cpu_runs(kernels)) {
    state.SkipWithError("this CPU cannot run these kernels");
    return;
  }
  openblas_set_num_threads(1);
  std::vector<int> widths = {64, 128, 128, 128, 128, 128, 128, 128, 128, 10};
  const int batch = 32;
  std::vector<Shape> step;
  for (size_t l = 0; l + 1 < widths.size(); ++l)
    step.push_back({"fwd", batch, widths[l + 1], widths[l]});
  for (size_t l = widths.size() - 1; l-- > 0;) {
    step.push_back({"dw", widths[l + 1], widths[l], batch});
    if (l > 0) step.push_back({"dx", batch, widths[l], widths[l + 1]});
  }
  std::vector<Operands> ops;
  double step_flops = 0;
  for (const Shape& s : step) ops.emplace_back(s), step_flops += flops(s);
  for (auto _ : state) {
    for (size_t i = 0; i < step.size(); ++i) {
      const Shape& s = step[i];
      Operands& o = ops[i];
      if (own)
        backend::cpu::sgemm_small(kernels, s.trans_a(), s.trans_b(), s.m, s.n, s.k, 1.f, o.a.data(),
                                  o.lda, o.b.data(), o.ldb, 0.f, o.c.data(), s.n, {});
      else
        cblas_sgemm(CblasRowMajor, s.trans_a() ? CblasTrans : CblasNoTrans,
                    s.trans_b() ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.f, o.a.data(), o.lda,
                    o.b.data(), o.ldb, 0.f, o.c.data(), s.n);
      benchmark::DoNotOptimize(o.c.data());
    }
  }
  state.counters["gflops"] =
      benchmark::Counter(step_flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// The same products inside training: a real training step of that network (nn::Network and
// the momentum optimizer on the CPU backend, as `layerlab train` runs it), timing only the
// forward and backward passes, which for this network are its products and what is fused
// into them (bias, relu and their gradients; the output layer's bias gradient, 320 adds, is
// the only other work). The loss and the optimizer's step run between them, untimed, and
// leave the caches as training leaves them: operands are the network's own buffers (a
// layer's weights feed its forward product and its input gradient), about 1.7 MB in all,
// where the step/ rows give each product operands of its own (about 2.9 MB). The label
// names the kernels the backend chose (LAYERLAB_CPU_GEMM can hold them back).
void BM_Training(benchmark::State& state) {
  const bench::MlpShape s{128, 8, 32, 64, 1};
  bench::TrainingRig rig(s, 1);
  const backend::FlushDenormals as_in_training;
  using Clock = std::chrono::steady_clock;
  Clock::duration in_products{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    rig.forward();
    const auto t1 = Clock::now();
    rig.loss();
    const auto t2 = Clock::now();
    rig.backward();
    in_products += (t1 - t0) + (Clock::now() - t2);
    rig.update();
  }
  state.counters["gflops"] = bench::gemm_flops_per_step(s) * static_cast<double>(rig.steps()) /
                             std::chrono::duration<double>(in_products).count() / 1e9;
  state.counters["products_us_per_step"] =
      std::chrono::duration<double, std::micro>(in_products).count() / rig.steps();
  state.SetLabel(backend::cpu::to_string(backend::cpu::small_gemm_kernels()));
}

template <typename F>
void add(const char* candidate, F f, const Shape& s, bool fused) {
  const std::string name = std::string(candidate) + "/" + s.op + (fused ? "_bias_relu" : "") + "/" +
                           std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                           std::to_string(s.k);
  benchmark::RegisterBenchmark(name.c_str(), f, s, fused)->MinTime(0.2);
}

using backend::cpu::SmallGemm;

void register_steps() {
  for (SmallGemm kernels : {SmallGemm::kNone, SmallGemm::kAvx2, SmallGemm::kAvx512}) {
    const std::string name = kernels == SmallGemm::kNone
                                 ? std::string("openblas")
                                 : std::string("own_") + backend::cpu::to_string(kernels);
    benchmark::RegisterBenchmark(("step/" + name + "/digits_8x128_b32").c_str(), BM_Step, kernels)
        ->MinTime(0.3);
  }
  benchmark::RegisterBenchmark("train/digits_8x128_b32", BM_Training)->MinTime(0.5);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef LAYERLAB_BENCH_LIBXSMM
  libxsmm_init();
#endif
  // Training shapes of digits 8x128 at batch 32 (64 inputs, 10 classes), then larger classes,
  // validation passes (256 rows at a time, trainer.cc), width 1024 at batch 32, and its
  // weight gradient at batches 64 and 128 (where the AVX-512 kernels and OpenBLAS's cross),
  // forward products of short batches (around where cpu_gemm.cc transposes X and C, not W),
  // weight gradients of short batches (around where cpu_gemm.cc leaves them to OpenBLAS).
  // clang-format off
  const std::vector<Shape> shapes = {
      {"fwd", 32, 128, 64},    {"fwd", 32, 128, 128},  {"fwd", 32, 10, 128},
      {"dw", 128, 64, 32},     {"dw", 128, 128, 32},   {"dw", 10, 128, 32},
      {"dx", 32, 128, 128},    {"dx", 32, 128, 10},    {"fwd", 32, 64, 64},
      {"dw", 64, 64, 32},      {"dx", 32, 64, 64},     {"fwd", 32, 256, 256},
      {"dw", 256, 256, 32},    {"dx", 32, 256, 256},   {"fwd", 128, 128, 128},
      {"dw", 128, 128, 128},   {"dx", 128, 128, 128},  {"fwd", 64, 256, 256},
      {"dw", 256, 256, 64},    {"dx", 64, 256, 256},   {"fwd", 32, 512, 512},
      {"dw", 512, 512, 32},    {"dx", 32, 512, 512},   {"fwd", 128, 256, 256},
      {"dw", 256, 256, 128},   {"dx", 128, 256, 256},  {"fwd", 256, 1024, 1024},
      {"dw", 1024, 1024, 256}, {"dx", 256, 1024, 1024},
      {"fwd", 256, 64, 64},    {"fwd", 256, 128, 128}, {"fwd", 256, 256, 256},
      {"fwd", 32, 1024, 1024}, {"dw", 1024, 1024, 32}, {"dx", 32, 1024, 1024},
      {"dw", 1024, 1024, 64},  {"dw", 1024, 1024, 128},
      {"fwd", 1, 128, 128},    {"fwd", 8, 256, 256},   {"fwd", 16, 128, 128},
      {"fwd", 32, 256, 128},   {"fwd", 32, 128, 256},  {"fwd", 32, 10, 256},
      {"dw", 16, 64, 32},      {"dw", 32, 32, 32},     {"dw", 64, 64, 8},
      {"dw", 128, 128, 16},    {"dw", 64, 64, 64},     {"dw", 128, 128, 64},
      {"dw", 256, 128, 32},    {"dw", 128, 256, 32},   {"dw", 64, 256, 32}};
  // clang-format on
  benchmark::RegisterBenchmark("peak/openblas/1024", BM_Peak, 1024)->MinTime(0.3);
  register_fma_peaks();
  register_steps();
  for (const Shape& s : shapes) {
    add("openblas", BM_Openblas, s, false);
    add("own_avx2", BM_Own<SmallGemm::kAvx2>, s, false);
    add("own_avx512", BM_Own<SmallGemm::kAvx512>, s, false);
#ifdef LAYERLAB_BENCH_LIBXSMM
    add("libxsmm", BM_Libxsmm, s, false);
#endif
#ifdef LAYERLAB_BENCH_DNNL
    add("dnnl", BM_Dnnl, s, false);
#endif
    if (std::string(s.op) == "fwd") {
      add("openblas", BM_Openblas, s, true);
      add("own_avx2", BM_Own<SmallGemm::kAvx2>, s, true);
      add("own_avx512", BM_Own<SmallGemm::kAvx512>, s, true);
#ifdef LAYERLAB_BENCH_DNNL
      add("dnnl", BM_Dnnl, s, true);
#endif
    }
  }
  register_steps();
  benchmark::RegisterBenchmark("peak/openblas/1024", BM_Peak, 1024)->MinTime(0.3);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
