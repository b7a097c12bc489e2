#include "backend/caching_pool.h"

#include <bit>
#include <string>

#include "common/error.h"

namespace layerlab::backend {

size_t CachingPool::size_class(size_t bytes) {
  constexpr size_t kSmallest = 512;
  if (bytes <= kSmallest) return kSmallest;
  // 2^top < bytes <= 2^(top+1): round up to a multiple of 2^(top-2).
  const int top = std::bit_width(bytes - 1) - 1;
  const size_t quarter = size_t{1} << (top - 2);
  return (bytes + quarter - 1) / quarter * quarter;
}

void* CachingPool::allocate(size_t bytes) {
  const size_t wanted = size_class(bytes);
  size_t size = wanted;
  void* p = nullptr;
  // A block of this class or, failing that, of the smallest class up to kLargestReuse times
  // larger: on the CPU, a fresh block's pages are faulted in and zeroed by the kernel, and
  // the trials of a study come in many shapes, each a little smaller than the last (the
  // largest are claimed first). The block keeps its own class.
  auto it = free_.lower_bound(wanted);
  while (it != free_.end() && it->first <= wanted * kLargestReuse && it->second.empty()) ++it;
  if (it != free_.end() && it->first <= wanted * kLargestReuse) {
    size = it->first;
    p = it->second.back();
    it->second.pop_back();
    pooled_ -= static_cast<int64_t>(size);
  } else {
    p = raw_->allocate(size);
    if (!p && pooled_ > 0) {
      trim();
      p = raw_->allocate(size);
    }
    if (!p)
      throw failed_precondition(device_ + ": out of " + memory_ + " allocating " +
                                std::to_string(size) + " bytes (" + std::to_string(held_) +
                                " bytes held)");
    held_ += static_cast<int64_t>(size);
  }
  live_.emplace(p, size);
  return p;
}

void CachingPool::release(void* p) {
  if (!p) return;
  auto it = live_.find(p);
  if (it == live_.end())
    throw invalid_argument(device_ + ": release of a pointer this backend did not allocate");
  const auto size = static_cast<int64_t>(it->second);
  if (pooled_ > max_pooled_ - size) {
    raw_->free(p);
    held_ -= size;
  } else {
    free_[it->second].push_back(p);
    pooled_ += size;
  }
  live_.erase(it);
}

void CachingPool::trim() {
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) raw_->free(p);
    const auto freed = static_cast<int64_t>(size * blocks.size());
    held_ -= freed;
    pooled_ -= freed;
    blocks.clear();
  }
}

CachingPool::~CachingPool() {
  trim();
  for (auto& [p, size] : live_) raw_->free(p);
}

}  // namespace layerlab::backend
