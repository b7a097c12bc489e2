#include "backend/cpu_backend.h"

#include <cblas.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/caching_pool.h"
#include "backend/cpu_gemm.h"
#include "backend/cpu_team.h"
#include "common/error.h"

namespace layerlab::backend {
namespace {

// dst[c] = sum of src[r][c] over the rows in order, for c in [c0, c1).
void column_sums(int rows, int ld, int64_t c0, int64_t c1, const float* src, float* dst) {
  std::fill(dst + c0, dst + c1, 0.f);
  for (int r = 0; r < rows; ++r) {
    const float* row = src + static_cast<int64_t>(r) * ld;
    for (int64_t c = c0; c < c1; ++c) dst[c] += row[c];
  }
}

// A block of C that one of the team's threads computes.
struct Block {
  int row0 = 0, rows = 0, col0 = 0, cols = 0;
};

// g restricted to block b of C (every member's).
GemmArgs block_args(const GemmArgs& g, const Block& b) {
  GemmArgs s = g;
  s.m = b.rows;
  s.n = b.cols;
  s.a += g.trans_a ? b.row0 : static_cast<int64_t>(b.row0) * g.lda;
  s.b += g.trans_b ? static_cast<int64_t>(b.col0) * g.ldb : b.col0;
  s.c += static_cast<int64_t>(b.row0) * g.ldc + b.col0;
  return s;
}

// Epilogue e (for C of leading dimension ldc) restricted to block b.
cpu::GemmEpilogue block_epilogue(cpu::GemmEpilogue e, int ldc, const Block& b) {
  if (e.bias) e.bias += b.col0;
  if (e.y) e.y += static_cast<int64_t>(b.row0) * e.ldy + b.col0;
  if (e.grad_z) e.grad_z += static_cast<int64_t>(b.row0) * ldc + b.col0;
  if (e.bias_grad) e.bias_grad += b.col0;
  return e;
}

// One member's optimizer update over [begin, end), built three times (target_clones; the
// loader picks one for this CPU, ifunc): the baseline build ran it 4 floats at a time, 17%
// of a width-64, batch-32 training step (perf, engine_bench). with_rule and the loop are
// inlined into each clone. This file is compiled without contraction
// (src/backend/CMakeLists.txt), so every clone computes optim::update's bits.
[[gnu::target_clones("avx512f", "avx2", "default")]] void update_range(UpdateRule rule, float* w,
                                                                       const float* g, float* s1,
                                                                       float* s2, int64_t begin,
                                                                       int64_t end,
                                                                       const StepHyper& hyper) {
  with_rule(
      rule, [&](auto tag) __attribute__((always_inline)) {
        const StepHyper h = hyper;  // a local copy: the loop's stores cannot alias it
        float unused = 0.f;
        for (int64_t i = begin; i < end; ++i)
          optim::update<decltype(tag)::value>(w[i], g[i], s1 ? s1[i] : unused, s2 ? s2[i] : unused,
                                              h);
      });
}

// Cache-line aligned host memory for the pool (its size classes are multiples of 128 bytes,
// as aligned_alloc wants a multiple of the alignment).
struct AlignedMemory final : RawMemory {
  void* allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, bytes);
    if (p && bytes >= kPopulateBytes) populate(p, bytes);
    return p;
  }
  // A large block's pages, faulted in with one call rather than one trap each: the first
  // trial of each shape in a worker took about 12,000 page faults in a Sweep A run, each a
  // trap to this VM's hypervisor (perf: 9% of the workers' time). A hint: where the kernel
  // lacks MADV_POPULATE_WRITE (before Linux 5.14) the pages fault in as before.
  static void populate([[maybe_unused]] void* p, [[maybe_unused]] size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#endif
  }
  static constexpr size_t kPopulateBytes = 64 << 10;
  void free(void* p) noexcept override {
    std::free(p);
  }
};

