// CachingPool: the caching allocator behind each backend. Sizes are rounded up to size
// classes (a multiple of a quarter of the power of two below them, so at most 25% is
// wasted); released blocks go to a free list per class and are handed out again without
// asking the raw allocator, to a request of their class or of a class up to kLargestReuse
// times smaller (a sweep's trials come in many shapes). A CUDA backend runs all its work on one
// stream, so a block released while kernels still use it is only reused by work queued after them.
// On the CPU the point is the pages: a worker trains trial after trial with the same buffer sizes,
// and blocks freed back to the C library went back to the kernel, to be faulted in (and zeroed)
// again by the next trial: 50,000 page faults in a 64-trial study (docs/benchmarks.md).
// Everything goes back to the raw allocator when the pool goes, or when the raw allocator
// runs out (the free lists are emptied, then it retries once); a block released while the
// pool already holds max_pooled bytes for reuse goes back at once.
//
// It knows nothing of CUDA (RawMemory does the allocating), so it is built and tested on
// machines without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace layerlab::backend {

class RawMemory {
 public:
  virtual ~RawMemory() = default;
  // nullptr when out of memory; throws for other failures.
  virtual void* allocate(size_t bytes) = 0;
  virtual void free(void* p) noexcept = 0;
};

class CachingPool {
 public:
  static constexpr int64_t kUnlimited = INT64_MAX;
  // Messages say "<device>: out of <memory> ..." ("cuda" and "device memory", "cpu" and
  // "memory").
  CachingPool(std::unique_ptr<RawMemory> raw, std::string device, std::string memory,
              int64_t max_pooled = kUnlimited)
      : raw_(std::move(raw)),
        device_(std::move(device)),
        memory_(std::move(memory)),
        max_pooled_(max_pooled) {}
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;
  ~CachingPool();

  // Throws failed_precondition when the memory is exhausted even after trim().
  void* allocate(size_t bytes);
  // Throws invalid_argument for a pointer this pool did not hand out; nullptr is ignored.
  void release(void* p);
  // Gives every pooled (released) block back to the raw allocator.
  void trim();

  // Bytes the pool holds: blocks handed out plus blocks pooled for reuse.
  int64_t bytes_held() const { return held_; }
  int64_t bytes_pooled() const { return pooled_; }

  static size_t size_class(size_t bytes);
  // A pooled block serves a request of a smaller class when it is at most this many times
  // the request's class.
  static constexpr size_t kLargestReuse = 4;

 private:
  std::unique_ptr<RawMemory> raw_;
  const std::string device_;
  const std::string memory_;
  const int64_t max_pooled_;
  std::unordered_map<void*, size_t> live_;     // handed out: pointer -> class size
  std::map<size_t, std::vector<void*>> free_;  // class size -> released blocks
  int64_t held_ = 0;
  int64_t pooled_ = 0;
};

}  // namespace layerlab::backend
