// The backends' caching pool, on host memory (it knows nothing of CUDA), so these run in
// every build.
#include "backend/caching_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include "common/error.h"

namespace layerlab::backend {
namespace {

// malloc with a byte limit; counts what is outstanding.
struct LimitedMemory : RawMemory {
  struct Counters {
    int64_t outstanding = 0, calls = 0;
    std::set<void*> live;
  };
  LimitedMemory(int64_t limit, Counters& c) : limit_(limit), c_(c) {}
  void* allocate(size_t bytes) override {
    ++c_.calls;
    if (c_.outstanding + static_cast<int64_t>(bytes) > limit_) return nullptr;
    void* p = std::malloc(bytes);
    c_.outstanding += static_cast<int64_t>(bytes);
    sizes_[p] = bytes;
    c_.live.insert(p);
    return p;
  }
  void free(void* p) noexcept override {
    c_.outstanding -= static_cast<int64_t>(sizes_[p]);
    c_.live.erase(p);
    std::free(p);
  }
  int64_t limit_;
  Counters& c_;
  std::map<void*, size_t> sizes_;
};

TEST(CachingPool, SizeClassesWasteAtMostAQuarter) {
  EXPECT_EQ(CachingPool::size_class(0), 512u);
  EXPECT_EQ(CachingPool::size_class(512), 512u);
  EXPECT_EQ(CachingPool::size_class(513), 640u);
  EXPECT_EQ(CachingPool::size_class(1024), 1024u);
  EXPECT_EQ(CachingPool::size_class(1025), 1280u);
  EXPECT_EQ(CachingPool::size_class(3 << 20), size_t{3} << 20);
  for (size_t bytes = 513; bytes < (size_t{1} << 30); bytes = bytes * 9 / 7 + 1) {
    const size_t c = CachingPool::size_class(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LT(c, bytes + bytes / 4 + 1) << bytes;
    EXPECT_EQ(CachingPool::size_class(c), c) << "a class is its own class";
  }
}

TEST(CachingPool, ReleasedBlocksAreReusedAndStillCount) {
  LimitedMemory::Counters c;
  CachingPool pool(std::make_unique<LimitedMemory>(1 << 30, c), "cuda", "device memory");
  void* p = pool.allocate(1000);
  EXPECT_EQ(pool.bytes_held(), 1024);
  pool.release(p);
  EXPECT_EQ(pool.bytes_held(), 1024);
  EXPECT_EQ(pool.bytes_pooled(), 1024);
  EXPECT_EQ(pool.allocate(900), p) << "same size class: the pooled block";
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(pool.bytes_pooled(), 0);
  void* q = pool.allocate(5000);
  EXPECT_NE(q, p);
  EXPECT_EQ(c.calls, 2);
  EXPECT_EQ(pool.bytes_held(), 1024 + 5120);
}

// A smaller request takes a pooled block of a larger class, up to kLargestReuse times its
// own (on the CPU a fresh block's pages are faulted in again: the trials of a study come in
// many shapes, smaller and smaller); the block keeps its class when it comes back.
TEST(CachingPool, ASmallerRequestReusesALargerPooledBlockUpToALimit) {
  LimitedMemory::Counters c;
  CachingPool pool(std::make_unique<LimitedMemory>(1 << 30, c), "cpu", "memory");
  void* big = pool.allocate(64 << 10);
  void* huge = pool.allocate(1 << 20);
  pool.release(big);
  pool.release(huge);
  EXPECT_EQ(pool.allocate(20 << 10), big) << "64 KiB serves 20 KiB: within 4x";
  EXPECT_EQ(c.calls, 2);
  EXPECT_EQ(pool.bytes_pooled(), 1 << 20);
  void* small = pool.allocate(1000);
  EXPECT_NE(small, huge) << "1 MiB is far more than 4x 1 KiB: a block of its own";
  EXPECT_EQ(c.calls, 3);
  EXPECT_EQ(pool.allocate(300 << 10), huge) << "the smallest class that fits within 4x";
  pool.release(big);
  EXPECT_EQ(pool.bytes_pooled(), 64 << 10) << "it came back as the 64 KiB block it is";
  EXPECT_EQ(pool.bytes_held(), (64 << 10) + (1 << 20) + 1024);
  EXPECT_EQ(pool.allocate(60 << 10), big);
}

TEST(CachingPool, OutOfMemoryTrimsThePoolAndRetriesThenSaysSo) {
  LimitedMemory::Counters c;
  CachingPool pool(std::make_unique<LimitedMemory>(4096, c), "cuda", "device memory");
  pool.release(pool.allocate(2048));
  void* big = pool.allocate(3000);  // 3072 fits only once the pooled 2048 are given back
  EXPECT_NE(big, nullptr);
  EXPECT_EQ(pool.bytes_pooled(), 0);
  EXPECT_EQ(pool.bytes_held(), 3072);
  try {
    pool.allocate(2048);
    ADD_FAILURE() << "allocated past the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool.bytes_held(), 3072);
}

TEST(CachingPool, ForeignPointersAreRefusedAndEverythingIsFreedAtTheEnd) {
  LimitedMemory::Counters c;
  {
    CachingPool pool(std::make_unique<LimitedMemory>(1 << 20, c), "cuda", "device memory");
    int on_stack = 0;
    EXPECT_THROW(pool.release(&on_stack), Error);
    pool.release(nullptr);
    pool.allocate(100);                 // still handed out at the end
    pool.release(pool.allocate(4000));  // pooled at the end
    EXPECT_EQ(c.live.size(), 2u);
  }
  EXPECT_EQ(c.outstanding, 0);
  EXPECT_TRUE(c.live.empty());
}

TEST(CachingPool, BlocksPastTheReuseLimitGoBackAtOnce) {
  LimitedMemory::Counters c;
  CachingPool pool(std::make_unique<LimitedMemory>(1 << 20, c), "cpu", "memory", 3000);
  void* a = pool.allocate(2048);
  void* b = pool.allocate(2048);
  pool.release(a);  // 2048 pooled
  pool.release(b);  // 4096 would pass 3000: freed
  EXPECT_EQ(pool.bytes_pooled(), 2048);
  EXPECT_EQ(pool.bytes_held(), 2048);
  EXPECT_EQ(c.live.size(), 1u);
  EXPECT_EQ(pool.allocate(2000), a) << "the pooled block, reused";
  EXPECT_EQ(c.calls, 2);
}

TEST(CachingPool, MessagesNameTheDevice) {
  LimitedMemory::Counters c;
  CachingPool pool(std::make_unique<LimitedMemory>(1024, c), "cpu", "memory");
  try {
    pool.allocate(4096);
    ADD_FAILURE() << "allocated past the limit";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu: out of memory allocating 4096 bytes (0 bytes held)");
  }
  int on_stack = 0;
  try {
    pool.release(&on_stack);
    ADD_FAILURE() << "released a foreign pointer";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu: release of a pointer this backend did not allocate");
  }
}

}  // namespace
}  // namespace layerlab::backend
