// DeviceBuffer<T>: memory owned by a Backend, released when the buffer goes.
#pragma once

#include <cstring>
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace layerlab::backend {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& b, size_t count) : backend_(&b), count_(count) {
    if (count_) data_ = static_cast<T*>(b.allocate(count_ * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) backend_->release(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }

  void upload(const T* host, size_t count, size_t offset = 0) {
    backend_->upload(data_ + offset, host, count * sizeof(T));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  std::vector<T> download() const {
    std::vector<T> out(count_);
    if (count_) backend_->download(out.data(), data_, count_ * sizeof(T));
    return out;
  }
  void zero() {
    if (count_) backend_->zero(data_, count_ * sizeof(T));
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
  }

  Backend* backend_ = nullptr;
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace layerlab::backend
