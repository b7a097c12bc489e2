#include "worker/heartbeat.h"

#include "common/error.h"

namespace layerlab::worker {

Heartbeat::Heartbeat(store::Store& store, std::string worker_id, std::chrono::milliseconds interval)
    : store_(store), id_(std::move(worker_id)), interval_(interval), thread_([this] { run(); }) {}

Heartbeat::~Heartbeat() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeat::run() {
  MutexLock lock(mu_);
  while (!wake_.wait_for(lock.native(), interval_, [this]() REQUIRES(mu_) { return stopping_; })) {
    lock.unlock();
    const int64_t current = current_;
    try {
      store_.heartbeat_worker(id_, current ? std::optional<int64_t>(current) : std::nullopt,
                              memory_);
    } catch (const std::exception&) {
      // The store is away (or the beat failed otherwise, out of memory included): the next
      // beat tries again and its age shows the gap meanwhile. An exception must not end
      // this thread, which would end the worker process.
    }
    lock.lock();
  }
}

}  // namespace layerlab::worker
