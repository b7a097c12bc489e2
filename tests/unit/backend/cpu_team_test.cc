// The CPU backend's thread team (backend/cpu_team.h), and what the backend does on it: a
// backend of 2 threads splits large products into blocks of columns (or rows) and large
// element-wise loops into ranges, and must give the bits of a backend of 1 thread wherever
// both compute each element with the same kernel (the small-matrix kernels, the element-wise
// loops, single-threaded OpenBLAS on a block of columns).
#include "backend/cpu_team.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu_backend.h"
#include "op_compare.h"

namespace layerlab::backend {
namespace {

using testing::Arrays;
using testing::DeviceArrays;
using testing::Tolerance;
using testing::uniform;

TEST(CpuTeam, EveryPartRunsOnceEachRoundOnItsOwnThread) {
  cpu::Team team(3);
  ASSERT_EQ(team.size(), 3);
  std::vector<int> runs(3, 0);  // each part writes only its own slot
  std::vector<std::thread::id> ids(3);
  std::set<std::thread::id> seen;
  for (int round = 1; round <= 2000; ++round) {
    team.run([&](int part) {
      ++runs[part];
      ids[part] = std::this_thread::get_id();
    });
    for (int part = 0; part < 3; ++part) ASSERT_EQ(runs[part], round) << "part " << part;
    seen.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(ids[0], std::this_thread::get_id()) << "part 0 runs on the caller";
  EXPECT_EQ(seen.size(), 3u) << "each part keeps its own thread";
}

TEST(CpuTeam, OfOneRunsOnTheCallerAlone) {
  cpu::Team team(1);
  EXPECT_EQ(team.size(), 1);
  std::vector<int> parts;
  std::thread::id ran_on;
  team.run([&](int part) {
    parts.push_back(part);
    ran_on = std::this_thread::get_id();
  });
  EXPECT_EQ(parts, std::vector<int>{0});
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(CpuTeam, WakesSleepingHelpersForTheNextTask) {
  cpu::Team team(2);
  int helper_runs = 0;
  for (int round = 1; round <= 3; ++round) {
    // Longer than a helper spins before it sleeps on the futex.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    team.run([&](int part) { helper_runs += part; });
    EXPECT_EQ(helper_runs, round);
  }
}

TEST(CpuTeam, SplitCoversTheRangeInAlignedPieces) {
  for (int64_t n : {0, 1, 15, 16, 17, 100, 1000, 100003}) {
    for (int parts : {1, 2, 3, 16}) {
      for (int64_t align : {1, 16}) {
        SCOPED_TRACE("n " + std::to_string(n) + ", parts " + std::to_string(parts) + ", align " +
                     std::to_string(align));
        int64_t next = 0, largest = 0;
        for (int part = 0; part < parts; ++part) {
          const cpu::Range r = cpu::split(n, parts, part, align);
          EXPECT_EQ(r.begin, next);
          EXPECT_LE(r.begin, r.end);
          if (r.begin < n) {
            EXPECT_EQ(r.begin % align, 0);
          }
          largest = std::max(largest, r.end - r.begin);
          next = r.end;
        }
        EXPECT_EQ(next, n);
        // Nearly equal: no piece more than one aligned unit above an even share.
        EXPECT_LE(largest, (n + parts * align - 1) / (parts * align) * align + align);
      }
    }
  }
}

class CpuTwoThreads : public ::testing::Test {
 protected:
  void expect_bits_of_one_thread(const Arrays& in, const testing::Op& op) {
    EXPECT_TRUE(testing::same_results(*one_, *two_, in, op, Tolerance{}));
  }
  std::unique_ptr<Backend> one_ = make_cpu_backend(1), two_ = make_cpu_backend(2);
};

// Large enough for the team (2^18 floats and more per member), odd sizes so the pieces are
// uneven.
constexpr int kPack = 2, kRows = 2051, kCols = 129;
constexpr int64_t kSize = int64_t{kPack} * kRows * kCols;

TEST_F(CpuTwoThreads, ElementWiseWorkGivesTheBitsOfOneThread) {
  const Arrays in{{uniform(kSize, 1, -3.f, 3.f), uniform(kSize, 2), uniform(kSize, 3),
                   uniform(kPack * kCols, 4), uniform(kSize, 5, 0.f, 1.f)},
                  {},
                  {}};
  for (Activation act : {Activation::kRelu, Activation::kTanh, Activation::kGelu}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)));
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      b.bias_activation_forward(act, kPack, kRows, kCols, {a.f(3), kCols}, a.f(0), a.f(1));
    });
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      b.activation_backward(act, kPack, kRows, kCols, a.f(0), a.f(1), a.f(2), a.f(2),
                            {a.f(3), kCols});
    });
  }
  expect_bits_of_one_thread(in, [](Backend& b, DeviceArrays& a) {
    b.sum_rows(kPack, kRows, kCols, a.f(0), {a.f(3), kCols});
  });
  expect_bits_of_one_thread(in, [](Backend& b, DeviceArrays& a) {
    b.multiply(kSize, a.f(0), a.f(1));
    b.add(kSize, a.f(1), a.f(2));
  });
  const int64_t n = kSize / kPack;
  for (UpdateRule rule : {UpdateRule::kMomentum, UpdateRule::kAdam}) {
    SCOPED_TRACE("rule " + std::to_string(static_cast<int>(rule)));
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      std::vector<StepHyper> hyper(kPack);
      hyper[0].lr = 0.01f, hyper[1].lr = 0.02f;
      for (auto& h : hyper)
        h.momentum = 0.9f, h.bias_correction1 = 0.1f, h.bias_correction2 = 0.01f;
      b.optimizer_step(rule, kPack, n, {a.f(0), n}, {a.f(1), n}, {a.f(2), n}, {a.f(4), n}, hyper);
    });
  }
}

