// Training flushes denormals to zero (backend/float_env.h): on the caller's thread while the
// guard lives, on the CPU backend's helper threads for their lives, and in the optimizer
// update, where a dead unit's momentum would otherwise sit at the smallest subnormal.
#include "backend/float_env.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <limits>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/cpu_team.h"

namespace layerlab::backend {
namespace {

// Half the smallest normal float: a subnormal, or 0 where denormals are flushed. The
// volatile read keeps the compiler from computing it at build time.
float half_of_smallest_normal() {
  volatile float smallest = FLT_MIN;
  return smallest * 0.5f;
}

// A subnormal operand plus zero: itself, or 0 where subnormal operands read as zero.
float subnormal_plus_zero() {
  volatile float subnormal = std::numeric_limits<float>::denorm_min();
  volatile float zero = 0.f;
  return subnormal + zero;
}

#if defined(__x86_64__) || defined(__i386__)

TEST(FlushDenormals, FlushesResultsAndOperandsWhileItLivesThenRestores) {
  ASSERT_FALSE(denormals_flushed());
  ASSERT_GT(half_of_smallest_normal(), 0.f);
  ASSERT_GT(subnormal_plus_zero(), 0.f);
  {
    const FlushDenormals flush;
    EXPECT_TRUE(denormals_flushed());
    EXPECT_EQ(half_of_smallest_normal(), 0.f);
    EXPECT_EQ(subnormal_plus_zero(), 0.f);
    { const FlushDenormals nested; }
    EXPECT_TRUE(denormals_flushed()) << "a nested guard restores what it found";
  }
  EXPECT_FALSE(denormals_flushed());
  EXPECT_GT(half_of_smallest_normal(), 0.f);
}

TEST(FlushDenormals, TheCpuTeamsHelpersFlush) {
  cpu::Team team(2);
  std::vector<float> seen(2, -1.f);
  team.run([&](int part) { seen[part] = half_of_smallest_normal(); });
  EXPECT_GT(seen[0], 0.f) << "the caller's part runs in the caller's environment";
  EXPECT_EQ(seen[1], 0.f) << "a helper thread";
}

// Momentum with a zero gradient: the state decays by 0.9 a step, and 0.9 times the smallest
// subnormal rounds back to it, so without the flush it never reaches zero.
TEST(FlushDenormals, AMomentumStateAtTheSmallestSubnormalGoesToZero) {
  auto b = make_cpu_backend(1);
  const float tiny = std::numeric_limits<float>::denorm_min();
  auto step = [&] {
    std::vector<float> w{1.f}, g{0.f}, s1{tiny};
    StepHyper h;
    h.lr = 0.1f;
    h.momentum = 0.9f;
    b->optimizer_step(UpdateRule::kMomentum, 1, 1, {w.data(), 1}, {g.data(), 1}, {s1.data(), 1}, {},
                      {&h, 1});
    return s1[0];
  };
  EXPECT_EQ(step(), tiny);
  const FlushDenormals flush;
  EXPECT_EQ(step(), 0.f);
}

#else

TEST(FlushDenormals, IsANoOpWithoutMxcsr) {
  const FlushDenormals flush;
  EXPECT_FALSE(denormals_flushed());
  EXPECT_GT(half_of_smallest_normal(), 0.f);
  EXPECT_GT(subnormal_plus_zero(), 0.f);
}

#endif

}  // namespace
}  // namespace layerlab::backend
