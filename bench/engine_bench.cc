// Engine benchmark: training steps per second of layerlab's CPU engine on synthetic MLPs,
// and OpenBLAS SGEMM on exactly the matrix shapes those steps multiply (the ceiling).
// bench/run_engine.sh runs it beside PyTorch on the same networks (bench/torch_steps.py)
// and writes the comparison to docs/benchmarks.md.
//
// Names: step/W<width>/D<depth>/B<batch>/I<inputs>/T<threads>,
//        pack16/... (a pack of 16 such networks, one thread, one batched computation),
//        pack16_as_trained/... (the same pack in the parts train_pack trains it in, where a
//        part has 2 to 15 members: a part's member steps/s) and
//        sgemm/W<width>/D<depth>/B<batch>/I<inputs>/T<threads>.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include "backend/float_env.h"
#include "nn/trainer.h"
#include "training_rig.h"

namespace {

using namespace layerlab;
using bench::gemm_flops_per_step;
using bench::random_values;
using Shape = bench::MlpShape;

constexpr int kClasses = Shape::kClasses;
constexpr int kPackMembers = 16;  // members of the pack16 rows

// Training steps of a pack of `pack` networks of shape s (members differ in their initial
// weights), as a worker trains a pack: steps_per_second counts the pack's steps,
// member_steps_per_second each member's.
// `as_trained`: the part of the pack train_pack trains together (reported, not used here).
void BM_TrainStep(benchmark::State& state, Shape s, int pack, int as_trained) {
  bench::TrainingRig rig(s, pack);
  state.counters["members"] = pack;
  state.counters["trained_in_parts_of"] = as_trained;
  const backend::FlushDenormals as_in_training;
  for (auto _ : state) rig.step();
  const double steps = static_cast<double>(rig.steps());
  state.counters["steps_per_second"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
  state.counters["member_steps_per_second"] =
      benchmark::Counter(steps * pack, benchmark::Counter::kIsRate);
  state.counters["gemm_gflops"] =
      benchmark::Counter(gemm_flops_per_step(s) * pack * steps / 1e9, benchmark::Counter::kIsRate);
  state.SetItemsProcessed(rig.steps() * static_cast<int64_t>(rig.rows()));
}

// The same GEMMs as one training step, straight to OpenBLAS with nothing in between.
void BM_SgemmSameShapes(benchmark::State& state, Shape s) {
  openblas_set_num_threads(s.threads);
  // Each operand holds the largest of its roles: w is also the weight gradient's batch x in
  // right-hand side (it was big x big and the products at batch > width read past its end,
  // into values that ran OpenBLAS at 5 GFLOP/s).
  const size_t big = static_cast<size_t>(std::max(s.width, s.inputs));
  const size_t rows = std::max(big, size_t(s.batch));
  std::vector<float> a = random_values(big * rows, 2);
  std::vector<float> w = random_values(big * rows, 3);
  std::vector<float> c(big * rows);
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
  // the two kinds alternated. A one-thread step is followed by its packs of 16 (issue 15:
  // where packing pays on the CPU, and what `--pack auto`, 1 there, gives up), measured
  // beside it: the same computation measured a minute apart in one process differed by up
  // to 15% here. A pack of 16 runs batched whole, then as `--pack 16` trains it: in the parts
  // train_pack picks where it outgrows the CPU's cache (a part of 1 is the step row, of 16
  // the batched row; only parts in between are rows of their own).
  const auto cpu = backend::make_cpu_backend(1);
  auto add = [](const std::string& name, Shape s, int pack, int as_trained) {
    benchmark::RegisterBenchmark(name.c_str(), BM_TrainStep, s, pack, as_trained)
        ->MinTime(0.3)
        ->UseRealTime();
  };
  for (const Shape& s : shapes()) {
    add("step" + suffix(s), s, 1, 1);
    if (s.threads != 1) continue;
    const int part = nn::pack_part_size(*cpu, bench::mlp_architecture(s), kPackMembers, s.batch,
                                        s.batch, nn::NetworkLimits{}.max_bytes);
    add("pack16" + suffix(s), s, kPackMembers, part);
    if (part > 1 && part < kPackMembers) add("pack16_as_trained" + suffix(s), s, part, part);
  }
  for (const Shape& s : shapes())
    benchmark::RegisterBenchmark(("sgemm" + suffix(s)).c_str(), BM_SgemmSameShapes, s)
        ->MinTime(0.3)
        ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