struct Product {
  bool ta, tb;
  int m, n, k;
  std::string str() const {
    return std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k);
  }
};

GemmArgs args(const Product& p, DeviceArrays& a) {
  GemmArgs g;
  g.trans_a = p.ta, g.trans_b = p.tb;
  g.m = p.m, g.n = p.n, g.k = p.k;
  g.a = a.f(0), g.lda = p.ta ? p.m : p.k, g.stride_a = int64_t{p.m} * p.k;
  g.b = a.f(1), g.ldb = p.tb ? p.k : p.n, g.stride_b = int64_t{p.k} * p.n;
  g.c = a.f(2), g.ldc = p.n, g.stride_c = int64_t{p.m} * p.n;
  g.beta = 0.5f;
  g.batch = kPack;
  return g;
}

Arrays operands(const Product& p) {
  const size_t mk = size_t{kPack} * p.m * p.k, kn = size_t{kPack} * p.k * p.n,
               mn = size_t{kPack} * p.m * p.n;
  return {{uniform(mk, 5), uniform(kn, 6), uniform(mn, 7), uniform(mn, 8, -2.f, 2.f),
           uniform(mn, 9), uniform(kPack * p.n, 10)},
          {},
          {}};
}

// Products of 4 MFLOP and more go to the team. Each case's blocks take the path the whole
// product takes on one thread, so the bits must match:
//  - 32 x 256 x 256 (a width-256 layer at batch 32): columns, small-matrix kernels both sides;
//  - 1024 x 16 x 128 (too few columns to split): rows, small-matrix kernels both sides;
//  - 256 x 512 x 512: columns, single-threaded OpenBLAS both sides.
const std::vector<Product> kProducts = {
    {false, false, 32, 256, 256}, {true, false, 32, 256, 256},   {false, true, 32, 256, 256},
    {true, true, 32, 256, 256},   {false, false, 1024, 16, 128}, {true, false, 1024, 16, 128},
    {false, true, 256, 512, 512},
};

TEST_F(CpuTwoThreads, LargeProductsGiveTheBitsOfOneThread) {
  for (const Product& p : kProducts) {
    SCOPED_TRACE(p.str());
    const Arrays in = operands(p);
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) { b.gemm(args(p, a)); });
  }
}

TEST_F(CpuTwoThreads, FusedEpiloguesOnBlocksGiveTheBitsOfOneThread) {
  for (const Product& p : kProducts) {
    const Arrays in = operands(p);
    for (Activation act : {Activation::kRelu, Activation::kTanh, Activation::kGelu}) {
      SCOPED_TRACE(p.str() + ", activation " + std::to_string(static_cast<int>(act)));
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_bias_activation(args(p, a), act, {a.f(5), p.n}, a.f(4));
      });
      // The backward epilogue's bias gradient sums over rows: columns only, or unsplit.
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_activation_backward(args(p, a), act, a.f(3), a.f(4), {a.f(5), p.n});
      });
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_activation_backward(args(p, a), act, a.f(3), a.f(4), {});
      });
    }
  }
}

}  // namespace
}  // namespace layerlab::backend
