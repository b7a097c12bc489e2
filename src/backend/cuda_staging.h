// HostArrays: the small host arrays some operations take (per-member step hyperparameters,
// dropout rates and seeds) copied to the device in stream order, without waiting for the
// device. The bytes pass through a ring of pinned buffers; a slot is rewritten only after the
// copy that last used it has finished (an event says so). An array equal to the one last sent
// on its channel is not sent again: with a constant learning rate a pack's hyperparameters
// cross the bus once.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "backend/caching_pool.h"

namespace layerlab::backend {

class HostArrays {
 public:
  enum Channel { kStepHyper, kDropoutRate, kDropoutSeed, kChannels };

  HostArrays(cudaStream_t stream, CachingPool& pool) : stream_(stream), pool_(pool) {}
  HostArrays(const HostArrays&) = delete;
  HostArrays& operator=(const HostArrays&) = delete;
  ~HostArrays();

  // A device copy of host[0, bytes), valid for work queued on the stream until the next
  // send() on the same channel.
  const void* send(Channel channel, const void* host, size_t bytes);

 private:
  struct Slot {
    void* pinned = nullptr;
    size_t capacity = 0;
    cudaEvent_t done = nullptr;
  };
  struct Sent {
    std::vector<std::byte> bytes;
    void* device = nullptr;
    size_t capacity = 0;
  };
  static constexpr size_t kSlots = 4;

  cudaStream_t stream_;
  CachingPool& pool_;
  std::array<Slot, kSlots> slots_{};
  size_t next_slot_ = 0;
  std::array<Sent, kChannels> sent_{};
};

}  // namespace layerlab::backend