// One core's L2 cache, as the C library reads it from the CPU; 1 MiB where it cannot.
int64_t l2_cache_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20;
  }();
  return bytes;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) { set_threads(threads); }

  std::string name() const override { return "cpu"; }
  std::string describe() const override {
    return std::string("cpu (") + openblas_get_config() +
           (small_gemm_ != cpu::SmallGemm::kNone
                ? std::string(", ") + cpu::to_string(small_gemm_) + " small-gemm"
                : std::string()) +
           ", " + std::to_string(threads_) + " thread" + (threads_ == 1 ? "" : "s") + ")";
  }
  void set_threads(int threads) override {
    threads_ = std::max(1, threads);
    // OpenBLAS computes on the calling thread only; the team splits the work (cpu_team.h).
    openblas_set_num_threads(1);
    if (threads_ == 1)
      team_.reset();
    else if (!team_ || team_->size() != threads_)
      team_ = std::make_unique<cpu::Team>(threads_);
  }
  int threads() const override { return threads_; }
  void set_precision(Precision p) override {
    if (p != Precision::kFp32)
      throw invalid_argument(
          "precision: the cpu device computes in fp32 only; tf32 and bf16 need --device cuda");
  }
  Precision precision() const override { return Precision::kFp32; }
  int64_t memory_in_use() const override { return pool_.bytes_held(); }
  // A pack trains a layer of all its members before the next layer (nn::Network), so once
  // their parameters, gradients, optimizer state and activations outgrow the L2 cache, each
  // member's come from further away at every layer: packs of 16 trained each member at
  // 0.5-1.0x the speed of single trials, parts within half of one core's L2 at 0.99-1.05x
  // (docs/benchmarks.md, 2026-12-07). Each thread works on its share of every operation.
  int64_t fast_pack_bytes() const override { return l2_cache_bytes() / 2 * threads_; }

  void* allocate(size_t bytes) override { return pool_.allocate(bytes); }
  void release(void* p) override { pool_.release(p); }
  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void fill(float* dst, int64_t n, float value) override { std::fill(dst, dst + n, value); }
  void zero(void* dst, size_t bytes) override {
    if (bytes) std::memset(dst, 0, bytes);
  }
  void synchronize() override {}

  void gemm(const GemmArgs& g) override {
    const Plan plan = plan_for(g, true);
    on_blocks(g, plan, [&](const GemmArgs& s, const Block&) {
      for (int p = 0; p < s.batch; ++p) {
        if (plan.small) {
          small_gemm(s, p, {});
        } else {
          cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                      s.trans_b ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, s.alpha,
                      s.a + p * s.stride_a, s.lda, s.b + p * s.stride_b, s.ldb, s.beta,
                      s.c + p * s.stride_c, s.ldc);
        }
      }
    });
  }

  void gemm_bias_activation(const GemmArgs& g, Activation a, PackedVector bias, float* y) override {
    const Plan plan = plan_for(g, true);
    if (!plan.small) return Backend::gemm_bias_activation(g, a, bias, y);
    on_blocks(g, plan, [&](const GemmArgs& s, const Block& b) {
      for (int p = 0; p < s.batch; ++p) {
        cpu::GemmEpilogue e;
        e.bias = bias.data ? bias.data + p * bias.stride : nullptr;
        e.activation = a;
        e.y = y + p * g.stride_c;
        e.ldy = g.ldc;
        small_gemm(s, p, block_epilogue(e, g.ldc, b));
      }
    });
  }

  void gemm_activation_backward(const GemmArgs& g, Activation a, const float* z, const float* y,
                                PackedVector bias_grad) override {
    // Linear and relu in the kernels' registers; the others gained nothing from a pass over
    // each tile (perf and farm-bench, docs/benchmarks.md), so they stay unfused. The bias
    // gradient sums over rows, so the blocks split columns only.
    const Plan plan = plan_for(g, !bias_grad.data);
    if (!plan.small || (a != Activation::kLinear && a != Activation::kRelu))
      return Backend::gemm_activation_backward(g, a, z, y, bias_grad);
    on_blocks(g, plan, [&](const GemmArgs& s, const Block& b) {
      for (int p = 0; p < s.batch; ++p) {
        cpu::GemmEpilogue e;
        e.activation = a;
        e.grad_z = z + p * g.stride_c;
        e.bias_grad = bias_grad.data ? bias_grad.data + p * bias_grad.stride : nullptr;
        small_gemm(s, p, block_epilogue(e, g.ldc, b));
      }
    });
  }

  void gather_rows(int pack, int rows, int cols, const float* src, const int32_t* idx,
                   int64_t idx_stride, float* dst) override {
    for (int p = 0; p < pack; ++p)
      for (int r = 0; r < rows; ++r)
        std::memcpy(dst + (static_cast<int64_t>(p) * rows + r) * cols,
                    src + static_cast<int64_t>(idx[p * idx_stride + r]) * cols,
                    sizeof(float) * cols);
  }

  void bias_activation_forward(Activation a, int pack, int rows, int cols, PackedVector bias,
                               float* z, float* y) override {
    with_activation(a, [&](auto tag) {
      constexpr Activation A = decltype(tag)::value;
      in_parallel(static_cast<int64_t>(pack) * rows, cols, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t p = row / rows;
          const float* b = bias.data ? bias.data + p * bias.stride : nullptr;
          float* zr = z + row * cols;
          float* yr = y + row * cols;
          if (b)
            for (int c = 0; c < cols; ++c) zr[c] += b[c];
          for (int c = 0; c < cols; ++c) yr[c] = act::forward(A, zr[c]);
        }
      });
    });
  }

  void activation_backward(Activation a, int pack, int rows, int cols, const float* z,
                           const float* y, const float* dy, float* dz,
                           PackedVector bias_grad) override {
    const int64_t n = static_cast<int64_t>(pack) * rows * cols;
    with_activation(a, [&](auto tag) {
      constexpr Activation A = decltype(tag)::value;
      // dz is often dy itself: without ivdep the compiler's overlap check sends that case
      // to a scalar loop with a branch per element (a fifth of a small network's step).
      // Each element is read before it is written, so the vector loop is right for it.
      in_parallel(n, 1, [&](int64_t begin, int64_t end) {
#if !defined(__clang__)  // gcc builds the release; clang (the sanitizer build) lacks ivdep
#pragma GCC ivdep
#endif
        for (int64_t i = begin; i < end; ++i) dz[i] = dy[i] * act::derivative(A, z[i], y[i]);
      });
    });
    if (bias_grad.data) sum_rows(pack, rows, cols, dz, bias_grad);
  }

  void sum_rows(int pack, int rows, int cols, const float* src, PackedVector dst) override {
    // Split by columns: each column's sum keeps its order, so the bits do not depend on the
    // thread count.
    in_parallel(cols, static_cast<int64_t>(rows) * pack, [&](int64_t c0, int64_t c1) {
      for (int p = 0; p < pack; ++p)
        column_sums(rows, cols, c0, c1, src + static_cast<int64_t>(p) * rows * cols,
                    dst.data + p * dst.stride);
    });
  }

  void batchnorm_forward(int pack, int rows, int cols, const float* x, float* xhat, float* y,
                         const BatchNormState& s, bool training) override {
    for (int p = 0; p < pack; ++p) {
      const int64_t off = static_cast<int64_t>(p) * rows * cols;
      const float* gamma = s.gamma.data + p * s.gamma.stride;
      const float* beta = s.beta.data + p * s.beta.stride;
      float* mean = s.mean + static_cast<int64_t>(p) * cols;
      float* inv_std = s.inv_std + static_cast<int64_t>(p) * cols;
      float* rmean = s.running_mean + static_cast<int64_t>(p) * cols;
      float* rvar = s.running_var + static_cast<int64_t>(p) * cols;
      if (training) {
        batch_statistics(rows, cols, x + off, mean, inv_std, s.eps);
        const float unbias = rows > 1 ? static_cast<float>(rows) / (rows - 1) : 1.f;
        for (int c = 0; c < cols; ++c) {
          const float var = 1.f / (inv_std[c] * inv_std[c]) - s.eps;
          rmean[c] = (1.f - s.momentum) * rmean[c] + s.momentum * mean[c];
          rvar[c] = (1.f - s.momentum) * rvar[c] + s.momentum * var * unbias;
        }
      } else {
        for (int c = 0; c < cols; ++c) {
          mean[c] = rmean[c];
          inv_std[c] = 1.f / std::sqrt(rvar[c] + s.eps);
        }
      }
      for (int r = 0; r < rows; ++r) {
        const int64_t ro = off + static_cast<int64_t>(r) * cols;
        for (int c = 0; c < cols; ++c) {
          const float h = (x[ro + c] - mean[c]) * inv_std[c];
          if (xhat) xhat[ro + c] = h;
          y[ro + c] = gamma[c] * h + beta[c];
        }
      }
    }
  }

  void batchnorm_backward(int pack, int rows, int cols, const float* xhat, const float* dy,
                          float* dx, const BatchNormState& s, PackedVector gamma_grad,
                          PackedVector beta_grad) override {
    for (int p = 0; p < pack; ++p) {
      const int64_t off = static_cast<int64_t>(p) * rows * cols;
      const float* gamma = s.gamma.data + p * s.gamma.stride;
      const float* inv_std = s.inv_std + static_cast<int64_t>(p) * cols;
      float* dgamma = gamma_grad.data + p * gamma_grad.stride;
      float* dbeta = beta_grad.data + p * beta_grad.stride;
      std::fill(dgamma, dgamma + cols, 0.f);
      std::fill(dbeta, dbeta + cols, 0.f);
      for (int r = 0; r < rows; ++r) {
        const int64_t ro = off + static_cast<int64_t>(r) * cols;
        for (int c = 0; c < cols; ++c) {
          dgamma[c] += dy[ro + c] * xhat[ro + c];
          dbeta[c] += dy[ro + c];
        }
      }
      const float inv_rows = 1.f / static_cast<float>(rows);
      for (int r = 0; r < rows; ++r) {
        const int64_t ro = off + static_cast<int64_t>(r) * cols;
        for (int c = 0; c < cols; ++c)
          dx[ro + c] = gamma[c] * inv_std[c] * inv_rows *
                       (rows * dy[ro + c] - dbeta[c] - xhat[ro + c] * dgamma[c]);
      }
    }
  }

  void dropout_forward(int pack, int64_t n_per_member, std::span<const float> rate,
                       std::span<const uint64_t> seed, uint64_t stream, float* y,
                       float* mask) override {
    for (int p = 0; p < pack; ++p) {
      float* yp = y + p * n_per_member;
      float* mp = mask + p * n_per_member;
      const float r = rate[p];
      if (r <= 0.f) {
        std::fill(mp, mp + n_per_member, 1.f);
        continue;
      }
      const float keep_scale = 1.f / (1.f - r);
      for (int64_t i = 0; i < n_per_member; ++i) {
        mp[i] = uniform01(seed[p], stream, static_cast<uint64_t>(i)) < r ? 0.f : keep_scale;
        yp[i] *= mp[i];
      }
    }
  }

  void copy(int64_t n, const float* x, float* y) override {
    if (n) std::memcpy(y, x, sizeof(float) * n);
  }
  void multiply(int64_t n, const float* x, float* y) override {
    in_parallel(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] *= x[i];
    });
  }
  void add(int64_t n, const float* x, float* y) override {
    in_parallel(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] += x[i];
    });
  }

  void loss(Loss kind, int pack, int rows, int cols, const float* out, const float* targets,
            float* d_out, int batch_rows, double* loss_sum, double* correct) override {
    const float inv_batch = 1.f / static_cast<float>(batch_rows);
    const int target_cols = kind == Loss::kSoftmaxCrossEntropy ? 1 : cols;
    // A row's e^(o - max), in the row's gradient when there is one: computed once, and with
    // fast_exp, whose loop vectorises (libm's expf, twice per element, was a tenth of a
    // width-64 network's step).
    std::vector<float> row_exp(kind == Loss::kSoftmaxCrossEntropy && !d_out ? cols : 0);
    for (int p = 0; p < pack; ++p) {
      double member_loss = 0.0;
      int64_t member_correct = 0;
      for (int r = 0; r < rows; ++r) {
        const int64_t row = static_cast<int64_t>(p) * rows + r;
        const float* o = out + row * cols;
        const float* t = targets + row * target_cols;
        float* d = d_out ? d_out + row * cols : nullptr;
        if (kind == Loss::kSoftmaxCrossEntropy) {
          const int label = static_cast<int>(t[0]);
          const int argmax = static_cast<int>(std::max_element(o, o + cols) - o);
          const float mx = o[argmax];
          const float at_label = o[label];  // read before d is written: d may be o itself
          float* e = d ? d : row_exp.data();
          for (int c = 0; c < cols; ++c) e[c] = fast_exp(o[c] - mx);
          float sum = 0.f;
          for (int c = 0; c < cols; ++c) sum += e[c];
          member_loss += mx + std::log(sum) - at_label;
          member_correct += argmax == label;
          if (d) {
            const float scale = inv_batch / sum;
            for (int c = 0; c < cols; ++c) d[c] *= scale;
            d[label] -= inv_batch;
          }
        } else {
          float se = 0.f;
          for (int c = 0; c < cols; ++c) {
            const float diff = o[c] - t[c];
            se += diff * diff;
            if (d) d[c] = 2.f * diff * inv_batch / static_cast<float>(cols);
          }
          member_loss += se / static_cast<float>(cols);
        }
      }
      loss_sum[p] += member_loss;
      if (correct) correct[p] += static_cast<double>(member_correct);
    }
  }

  void optimizer_step(UpdateRule rule, int pack, int64_t n, PackedVector params, PackedVector grads,
                      PackedVector state1, PackedVector state2,
                      std::span<const StepHyper> hyper) override {
    for (int p = 0; p < pack; ++p) {
      float* w = params.data + p * params.stride;
      const float* g = grads.data + p * grads.stride;
      float* s1 = state1.data ? state1.data + p * state1.stride : nullptr;
      float* s2 = state2.data ? state2.data + p * state2.stride : nullptr;
      in_parallel(n, 1, [&](int64_t begin, int64_t end) {
        update_range(rule, w, g, s1, s2, begin, end, hyper[p]);
      });
    }
  }

 private:
  static void batch_statistics(int rows, int cols, const float* x, float* mean, float* inv_std,
                               float eps) {
    std::fill(mean, mean + cols, 0.f);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) mean[c] += x[static_cast<int64_t>(r) * cols + c];
    for (int c = 0; c < cols; ++c) mean[c] /= static_cast<float>(rows);
    std::fill(inv_std, inv_std + cols, 0.f);  // holds the variance until the last loop
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const float d = x[static_cast<int64_t>(r) * cols + c] - mean[c];
        inv_std[c] += d * d;
      }
    for (int c = 0; c < cols; ++c)
      inv_std[c] = 1.f / std::sqrt(inv_std[c] / static_cast<float>(rows) + eps);
  }

  // How a product runs: in `parts` blocks of C, one per thread of the team, split by columns
  // (or by rows, where allowed, when there are too few columns); each block on the
  // small-matrix kernels when the CPU has them and they are faster for its shape
  // (cpu_gemm.h), otherwise on single-threaded OpenBLAS.
  struct Plan {
    int parts = 1;
    bool by_rows = false;
    bool small = false;
    Block block(const GemmArgs& g, int part) const {
      if (by_rows) {
        const auto r = cpu::split(g.m, parts, part, kLanes);
        return {static_cast<int>(r.begin), static_cast<int>(r.end - r.begin), 0, g.n};
      }
      const auto c = cpu::split(g.n, parts, part, kLanes);
      return {0, g.m, static_cast<int>(c.begin), static_cast<int>(c.end - c.begin)};
    }
  };
  Plan plan_for(const GemmArgs& g, bool rows_allowed) const {
    Plan plan;
    // Small products run faster on one thread than split (bench/engine_bench: 64-128 wide
    // layers at batch 32 lost up to 20% on two threads).
    if (team_ && 2.0 * g.m * g.n * g.k >= kMultithreadFlops) {
      if (g.n >= team_->size() * kLanes) {
        plan.parts = team_->size();
      } else if (rows_allowed && g.m >= team_->size() * kLanes) {
        plan.parts = team_->size();
        plan.by_rows = true;
      }
    }
    const Block first = plan.block(g, 0);
    plan.small = small_gemm_ != cpu::SmallGemm::kNone &&
                 cpu::use_small_gemm(g.trans_a, g.trans_b, first.rows, first.cols, g.k);
    return plan;
  }
  // fn(block's arguments, block) for each of the plan's blocks, on the team when it has more
  // than one.
  template <typename Fn>
  void on_blocks(const GemmArgs& g, const Plan& plan, Fn fn) {
    if (plan.parts == 1) return fn(g, plan.block(g, 0));
    team_->run([&](int part) {
      const Block b = plan.block(g, part);
      if (b.rows > 0 && b.cols > 0) fn(block_args(g, b), b);
    });
  }
  // fn(begin, end) over [0, n), on the team when the work (n items of `weight` floats each) is
  // large enough to pay for waking it; ranges start on 16-float boundaries of the items.
  template <typename Fn>
  void in_parallel(int64_t n, int64_t weight, Fn fn) {
    if (!team_ || n * weight < kParallelFloats) return fn(int64_t{0}, n);
    team_->run([&](int part) {
      const auto r = cpu::split(n, team_->size(), part, weight >= kLanes ? 1 : kLanes);
      if (r.begin < r.end) fn(r.begin, r.end);
    });
  }
  void small_gemm(const GemmArgs& g, int p, const cpu::GemmEpilogue& e) const {
    cpu::sgemm_small(small_gemm_, g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha,
                     g.a + p * g.stride_a, g.lda, g.b + p * g.stride_b, g.ldb, g.beta,
                     g.c + p * g.stride_c, g.ldc, e);
  }

  static constexpr double kMultithreadFlops = 4.0e6;
  // Element-wise work below this many floats stays on the caller: tens of microseconds,
  // memory-bound, and a small network whose products stay on one thread ran 10% slower with
  // its optimizer step split (its helper then spins beside the caller).
  static constexpr int64_t kParallelFloats = int64_t{1} << 18;
  static constexpr int kLanes = 16;  // floats per 64-byte cache line
  // The small-matrix kernels (cpu_gemm.h) this CPU runs, if any.
  const cpu::SmallGemm small_gemm_ = cpu::small_gemm_kernels();
  int threads_ = 1;
  // Released buffers are kept for the next trial, up to kMaxPooledBytes (caching_pool.h).
  static constexpr int64_t kMaxPooledBytes = int64_t{256} << 20;
  CachingPool pool_{std::make_unique<AlignedMemory>(), "cpu", "memory", kMaxPooledBytes};
  std::unique_ptr<cpu::Team> team_;  // threads_ > 1 only
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace layerlab::backend
