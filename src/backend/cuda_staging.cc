#include "backend/cuda_staging.h"

#include <cstring>

#include "backend/cuda_check.h"

namespace layerlab::backend {

const void* HostArrays::send(Channel channel, const void* host, size_t bytes) {
  Sent& sent = sent_[channel];
  const auto* data = static_cast<const std::byte*>(host);
  if (sent.device && sent.bytes.size() == bytes && std::memcmp(sent.bytes.data(), data, bytes) == 0)
    return sent.device;
  if (sent.capacity < bytes) {
    pool_.release(sent.device);  // stream order: earlier kernels finish before it is reused
    sent.device = nullptr;
    sent.device = pool_.allocate(bytes);
    sent.capacity = CachingPool::size_class(bytes);
  }
  Slot& slot = slots_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kSlots;
  if (slot.done)
    LAYERLAB_CUDA_CHECK(cudaEventSynchronize(slot.done));
  else
    LAYERLAB_CUDA_CHECK(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming));
  if (slot.capacity < bytes) {
    if (slot.pinned) LAYERLAB_CUDA_CHECK(cudaFreeHost(slot.pinned));
    slot.pinned = nullptr;
    slot.capacity = 0;
    LAYERLAB_CUDA_CHECK(cudaMallocHost(&slot.pinned, bytes));
    slot.capacity = bytes;
  }
  std::memcpy(slot.pinned, data, bytes);
  LAYERLAB_CUDA_CHECK(
      cudaMemcpyAsync(sent.device, slot.pinned, bytes, cudaMemcpyHostToDevice, stream_));
  LAYERLAB_CUDA_CHECK(cudaEventRecord(slot.done, stream_));
  sent.bytes.assign(data, data + bytes);
  return sent.device;
}

HostArrays::~HostArrays() {
  // Errors cannot be reported from here; the backend synchronised its stream before.
  for (Slot& slot : slots_) {
    if (slot.done) (void)cudaEventDestroy(slot.done);
    if (slot.pinned) (void)cudaFreeHost(slot.pinned);
  }
  for (Sent& sent : sent_)
    if (sent.device) pool_.release(sent.device);
}

}  // namespace layerlab::backend
