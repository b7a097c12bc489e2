// Engine benchmark: training steps per second of layerlab's CPU engine on synthetic MLPs,
// and OpenBLAS SGEMM on exactly the matrix shapes those steps multiply (the ceiling).
// bench/run_engine.sh runs it beside PyTorch on the same networks (bench/torch_steps.py)
// and writes the comparison to docs/benchmarks.md.
//
// Names: step/W<width>/D<depth>/B<batch>/I<inputs>/T<threads>,
//        pack16/... (a pack of 16 such networks, one thread) and
//        sgemm/W<width>/D<depth>/B<batch>/I<inputs>/T<threads>.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include "backend/buffer.h"
#include "backend/cpu_backend.h"
#include "backend/float_env.h"
#include "nn/network.h"
#include "nn/optimizer.h"

namespace {

using namespace layerlab;

constexpr int kClasses = 10;
constexpr int kPool = 8;          // batches cycled, as the PyTorch peer does
constexpr int kPackMembers = 16;  // members of the pack16 rows

struct Shape {
  int width, depth, batch, inputs, threads;
};

// GEMM floating-point operations of one training step: forward, weight gradient, and input
// gradient of every layer but the first.
double gemm_flops_per_step(const Shape& s) {
  double flops = 0;
  int in = s.inputs;
  for (int l = 0; l <= s.depth; ++l) {
    const int out = l < s.depth ? s.width : kClasses;
    flops += 2.0 * s.batch * in * out * (l == 0 ? 2 : 3);
    in = out;
  }
  return flops;
}

std::vector<float> random_values(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 2.f * backend::uniform01(seed, 0, i) - 1.f;
  return v;
}

// Training steps of a pack of `pack` networks of shape s (members differ in their initial
// weights), as a worker trains a pack: steps_per_second counts the pack's steps,
// member_steps_per_second each member's.
void BM_TrainStep(benchmark::State& state, Shape s, int pack) {
  auto b = backend::make_cpu_backend(s.threads);
  nn::Architecture arch;
  arch.inputs = s.inputs;
  arch.hidden.assign(s.depth, s.width);
  arch.outputs = kClasses;
  nn::Network net(*b, arch, pack, s.batch);
  for (int m = 0; m < pack; ++m) net.initialize(m, nn::Init::kGlorotUniform, m);
  nn::Params p;
  p.optimizer = "momentum";
  p.learning_rate = 0.01;
  const std::vector<nn::Params> members(pack, p);
  nn::Optimizer opt(*b, p.optimizer, net);
  const size_t rows = static_cast<size_t>(pack) * s.batch;  // one batch of every member
  backend::DeviceBuffer<float> x(*b, kPool * rows * s.inputs);
  backend::DeviceBuffer<float> y(*b, kPool * rows);
  x.upload(random_values(x.size(), 1));
  std::vector<float> labels(y.size());
  for (size_t i = 0; i < labels.size(); ++i)
    labels[i] = static_cast<float>(backend::mix64(i) % kClasses);
  y.upload(labels);
  backend::DeviceBuffer<float> d_out(*b, rows * kClasses);
  backend::DeviceBuffer<double> loss(*b, pack);
  const std::vector<float> no_dropout(pack, 0.f);
  const std::vector<uint64_t> seeds(pack, 0);
  const std::vector<double> lr(pack, p.learning_rate);
  const backend::FlushDenormals as_in_training;
  int64_t step = 0;
  for (auto _ : state) {
    const size_t i = static_cast<size_t>(step % kPool);
    const float* bx = x.data() + i * rows * s.inputs;
    const float* out = net.forward(bx, s.batch, true, no_dropout, seeds, step);
    b->loss(backend::Loss::kSoftmaxCrossEntropy, pack, s.batch, kClasses, out, y.data() + i * rows,
            d_out.data(), s.batch, loss.data(), nullptr);
    net.backward(bx, d_out.data(), s.batch);
    opt.step(net, members, lr);
    ++step;
  }
  state.counters["steps_per_second"] =
      benchmark::Counter(double(step), benchmark::Counter::kIsRate);
  state.counters["member_steps_per_second"] =
      benchmark::Counter(double(step) * pack, benchmark::Counter::kIsRate);
  state.counters["gemm_gflops"] =
      benchmark::Counter(gemm_flops_per_step(s) * pack * step / 1e9, benchmark::Counter::kIsRate);
  state.SetItemsProcessed(step * static_cast<int64_t>(rows));
}

// The same GEMMs as one training step, straight to OpenBLAS with nothing in between.
void BM_SgemmSameShapes(benchmark::State& state, Shape s) {
  openblas_set_num_threads(s.threads);
  const size_t big = static_cast<size_t>(std::max(s.width, s.inputs));
  std::vector<float> a = random_values(big * std::max(big, size_t(s.batch)), 2);
  std::vector<float> w = random_values(big * big, 3);
  std::vector<float> c(big * std::max(big, size_t(s.batch)));
  int64_t steps = 0;
  for (auto _ : state) {
    int in = s.inputs;
    for (int l = 0; l <= s.depth; ++l) {
      const int out = l < s.depth ? s.width : kClasses;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.batch, out, in, 1.f, a.data(), in,
                  w.data(), in, 0.f, c.data(), out);  // forward
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, s.batch, 1.f, a.data(), out,
                  w.data(), in, 0.f, c.data(), in);  // weight gradient
      if (l > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.batch, in, out, 1.f, a.data(), out,
                    w.data(), in, 0.f, c.data(), in);  // input gradient
      in = out;
    }
    benchmark::DoNotOptimize(c.data());
    ++steps;
  }
  state.counters["gemm_gflops"] =
      benchmark::Counter(gemm_flops_per_step(s) * steps / 1e9, benchmark::Counter::kIsRate);
}

std::string suffix(const Shape& s) {
  return "/W" + std::to_string(s.width) + "/D" + std::to_string(s.depth) + "/B" +
         std::to_string(s.batch) + "/I" + std::to_string(s.inputs) + "/T" +
         std::to_string(s.threads);
}

std::vector<Shape> shapes() {
  std::vector<Shape> all;
  for (int threads : {1, 2}) {
    for (int width : {64, 256, 1024})
      for (int depth : {1, 4, 16})
        for (int batch : {32, 128}) all.push_back({width, depth, batch, width, threads});
    all.push_back({1024, 4, 256, 1024, threads});  // the SGEMM-ratio target shape
    all.push_back({256, 2, 128, 784, threads});    // peers' S1
    all.push_back({128, 8, 32, 64, threads});      // peers' S2
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  // Every training step first, then the SGEMM rows: a two-thread SGEMM row leaves OpenBLAS's
  // second thread spinning for a while after it, which took a core from the next row when
  // the two kinds alternated.
  for (const Shape& s : shapes())
    benchmark::RegisterBenchmark(("step" + suffix(s)).c_str(), BM_TrainStep, s, 1)
        ->MinTime(0.3)
        ->UseRealTime();
  // Packs of 16 on one thread (issue 15: where packing pays on the CPU, and what
  // `--pack auto`, which stays at 1 there, gives up).
  for (const Shape& s : shapes())
    if (s.threads == 1)
      benchmark::RegisterBenchmark(("pack16" + suffix(s)).c_str(), BM_TrainStep, s, kPackMembers)
          ->MinTime(0.3)
          ->UseRealTime();
  for (const Shape& s : shapes())
    benchmark::RegisterBenchmark(("sgemm" + suffix(s)).c_str(), BM_SgemmSameShapes, s)
        ->MinTime(0.3)
        ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
