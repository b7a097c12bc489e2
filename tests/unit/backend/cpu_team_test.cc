// The CPU backend's thread team (backend/cpu_team.h), and what the backend does on it: a
// backend of 2 threads splits large products into blocks of columns (or rows) and large
// element-wise loops into ranges, and must give the bits of a backend of 1 thread wherever
// both compute each element with the same kernel (the small-matrix kernels, the element-wise
// loops, single-threaded OpenBLAS on a block of columns).
#include "backend/cpu_team.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu_backend.h"
#include "common/error.h"
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

#if defined(__SANITIZE_ADDRESS__)
#define LAYERLAB_TEAM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAYERLAB_TEAM_TEST_ASAN 1
#endif
#endif

#ifndef LAYERLAB_TEAM_TEST_ASAN
// In a child process: starts a team of 64 under an address-space limit that leaves room for
// about three thread stacks. 0: the error says what was asked for; 1: no error; 2: another.
[[noreturn]] void start_team_without_room() {
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const rlim_t room = static_cast<rlim_t>(pages) * static_cast<rlim_t>(getpagesize()) + (24 << 20);
  const rlimit limit{room, room};
  setrlimit(RLIMIT_AS, &limit);
  try {
    cpu::Team team(64);
  } catch (const Error& e) {
    const bool named = std::string(e.what()).find("cannot start 64 CPU threads") == 0;
    std::_Exit(e.code() == ErrorCode::kFailedPrecondition && named ? 0 : 2);
  }
  std::_Exit(1);
}
#endif

// Threads the system refuses are an error that says what was asked for, and the helpers
// already started are stopped, not left running (a thread still joinable when destroyed
// would end the process).
TEST(CpuTeam, ThreadsTheSystemRefusesAreAClearError) {
#ifdef LAYERLAB_TEAM_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no limit can apply";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(start_team_without_room(), ::testing::ExitedWithCode(0), "");
#endif
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
constexpr int kTeamPack = 2, kTeamRows = 2051, kTeamCols = 129;
constexpr int64_t kTeamSize = int64_t{kTeamPack} * kTeamRows * kTeamCols;

TEST_F(CpuTwoThreads, ElementWiseWorkGivesTheBitsOfOneThread) {
  const Arrays in{{uniform(kTeamSize, 1, -3.f, 3.f), uniform(kTeamSize, 2), uniform(kTeamSize, 3),
                   uniform(kTeamPack * kTeamCols, 4), uniform(kTeamSize, 5, 0.f, 1.f)},
                  {},
                  {}};
  for (Activation act : {Activation::kRelu, Activation::kTanh, Activation::kGelu}) {
    SCOPED_TRACE("activation " + std::to_string(static_cast<int>(act)));
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      b.bias_activation_forward(act, kTeamPack, kTeamRows, kTeamCols, {a.f(3), kTeamCols}, a.f(0),
                                a.f(1));
    });
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      b.activation_backward(act, kTeamPack, kTeamRows, kTeamCols, a.f(0), a.f(1), a.f(2), a.f(2),
                            {a.f(3), kTeamCols});
    });
  }
  expect_bits_of_one_thread(in, [](Backend& b, DeviceArrays& a) {
    b.sum_rows(kTeamPack, kTeamRows, kTeamCols, a.f(0), {a.f(3), kTeamCols});
  });
  expect_bits_of_one_thread(in, [](Backend& b, DeviceArrays& a) {
    b.multiply(kTeamSize, a.f(0), a.f(1));
    b.add(kTeamSize, a.f(1), a.f(2));
  });
  const int64_t n = kTeamSize / kTeamPack;
  for (UpdateRule rule : {UpdateRule::kMomentum, UpdateRule::kAdam}) {
    SCOPED_TRACE("rule " + std::to_string(static_cast<int>(rule)));
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
      std::vector<StepHyper> hyper(kTeamPack);
      hyper[0].lr = 0.01f, hyper[1].lr = 0.02f;
      for (auto& h : hyper)
        h.momentum = 0.9f, h.bias_correction1 = 0.1f, h.bias_correction2 = 0.01f;
      b.optimizer_step(rule, kTeamPack, n, {a.f(0), n}, {a.f(1), n}, {a.f(2), n}, {a.f(4), n},
                       hyper);
    });
  }
}

struct TeamProduct {
  bool ta, tb;
  int m, n, k;
  std::string str() const {
    return std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k);
  }
};

GemmArgs team_args(const TeamProduct& p, DeviceArrays& a) {
  GemmArgs g;
  g.trans_a = p.ta, g.trans_b = p.tb;
  g.m = p.m, g.n = p.n, g.k = p.k;
  g.a = a.f(0), g.lda = p.ta ? p.m : p.k, g.stride_a = int64_t{p.m} * p.k;
  g.b = a.f(1), g.ldb = p.tb ? p.k : p.n, g.stride_b = int64_t{p.k} * p.n;
  g.c = a.f(2), g.ldc = p.n, g.stride_c = int64_t{p.m} * p.n;
  g.beta = 0.5f;
  g.batch = kTeamPack;
  return g;
}

Arrays team_operands(const TeamProduct& p) {
  const size_t mk = size_t{kTeamPack} * p.m * p.k, kn = size_t{kTeamPack} * p.k * p.n,
               mn = size_t{kTeamPack} * p.m * p.n;
  return {{uniform(mk, 5), uniform(kn, 6), uniform(mn, 7), uniform(mn, 8, -2.f, 2.f),
           uniform(mn, 9), uniform(kTeamPack * p.n, 10)},
          {},
          {}};
}

// Products of 4 MFLOP and more go to the team. Each case's blocks take the path the whole
// product takes on one thread, so the bits must match:
//  - 32 x 256 x 256 (a width-256 layer at batch 32): columns, small-matrix kernels both sides;
//  - 1024 x 16 x 128 (too few columns to split): rows, small-matrix kernels both sides;
//  - 256 x 512 x 512: columns, single-threaded OpenBLAS both sides.
const std::vector<TeamProduct> kTeamProducts = {
    {false, false, 32, 256, 256}, {true, false, 32, 256, 256},   {false, true, 32, 256, 256},
    {true, true, 32, 256, 256},   {false, false, 1024, 16, 128}, {true, false, 1024, 16, 128},
    {false, true, 256, 512, 512},
};

TEST_F(CpuTwoThreads, LargeProductsGiveTheBitsOfOneThread) {
  for (const TeamProduct& p : kTeamProducts) {
    SCOPED_TRACE(p.str());
    const Arrays in = team_operands(p);
    expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) { b.gemm(team_args(p, a)); });
  }
}

TEST_F(CpuTwoThreads, FusedEpiloguesOnBlocksGiveTheBitsOfOneThread) {
  for (const TeamProduct& p : kTeamProducts) {
    const Arrays in = team_operands(p);
    for (Activation act : {Activation::kRelu, Activation::kTanh, Activation::kGelu}) {
      SCOPED_TRACE(p.str() + ", activation " + std::to_string(static_cast<int>(act)));
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_bias_activation(team_args(p, a), act, {a.f(5), p.n}, a.f(4));
      });
      // The backward epilogue's bias gradient sums over rows: columns only, or unsplit.
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_activation_backward(team_args(p, a), act, a.f(3), a.f(4), {a.f(5), p.n});
      });
      expect_bits_of_one_thread(in, [&](Backend& b, DeviceArrays& a) {
        b.gemm_activation_backward(team_args(p, a), act, a.f(3), a.f(4), {});
      });
    }
  }
}

}  // namespace
}  // namespace layerlab::backend
