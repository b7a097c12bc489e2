// A fixed team of threads for one CPU backend: run(fn) calls fn(0), ..., fn(size() - 1) at
// once, part 0 on the caller, and returns when all have returned.
//
// Why not OpenBLAS's own threads: they run only OpenBLAS, so at two threads a product had to
// leave the small-matrix kernels (cpu_gemm.h) for OpenBLAS's slower small-shape path, and
// they cannot share their threads with the element-wise loops (an OpenMP team beside them
// competed for the same two cores and lost, docs/benchmarks.md). With a team of its own the
// backend splits each large product into blocks of columns (or rows) that the small-matrix
// kernels or single-threaded OpenBLAS compute, and the element-wise loops into ranges.
//
// Helpers spin for a short while after each task (a training step's products follow one
// another within microseconds), then sleep on a futex (std::atomic::wait), so an idle
// backend costs no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace layerlab::backend::cpu {

class Team {
 public:
  // size - 1 helper threads; kFailedPrecondition, naming the count, when the system refuses
  // one (the ones started are stopped).
  explicit Team(int size);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  // fn(int part) must not throw (an exception on a helper ends the process, as in any
  // std::thread).
  template <typename Fn>
  void run(Fn&& fn) {
    run(&fn, [](void* f, int part) { (*static_cast<std::remove_reference_t<Fn>*>(f))(part); });
  }

 private:
  using Call = void (*)(void* fn, int part);
  void run(void* fn, Call call);
  void serve(int part);
  void stop_helpers();

  std::vector<std::thread> helpers_;
  void* fn_ = nullptr;  // the current task
  Call call_ = nullptr;
  // The caller's floating-point control state (float_env.h), taken by the helpers for the
  // task: every part computes as the caller does (denormals flushed in training, or not).
  unsigned float_control_ = 0;
  std::atomic<unsigned> generation_{0};  // bumped once per task
  std::atomic<int> finished_{0};         // helpers done with the current task
  bool stopping_ = false;                // written before the last generation bump
};

// [begin, end) of part `part` of n items split into `parts` nearly equal ranges whose
// boundaries are multiples of `align` (so no two threads write one cache line).
struct Range {
  int64_t begin, end;
};
Range split(int64_t n, int parts, int part, int64_t align);

}  // namespace layerlab::backend::cpu
