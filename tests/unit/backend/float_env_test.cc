// Training flushes denormals to zero (backend/float_env.h): on the caller's thread while the
// guard lives, on the CPU backend's helper threads while they work for it, and so in the
// optimizer update, where a dead unit's momentum would otherwise sit at the smallest
// subnormal.
//
// Results are compared as bit patterns: with denormals-are-zero on, a comparison reads a
// subnormal as 0 and would pass whatever was computed.
#include "backend/float_env.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/cpu_team.h"

namespace layerlab::backend {
namespace {

constexpr uint32_t kZero = 0;
const uint32_t kSmallestSubnormal =
    std::bit_cast<uint32_t>(std::numeric_limits<float>::denorm_min());

// Half the smallest normal float: a subnormal, or 0 where results are flushed. The volatile
// read keeps the compiler from computing it at build time.
uint32_t half_of_smallest_normal() {
  volatile float smallest = FLT_MIN;
  return std::bit_cast<uint32_t>(smallest * 0.5f);
}

// The smallest subnormal plus zero: itself, or 0 where subnormal operands read as zero.
uint32_t subnormal_plus_zero() {
  volatile float subnormal = std::numeric_limits<float>::denorm_min();
  volatile float zero = 0.f;
  return std::bit_cast<uint32_t>(subnormal + zero);
}

#if defined(__x86_64__) || defined(__i386__)

TEST(FlushDenormals, FlushesResultsAndOperandsWhileItLivesThenRestores) {
  ASSERT_FALSE(denormals_flushed());
  ASSERT_NE(half_of_smallest_normal(), kZero);
  ASSERT_EQ(subnormal_plus_zero(), kSmallestSubnormal);
  {
    const FlushDenormals flush;
    EXPECT_TRUE(denormals_flushed());
    EXPECT_EQ(half_of_smallest_normal(), kZero);
    EXPECT_EQ(subnormal_plus_zero(), kZero);
    { const FlushDenormals nested; }
    EXPECT_TRUE(denormals_flushed()) << "a nested guard restores what it found";
  }
  EXPECT_FALSE(denormals_flushed());
  EXPECT_NE(half_of_smallest_normal(), kZero);
  EXPECT_EQ(subnormal_plus_zero(), kSmallestSubnormal);
}

TEST(FlushDenormals, TheCpuTeamsHelpersComputeAsTheirCallerDoes) {
  cpu::Team team(2);
  std::vector<uint32_t> seen(2);
  auto run = [&] { team.run([&](int part) { seen[part] = half_of_smallest_normal(); }); };
  run();
  EXPECT_NE(seen[0], kZero);
  EXPECT_NE(seen[1], kZero) << "a helper thread, its caller not flushing";
  {
    const FlushDenormals flush;
    run();
    EXPECT_EQ(seen[0], kZero);
    EXPECT_EQ(seen[1], kZero) << "a helper thread, its caller flushing";
  }
  run();
  EXPECT_NE(seen[1], kZero) << "a helper thread, its caller no longer flushing";
}

// Momentum with a zero gradient: the state decays by 0.9 a step, and 0.9 times the smallest
// subnormal rounds back to it, so without the flush it never reaches zero.
TEST(FlushDenormals, AMomentumStateAtTheSmallestSubnormalGoesToZero) {
  auto b = make_cpu_backend(1);
  auto step = [&] {
    std::vector<float> w{1.f}, g{0.f}, s1{std::numeric_limits<float>::denorm_min()};
    StepHyper h;
    h.lr = 0.1f;
    h.momentum = 0.9f;
    b->optimizer_step(UpdateRule::kMomentum, 1, 1, {w.data(), 1}, {g.data(), 1}, {s1.data(), 1}, {},
                      {&h, 1});
    return std::bit_cast<uint32_t>(s1[0]);
  };
  EXPECT_EQ(step(), kSmallestSubnormal);
  const FlushDenormals flush;
  EXPECT_EQ(step(), kZero);
}

#else

TEST(FlushDenormals, IsANoOpWithoutMxcsr) {
  const FlushDenormals flush;
  EXPECT_FALSE(denormals_flushed());
  EXPECT_NE(half_of_smallest_normal(), kZero);
  EXPECT_EQ(subnormal_plus_zero(), kSmallestSubnormal);
}

#endif

}  // namespace
}  // namespace layerlab::backend
